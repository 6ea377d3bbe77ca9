// The peer tessera-bench compares against: MPI, measured between the same processes as tessera.
// Implemented in mpi_peer.cpp (the one benchmark file that includes <mpi.h>) when Tessera is
// built with MPI, else in mpi_peer_disabled.cpp. Every function is collective over all PEs,
// called in the same order on each; PEs other than 0 and 1 only wait (sleeping, not spinning).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tessera::bench::peer {

// Per-iteration times of PE 0 (empty on other PEs), or why the peer could not be measured.
struct PeerTimes {
  std::vector<double> us;
  std::string unavailable;  // non-empty: the reason, and `us` is empty on every PE
};

// Empty when MPI can be used between these PEs (MPI initialized by the launcher's bootstrap,
// world rank == PE); otherwise why not ("built without MPI", "not launched under mpirun", ...).
std::string unavailable_reason(int pe, int n_pes);

// MPI_Put of `bytes` from PE 0 into PE 1's part of an MPI shared-memory window
// (MPI_Win_allocate_shared on the node communicator; passive target: MPI_Win_lock_all once,
// then MPI_Put + MPI_Win_flush per iteration). `warmup` untimed iterations first.
PeerTimes put(int pe, int n_pes, std::size_t bytes, int warmup, int iters);

// Message rate (tessera-bench shmem_put_rate): on the window of put(), `window` MPI_Puts of
// `bytes` from PE 0 into successive slots of PE 1's part, then one MPI_Win_flush; each sample is
// one such window (divide by `window` for the time per put).
PeerTimes put_rate(int pe, int n_pes, std::size_t bytes, int window, int warmup, int iters);

// MPI_Send/MPI_Recv ping-pong of `bytes` between PE 0 and PE 1; each sample is one round trip
// divided by two (one-way latency).
PeerTimes pingpong(int pe, int n_pes, std::size_t bytes, int warmup, int iters);

// MPI_Allgather of `bytes_per_pe` bytes per rank over MPI_COMM_WORLD; each sample is one call on
// PE 0, all ranks having left an MPI_Barrier just before it.
PeerTimes allgather(int pe, int n_pes, std::size_t bytes_per_pe, int warmup, int iters);

// MPI_Allreduce (MPI_SUM) of `count` floats per rank over MPI_COMM_WORLD, out of place; sampled
// as allgather.
PeerTimes allreduce(int pe, int n_pes, std::size_t count, int warmup, int iters);

// Unfused all-gather + GEMM: MPI_Allgather of `bytes_per_pe` bytes from `send` into `recv`
// (n_pes * bytes_per_pe), then gemm() (the caller's GEMM on recv, run to completion). Each sample
// is one such pair on PE 0, all ranks having left a barrier just before it.
// until_all_done: each sample ends when every rank has finished (an idle barrier inside the timed
// region) instead of when PE 0 has, as tessera-bench taxonomy times every variant.
PeerTimes allgather_then_gemm(int pe, int n_pes, const void* send, void* recv,
                              std::size_t bytes_per_pe, const std::function<void()>& gemm,
                              int warmup, int iters, bool until_all_done = false);

// Unfused GEMM + reduce-scatter: gemm() (the caller's GEMM into `partial`, n_pes * count_per_pe
// floats), then MPI_Reduce_scatter_block summing `count_per_pe` floats per rank into `recv`.
// Sampled as allgather_then_gemm.
PeerTimes gemm_then_reduce_scatter(int pe, int n_pes, const std::function<void()>& gemm,
                                   const float* partial, float* recv, std::size_t count_per_pe,
                                   int warmup, int iters, bool until_all_done = false);

// Unfused GEMM + all-reduce (taxonomy's gemm_ar baseline): gemm() (the caller's GEMM into
// `partial`, count floats), then MPI_Allreduce (MPI_SUM) of `partial` into `out`. Sampled as
// allgather_then_gemm.
PeerTimes gemm_then_allreduce(int pe, int n_pes, const std::function<void()>& gemm,
                              const float* partial, float* out, std::size_t count, int warmup,
                              int iters, bool until_all_done = false);

// Unfused GEMM + all-gather of column blocks (taxonomy's gemm_as baseline): gemm() (the caller's
// GEMM into `block`, rows x cols_per_pe floats, dense), then MPI_Allgather of the block into
// column block `rank` of the row-major rows x (n_pes * cols_per_pe) matrix `c` (the receive side
// a strided MPI vector type, so C lands in its final layout). Sampled as allgather_then_gemm.
PeerTimes gemm_then_allgather_columns(int pe, int n_pes, const std::function<void()>& gemm,
                                      const float* block, float* c, std::size_t rows,
                                      std::size_t cols_per_pe, int warmup, int iters,
                                      bool until_all_done = false);

// MoE dispatch + combine with MPI, producing what ops::MoeBuffer produces, bf16 rows of
// `row_bytes`. Dispatch permutes this PE's tokens x[tokens] by destination PE (rows_to_pe[q]: the
// tokens for PE q, each once per PE), each row followed by its routing on that PE (the local
// expert and weight of every top-k slot; topk_idx[tokens * topk], weights likewise, experts
// numbered PE-major with experts_per_pe per PE), exchanges the counts with MPI_Alltoall and the
// records with MPI_Alltoallv, then copies each received row into the rows of each of its local
// experts (expert-major, as the op's expert_x). Combine, with identity experts (expert_out =
// expert_x, as the benchmark passes the op): per received token the fp32 sum of weight x expert
// row over its local experts, rounded to bf16, sent back with MPI_Alltoallv, and summed per token
// in fp32 into y. Times of dispatch alone, combine alone (after an untimed dispatch) and both in a
// row, each after a barrier.
struct MoePeerTimes {
  PeerTimes dispatch, combine, both;
  std::vector<std::uint16_t> y;  // the last combine's result (bf16 bits), to check against the op
};
struct MoeRouting {
  const std::int32_t* topk_idx = nullptr;
  const float* weights = nullptr;
  int topk = 1;
  int experts_per_pe = 1;
};
MoePeerTimes moe(int pe, int n_pes, const void* x, const std::vector<std::vector<int>>& rows_to_pe,
                 const MoeRouting& routing, std::size_t tokens, std::size_t row_bytes, int warmup,
                 int iters);

}  // namespace tessera::bench::peer

// ---- Collectives on teams (issue 16, second slice): peers of tessera-bench reduce_scatter,
// all_to_all and broadcast, each sampled as allgather (one call on PE 0 after an MPI_Barrier).
namespace tessera::bench::peer {

// MPI_Reduce_scatter_block (MPI_FLOAT, MPI_SUM) of n_pes * count floats per rank, count per rank.
PeerTimes reduce_scatter_block(int pe, int n_pes, std::size_t count, int warmup, int iters);

// MPI_Alltoall of `bytes_per_peer` bytes for each rank (n_pes blocks per rank).
PeerTimes alltoall(int pe, int n_pes, std::size_t bytes_per_peer, int warmup, int iters);

// MPI_Bcast of `bytes` from rank 0.
PeerTimes bcast(int pe, int n_pes, std::size_t bytes, int warmup, int iters);

}  // namespace tessera::bench::peer
