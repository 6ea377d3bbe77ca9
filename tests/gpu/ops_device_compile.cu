// Compile-only check that the fused ops' device building blocks (<tessera/device/ops/*.hpp>) and
// the stream-ordered host calls (<tessera/stream_rma.hpp>) are single-source, compiled for every
// CMAKE_CUDA_ARCHITECTURES entry. The ops' launchers (src/ops/*.cpp, nvcc-compiled in a CUDA
// build) instantiate each op's Block kernel with the host API's types; this file adds the rest:
// the tensor-core GEMM (bf16 and fp16 in a Block) and the portable loop (fp32, Thread and Warp
// groups), the ops' building blocks for Warp groups, a user epilogue, and the one-block kernels
// stream_rma.hpp launches on a GPU stream. One small kernel each: ptxas time grows fast with
// kernel size. Nothing here runs.
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "tessera/device.hpp"
#include "tessera/device/ops/ag_gemm.hpp"
#include "tessera/device/ops/all_gather.hpp"
#include "tessera/device/ops/all_reduce.hpp"
#include "tessera/device/ops/all_to_all.hpp"
#include "tessera/device/ops/broadcast.hpp"
#include "tessera/device/ops/gemm_rs.hpp"
#include "tessera/device/ops/gemm_tile.hpp"
#include "tessera/device/ops/reduce_scatter.hpp"
#include "tessera/stream_rma.hpp"

