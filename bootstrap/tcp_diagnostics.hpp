// How the tcp bootstrap's errors name ranks, timeouts and a peer that went away, so rendezvous
// and routing report them in the same words.
#pragma once

#include <string>
#include <vector>

#include "tessera/bootstrap.hpp"
#include "tessera/error.hpp"

namespace tessera::detail {

// "3, 5, 9": the first eight ranks, then how many there are in all.
inline std::string rank_list(const std::vector<int>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) out += ", ";
    if (i == 8) return out + "... (" + std::to_string(ranks.size()) + " in all)";
    out += std::to_string(ranks[i]);
  }
  return out;
}

inline std::string ms_text(Timeout timeout) { return std::to_string(timeout.count()) + " ms"; }

// Error(peer_lost) from `rank`: `peer` closed its socket during `step`.
[[noreturn]] inline void throw_peer_lost(int rank, int peer, const std::string& step) {
  throw Error(ErrorCode::peer_lost, rank,
              "rank " + std::to_string(peer) + " closed its bootstrap connection during " + step);
}

}  // namespace tessera::detail
