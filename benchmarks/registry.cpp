#include "registry.hpp"

namespace tessera::bench {

void run_put(BenchEnv& env);         // bench_put.cpp
void run_signal(BenchEnv& env);      // bench_signal.cpp
void run_all_gather(BenchEnv& env);  // bench_all_gather.cpp
void run_all_reduce(BenchEnv& env);  // bench_all_reduce.cpp
void run_gemm(BenchEnv& env);        // bench_gemm.cpp
void run_moe(BenchEnv& env);         // bench_moe.cpp
void run_ag_gemm(BenchEnv& env);     // bench_ag_gemm.cpp
void run_gemm_rs(BenchEnv& env);     // bench_gemm_rs.cpp
void run_taxonomy(BenchEnv& env);    // bench_taxonomy.cpp
// Collectives on teams (issue 16, second slice): bench_collectives.cpp.
void run_reduce_scatter(BenchEnv& env);
void run_all_to_all(BenchEnv& env);
void run_broadcast(BenchEnv& env);
void run_shmem_put_rate(BenchEnv& env);  // bench_shmem_put_rate.cpp (issue 20)

const std::vector<Benchmark>& benchmarks() {
  static const std::vector<Benchmark> all = {
      {"put", "PE 0 puts a tile into PE 1's heap from 1 and several blocks; vs memcpy, MPI_Put",
       run_put, true},
      {"signal",
       "put_signal -> wait_until ping-pong, one-way latency; vs a raw cache-line ping-pong, "
       "MPI_Send/Recv",
       run_signal, true},
      {"all_gather",
       "ops::all_gather one-shot/ring/auto, 4 KiB ... 16 MiB per PE; vs memcpy of the received "
       "bytes, MPI_Allgather",
       run_all_gather},
      {"all_reduce",
       "ops::all_reduce f32 sum one_shot/two_shot/ring/atomic/auto, 4 B ... 16 MiB per PE; vs "
       "memcpy of the bytes a PE must move, MPI_Allreduce",
       run_all_reduce},
      {"gemm", "gemm_tile GFLOP/s on one core (fp32, bf16, tiled, portable); vs the BLAS's sgemm",
       run_gemm},
      {"ag_gemm",
       "allgather(A) x B fused (push, pull) vs all_gather + GEMM; vs the GEMM alone, MPI_Allgather "
       "+ GEMM",
       run_ag_gemm},
      {"gemm_rs",
       "reduce_scatter(A x B) fused vs GEMM + reduce-scatter; vs the GEMM alone, GEMM + "
       "MPI_Reduce_scatter_block",
       run_gemm_rs},
      {"taxonomy",
       "ag_gemm, gemm_rs, gemm_ar, gemm_as in every overlap pattern x push/pull x comm_blocks, and "
       "automatic; vs the GEMM alone, the MPI collective + GEMM",
       run_taxonomy},
      {"moe", "MoeBuffer dispatch/combine, bf16, k=8, E=8P; vs memcpy, MPI_Alltoallv", run_moe},
      // Collectives on teams (issue 16, second slice).
      {"reduce_scatter",
       "ops::reduce_scatter f32 sum one_shot/ring/auto, 4 B ... 64 MiB per PE; vs memcpy of the "
       "bytes a PE must receive, MPI_Reduce_scatter_block",
       run_reduce_scatter},
      {"all_to_all",
       "ops::all_to_all f32 push/in_place/auto, 4 B ... 64 MiB per PE; vs memcpy of the bytes a "
       "PE must receive, MPI_Alltoall",
       run_all_to_all},
      {"broadcast",
       "ops::broadcast f32 from rank 0 heap_send/private_send/in_place/auto, 4 B ... 64 MiB; vs "
       "memcpy of the "
       "message, MPI_Bcast",
       run_broadcast},
      {"shmem_put_rate",
       "OpenSHMEM message rate: windows of shmem_putmem/shmem_long_put of 8 ... 512 B to PE 1, "
       "then quiet; vs memcpy into PE 1's mapping, MPI_Put + MPI_Win_flush",
       run_shmem_put_rate, /*gpu=*/false, /*shmem=*/true},
  };
  return all;
}

const Benchmark* find_benchmark(std::string_view name) {
  for (const Benchmark& b : benchmarks()) {
    if (name == b.name) return &b;
  }
  return nullptr;
}

}  // namespace tessera::bench