namespace tessera::ops_device_compile {

namespace td = tessera::device;
namespace tdo = tessera::device::ops;

template <class G>
TESSERA_KERNEL_CODE G make_group() {
  if constexpr (std::is_same_v<G, td::Block>) {
    return td::Block(static_cast<int>(blockIdx.x), static_cast<int>(gridDim.x));
  } else {
    return G{};
  }
}

template <class G, class T>
__global__ void gemm_tile_kernel(td::Tile<float> c, td::Tile<const T> a, td::Tile<const T> b,
                                 bool accumulate) {
  tdo::gemm_tile(make_group<G>(), c, a, b, accumulate);
}

template <class G>
__global__ void all_gather_oneshot_kernel(td::Context ctx, void* recv, const void* send,
                                          std::size_t bytes, tdo::AllGatherSignals sigs,
                                          std::uint64_t call) {
  tdo::all_gather_oneshot(make_group<G>(), ctx, recv, send, bytes, sigs, call);
}

template <class G>
__global__ void all_gather_ring_kernel(td::Context ctx, void* recv, const void* send,
                                       std::size_t bytes, tdo::AllGatherSignals sigs,
                                       std::uint64_t call) {
  tdo::all_gather_ring(make_group<G>(), ctx, recv, send, bytes, 4096, sigs, call);
}

template <class G, class T>
__global__ void all_reduce_kernel(td::Context ctx, td::Team team, tdo::AllReduceWorkspace ws,
                                  T* out, const T* in, std::size_t count, tdo::ReduceOp op,
                                  std::uint64_t first_epoch) {
  tdo::all_reduce_one_shot(make_group<G>(), ctx, team, ws, out, in, count, op, first_epoch);
  tdo::all_reduce_two_shot(make_group<G>(), ctx, team, ws, out, in, count, op, first_epoch);
  tdo::all_reduce_ring(make_group<G>(), ctx, team, ws, out, in, count, op, first_epoch);
}

template <class G, class T>
__global__ void all_reduce_atomic_kernel(td::Context ctx, td::Team team, tdo::AllReduceWorkspace ws,
                                         T* out, const T* in, std::size_t count,
                                         std::uint64_t first_epoch) {
  tdo::all_reduce_atomic(make_group<G>(), ctx, team, ws, out, in, count, first_epoch);
}

// A user epilogue, as examples/ag_gemm_epilogue.cpp writes one: bias + ReLU on each C tile.
struct BiasRelu {
  const float* bias;
  template <class G>
  TESSERA_KERNEL_CODE void operator()(G g, td::Tile<float> c, std::size_t, std::size_t col0) const {
    for (std::size_t i = static_cast<std::size_t>(g.rank()); i < c.rows * c.cols;
         i += static_cast<std::size_t>(g.size())) {
      float& v = c.row(i / c.cols)[i % c.cols];
      const float x = v + bias[col0 + i % c.cols];
      v = x > 0.0f ? x : 0.0f;
    }
    g.sync();
  }
};

template <class G, class T>
__global__ void ag_gemm_compute_kernel(td::Context ctx, tdo::AgGemmArgs<T, T> args,
                                       const float* bias) {
  tdo::ag_gemm_compute(make_group<G>(), ctx, args, 0, BiasRelu{bias});
}

template <class G, class T>
__global__ void ag_gemm_communicate_kernel(td::Context ctx, tdo::AgGemmArgs<T, T> args) {
  tdo::ag_gemm_communicate(make_group<G>(), ctx, args, 0, 1);
}

template <class G, class T>
__global__ void gemm_rs_kernel(td::Context ctx, tdo::GemmRsArgs<T, T> args) {
  tdo::gemm_rs(make_group<G>(), ctx, args, 0);
}

// Block kernels of every op with the host API's types are instantiated by src/ops/*.cpp (moe
// included); here: the GEMM engine's other paths and the ops' Warp-group instantiations.
template __global__ void gemm_tile_kernel<td::Block, td::bf16>(td::Tile<float>,
                                                               td::Tile<const td::bf16>,
                                                               td::Tile<const td::bf16>, bool);
template __global__ void gemm_tile_kernel<td::Block, td::half>(td::Tile<float>,
                                                               td::Tile<const td::half>,
                                                               td::Tile<const td::half>, bool);
template __global__ void gemm_tile_kernel<td::Block, float>(td::Tile<float>, td::Tile<const float>,
                                                            td::Tile<const float>, bool);
template __global__ void gemm_tile_kernel<td::Warp, td::bf16>(td::Tile<float>,
                                                              td::Tile<const td::bf16>,
                                                              td::Tile<const td::bf16>, bool);
template __global__ void gemm_tile_kernel<td::Thread, float>(td::Tile<float>, td::Tile<const float>,
                                                             td::Tile<const float>, bool);

template __global__ void all_gather_oneshot_kernel<td::Warp>(td::Context, void*, const void*,
                                                             std::size_t, tdo::AllGatherSignals,
                                                             std::uint64_t);
template __global__ void all_gather_ring_kernel<td::Warp>(td::Context, void*, const void*,
                                                          std::size_t, tdo::AllGatherSignals,
                                                          std::uint64_t);
template __global__ void all_reduce_kernel<td::Warp, td::half>(td::Context, td::Team,
                                                               tdo::AllReduceWorkspace, td::half*,
                                                               const td::half*, std::size_t,
                                                               tdo::ReduceOp, std::uint64_t);
template __global__ void all_reduce_atomic_kernel<td::Warp, float>(td::Context, td::Team,
                                                                   tdo::AllReduceWorkspace, float*,
                                                                   const float*, std::size_t,
                                                                   std::uint64_t);
template __global__ void ag_gemm_compute_kernel<td::Block, td::bf16>(
    td::Context, tdo::AgGemmArgs<td::bf16, td::bf16>, const float*);
template __global__ void ag_gemm_communicate_kernel<td::Warp, float>(td::Context,
                                                                     tdo::AgGemmArgs<float, float>);
template __global__ void gemm_rs_kernel<td::Warp, td::bf16>(td::Context,
                                                            tdo::GemmRsArgs<td::bf16, td::bf16>);

// The stream-ordered host calls: on a GPU stream each launches a one-block kernel.
void stream_calls(Stream& s, const td::Context& ctx, float* f, std::uint8_t* bytes, td::bf16* h,
                  std::uint64_t* sig) {
  put_on_stream(s, ctx, td::make_tile(f, 4, 4), td::make_tile<const float>(f + 16, 4, 4), 0);
  get_on_stream(s, ctx, td::make_tile(bytes, 64), td::make_tile<const std::uint8_t>(bytes, 64), 1);
  put_signal_on_stream(s, ctx, td::make_tile(h, 8), td::make_tile<const td::bf16>(h + 8, 8), sig, 1,
                       td::SignalOp::set, 1);
  signal_on_stream(s, ctx, sig, 1, td::SignalOp::add, 0);
  wait_until_on_stream(s, ctx, sig, td::Cmp::ge, 1);
  quiet_on_stream(s, ctx);
  barrier_on_stream(s, ctx);
}

// ---- Collectives on teams (issue 16, second slice: H-coll): reduce_scatter, all_to_all(_v) and
// broadcast in Warp groups (src/ops/*.cpp instantiates their Block kernels).
template <class G, class T>
__global__ void reduce_scatter_kernel(td::Context ctx, td::Team team, tdo::AllReduceWorkspace ws,
                                      T* out, const T* in, std::size_t count, tdo::ReduceOp op,
                                      std::uint64_t first_epoch) {
  tdo::reduce_scatter_one_shot(make_group<G>(), ctx, team, ws, out, in, count, op, first_epoch);
  tdo::reduce_scatter_ring(make_group<G>(), ctx, team, ws, out, in, count, op, first_epoch);
}

template <class G, class T>
__global__ void all_to_all_kernel(td::Context ctx, td::Team team, tdo::AllReduceWorkspace ws,
                                  T* out, const T* in, std::size_t count, std::uint64_t epoch) {
  tdo::all_to_all(make_group<G>(), ctx, team, ws, out, in, count, epoch);
}

template <class G, class T>
__global__ void all_to_all_v_kernel(td::Context ctx, td::Team team, tdo::AllReduceWorkspace ws,
                                    T* out, std::size_t capacity, const T* in,
                                    const std::size_t* send_counts, std::size_t* recv_counts,
                                    std::size_t* recv_offsets, std::uint64_t epoch) {
  tdo::all_to_all_v(make_group<G>(), ctx, team, ws, out, capacity, in, send_counts, recv_counts,
                    recv_offsets, epoch);
}

template <class G, class T>
__global__ void broadcast_kernel(td::Context ctx, td::Team team, tdo::AllReduceWorkspace ws, T* out,
                                 const T* in, std::size_t count, int root, std::uint64_t epoch) {
  tdo::broadcast(make_group<G>(), ctx, team, ws, out, in, count, root, epoch);
}

template __global__ void reduce_scatter_kernel<td::Warp, td::bf16>(td::Context, td::Team,
                                                                   tdo::AllReduceWorkspace,
                                                                   td::bf16*, const td::bf16*,
                                                                   std::size_t, tdo::ReduceOp,
                                                                   std::uint64_t);
template __global__ void all_to_all_kernel<td::Warp, std::int64_t>(td::Context, td::Team,
                                                                   tdo::AllReduceWorkspace,
                                                                   std::int64_t*,
                                                                   const std::int64_t*, std::size_t,
                                                                   std::uint64_t);
template __global__ void all_to_all_v_kernel<td::Warp, float>(td::Context, td::Team,
                                                              tdo::AllReduceWorkspace, float*,
                                                              std::size_t, const float*,
                                                              const std::size_t*, std::size_t*,
                                                              std::size_t*, std::uint64_t);
template __global__ void broadcast_kernel<td::Warp, td::half>(td::Context, td::Team,
                                                              tdo::AllReduceWorkspace, td::half*,
                                                              const td::half*, std::size_t, int,
                                                              std::uint64_t);

}  // namespace tessera::ops_device_compile

