// The tcp bootstrap's rendezvous: how the ranks of a job find each other and form a full mesh.
// Rank 0 collects every rank's HELLO (token, rank, size, listen port) and answers with the address
// table; then each lower rank connects to each higher rank's listener, so every pair shares
// exactly one socket, authenticated by the job's token.
#pragma once

#include <vector>

#include "fd.hpp"
#include "tessera/bootstrap.hpp"

namespace tessera::detail {

// One connected socket per rank (the entry of `rank` itself stays invalid), formed within
// `timeout` (0: no bound). Throws Error(timeout) naming the ranks that did not join,
// Error(peer_lost) when one closes its socket, Error(bootstrap) when the job is inconsistent
// (another size, a rank claimed twice).
std::vector<Fd> form_tcp_mesh(const UniqueId& id, int rank, int size, Timeout timeout);

}  // namespace tessera::detail
