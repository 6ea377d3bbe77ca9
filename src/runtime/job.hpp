// Job formation: at init every PE tells the others who it is and what it was asked for, so each
// learns where every PE runs (nodes, numbered in order of their first PE) and which peers it can
// watch, and all stop together when they were started inconsistently. Internal.
#pragma once

#include <string>
#include <vector>

#include "runtime/peer_watch.hpp"
#include "tessera/bootstrap.hpp"
#include "tessera/runtime.hpp"

namespace tessera::detail {

// Where every PE of the job runs, as this PE learned it.
struct JobLayout {
  int pe = 0;
  int n_pes = 1;
  std::string node_id;        // this PE's node name (Options::node_id, else the host name)
  int node = 0;               // index of this PE's node
  int node_pe = 0;            // this PE's index among its node's PEs
  std::vector<int> node_pes;  // the PEs of this PE's node, ascending, this PE included
  std::vector<int> node_of_pe;
  std::vector<std::string> node_names;  // by node index
  // The PEs that are other processes of this machine (same boot, same pid namespace): the ones
  // a PeerWatch can see end.
  std::vector<PeerWatch::Peer> watchable;
};

// Collective over `bootstrap`. Throws, on every PE, naming the PEs by what each chose:
// Error(invalid_argument) when PEs disagree on the heap size or on mapping peers (TESSERA_P2P),
// Error(backend) when they chose different backends; Error(invalid_argument) on this PE alone
// when its node id is too long to send.
JobLayout form_job(Bootstrap& bootstrap, const Options& options, Backend backend);

}  // namespace tessera::detail