// --- Issue 16, fused ops and the overlap taxonomy (H-fused): the pattern roles of gemm_ar /
// gemm_as (and gemm_rs's patterns, which run gemm_ar's blocks), ag_gemm's fused-sequential block,
// the bulk-synchronous pieces and all_reduce_rmsnorm. The launchers instantiate the Block roles
// with the host types; here the Warp roles, the one-kernel entry points and the norm.
#include "tessera/device/ops/gemm_ar.hpp"
#include "tessera/device/ops/gemm_as.hpp"
#include "tessera/device/ops/overlap.hpp"
#include "tessera/device/ops/rmsnorm.hpp"

namespace tessera::ops_device_compile_fused {

namespace td = tessera::device;
namespace tdo = tessera::device::ops;

template <class Op>
__global__ void overlap_roles_kernel(td::Context ctx, Op op) {
  tdo::overlap_compute(td::Warp{}, ctx, op, 0, 1);
  tdo::overlap_communicate(td::Warp{}, ctx, op, 0, 1);
  tdo::overlap_fused(td::Warp{}, ctx, op, 0, 1);
}

template <class T>
__global__ void gemm_ar_kernel(td::Context ctx, tdo::GemmArArgs<T, T> args, int comm_blocks) {
  tdo::gemm_ar(td::Block(static_cast<int>(blockIdx.x), static_cast<int>(gridDim.x)), ctx, args,
               comm_blocks);
}

template <class T>
__global__ void gemm_as_kernel(td::Context ctx, tdo::GemmAsArgs<T, T> args, int comm_blocks) {
  tdo::gemm_as(td::Block(static_cast<int>(blockIdx.x), static_cast<int>(gridDim.x)), ctx, args,
               comm_blocks);
}

template <class T>
__global__ void ag_gemm_fused_kernel(td::Context ctx, tdo::AgGemmArgs<T, T> args) {
  tdo::ag_gemm_fused(td::Block(static_cast<int>(blockIdx.x), static_cast<int>(gridDim.x)), ctx,
                     args);
}

__global__ void bulk_pieces_kernel(td::Tile<float> c, td::Tile<const td::bf16> a,
                                   td::Tile<const td::bf16> b, const float* gathered) {
  tdo::gemm_tiles(td::Warp{}, c, a, b, 16, 16, 0, 1);
  tdo::gather_columns(td::Warp{}, c, gathered, 2, 8, 0, 1);
}

template <class T>
__global__ void rmsnorm_kernel(td::Context ctx, tdo::AllReduceRmsnormArgs<T> args, T* y,
                               const T* sum) {
  tdo::rmsnorm_rows(td::Warp{}, y, sum, args.residual, args.weight, args.hidden, args.eps, 0, 1);
  tdo::all_reduce_rmsnorm(td::Block(static_cast<int>(blockIdx.x), static_cast<int>(gridDim.x)), ctx,
                          args);
}

template __global__ void overlap_roles_kernel<tdo::GemmArArgs<td::bf16, td::bf16>>(
    td::Context, tdo::GemmArArgs<td::bf16, td::bf16>);
template __global__ void overlap_roles_kernel<tdo::GemmAsArgs<float, float>>(
    td::Context, tdo::GemmAsArgs<float, float>);
template __global__ void gemm_ar_kernel<float>(td::Context, tdo::GemmArArgs<float, float>, int);
template __global__ void gemm_as_kernel<td::bf16>(td::Context, tdo::GemmAsArgs<td::bf16, td::bf16>,
                                                  int);
template __global__ void ag_gemm_fused_kernel<td::bf16>(td::Context,
                                                        tdo::AgGemmArgs<td::bf16, td::bf16>);
template __global__ void rmsnorm_kernel<td::half>(td::Context, tdo::AllReduceRmsnormArgs<td::half>,
                                                  td::half*, const td::half*);
template __global__ void rmsnorm_kernel<float>(td::Context, tdo::AllReduceRmsnormArgs<float>,
                                               float*, const float*);

}  // namespace tessera::ops_device_compile_fused
