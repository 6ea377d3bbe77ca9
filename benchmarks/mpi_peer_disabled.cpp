// The peer without MPI: every measurement is unavailable.
#include "mpi_peer.hpp"

namespace tessera::bench::peer {
namespace {
constexpr const char* kReason = "unavailable: tessera-bench was built without MPI";
}

std::string unavailable_reason(int, int) { return kReason; }

PeerTimes put(int, int, std::size_t, int, int) { return {{}, kReason}; }

PeerTimes put_rate(int, int, std::size_t, int, int, int) { return {{}, kReason}; }

PeerTimes pingpong(int, int, std::size_t, int, int) { return {{}, kReason}; }

PeerTimes allgather(int, int, std::size_t, int, int) { return {{}, kReason}; }

PeerTimes allreduce(int, int, std::size_t, int, int) { return {{}, kReason}; }

PeerTimes allgather_then_gemm(int, int, const void*, void*, std::size_t,
                              const std::function<void()>&, int, int, bool) {
  return {{}, kReason};
}

PeerTimes gemm_then_reduce_scatter(int, int, const std::function<void()>&, const float*, float*,
                                   std::size_t, int, int, bool) {
  return {{}, kReason};
}

PeerTimes gemm_then_allreduce(int, int, const std::function<void()>&, const float*, float*,
                              std::size_t, int, int, bool) {
  return {{}, kReason};
}

PeerTimes gemm_then_allgather_columns(int, int, const std::function<void()>&, const float*, float*,
                                      std::size_t, std::size_t, int, int, bool) {
  return {{}, kReason};
}

MoePeerTimes moe(int, int, const void*, const std::vector<std::vector<int>>&, const MoeRouting&,
                 std::size_t, std::size_t, int, int) {
  return {{{}, kReason}, {{}, kReason}, {{}, kReason}, {}};
}

}  // namespace tessera::bench::peer

// ---- Collectives on teams (issue 16, second slice).
namespace tessera::bench::peer {

PeerTimes reduce_scatter_block(int, int, std::size_t, int, int) {
  return {{}, "unavailable: tessera-bench was built without MPI"};
}

PeerTimes alltoall(int, int, std::size_t, int, int) {
  return {{}, "unavailable: tessera-bench was built without MPI"};
}

PeerTimes bcast(int, int, std::size_t, int, int) {
  return {{}, "unavailable: tessera-bench was built without MPI"};
}

}  // namespace tessera::bench::peer
