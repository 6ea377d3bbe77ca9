// The tile GEMM engine the fused ops are made of: C (+)= A * B on tiles, fp32 accumulation.
// Inputs are float, bf16 or fp16 (widened to fp32); C is float. Row-major tiles with leading
// dimensions. All threads of the group call together and share the work. One text for every
// backend; which engine runs is chosen at compile time from platform.hpp's constants:
//   host backend        the host BLAS when one is loaded (OpenBLAS or BLIS, ops/impl/host_blas.hpp;
//                       one single-threaded cblas_sgemm per group member's stripe of rows, bf16
//                       through sbgemm or widened to fp32), else a packed, register-blocked
//                       micro-kernel (gemm_tile_blocked; TESSERA_BLAS=none forces it);
//   CUDA, sm_80+        tensor cores (wmma) for a Block multiplying bf16 x bf16 or fp16 x fp16
//                       (gemm_tile_mma); fp32 inputs and Thread/Warp groups take the portable loop;
//   other GPU passes    the portable loop (gemm_tile_rows).
#pragma once

#include "tessera/device/group.hpp"
#include "tessera/device/numeric.hpp"
#include "tessera/device/platform.hpp"
#include "tessera/device/tile.hpp"

namespace tessera::device::ops {

// The conversions the ops widen and narrow with (tessera/device/numeric.hpp), under the names
// callers of the ops have used.
using device::to_bf16;
using device::to_float;

// C = A * B (accumulate = false) or C += A * B (accumulate = true), with A m x k, B k x n and
// C m x n (m = c.rows, n = c.cols, k = a.cols; a.rows == m, b.rows == k, b.cols == n). Reads
// only A and B, writes only C; nothing is made visible to other PEs. Host: the BLAS (above), or
// without one a packed, register-blocked kernel (6 x 16 fp32 accumulators over 256-deep k panels,
// bf16 widened while packing); compile the caller with the target's vector ISA (-march) to get FMA
// and 8-lane vectors. CUDA (sm_80+), G = Block of at least 8 warps, TA = TB = bf16 or half: tensor
// cores, 64 x 64 block tiles staged through 27 KiB of shared memory. Elsewhere on GPUs: the
// portable loop.
template <class G, class TA, class TB>
TESSERA_KERNEL_CODE void gemm_tile(G g, Tile<float> c, Tile<const TA> a, Tile<const TB> b,
                                   bool accumulate);

}  // namespace tessera::device::ops

#include "tessera/device/ops/impl/gemm_tile_funcs.hpp"
