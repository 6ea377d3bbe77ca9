// Hands the heap memfds of a node's PEs to each other over Unix sockets (SCM_RIGHTS). The
// sockets live in a private 0700 directory that exists only while the exchange runs.
#pragma once

#include <vector>

#include "heap/memfd.hpp"
#include "tessera/bootstrap.hpp"

namespace tessera::detail {

// Collective over the whole bootstrap (every rank calls it). `node_pes` lists the global ranks
// on this PE's node in ascending order, this PE included. Returns one Fd per entry of
// node_pes; the entry for this PE is empty.
std::vector<Fd> exchange_node_fds(Bootstrap& boot, const std::vector<int>& node_pes, int my_fd,
                                  Timeout timeout);

}  // namespace tessera::detail
