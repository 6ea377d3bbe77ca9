// Bodies of ops/gemm_tile.hpp.
#pragma once

#include <cstddef>
#include <type_traits>

#include "tessera/device/numeric.hpp"
#include "tessera/device/ops/gemm_tile.hpp"
#include "tessera/device/ops/impl/host_blas.hpp"
#include "tessera/device/platform.hpp"

namespace tessera::device::ops {

namespace detail {

// The portable loop: rows of C shared out over the group; within a row, an i-k-j loop streams
// B's rows.
template <class G, class TA, class TB>
TESSERA_KERNEL_CODE void gemm_tile_rows(G g, Tile<float> c, Tile<const TA> a, Tile<const TB> b,
                                        bool accumulate) {
  const std::size_t m = c.rows, n = c.cols, k = a.cols;
  for (std::size_t i = static_cast<std::size_t>(g.rank()); i < m;
       i += static_cast<std::size_t>(g.size())) {
    float* crow = c.row(i);
    if (!accumulate) {
      for (std::size_t j = 0; j < n; ++j) crow[j] = 0.0f;
    }
    const TA* arow = a.row(i);
    for (std::size_t p = 0; p < k; ++p) {
      const float av = to_float(arow[p]);
      const TB* brow = b.row(p);
      for (std::size_t j = 0; j < n; ++j) crow[j] += av * to_float(brow[j]);
    }
  }
}

// Blocking of the host kernel: an MR x NR block of C lives in registers (12 AVX2 registers),
// a KC x NR sliver of packed B (16 KiB) in L1, an MC x KC block of packed A in L2 and a KC x NC
// panel of packed B in L2/L3.
inline constexpr std::size_t kGemmMr = 6;
inline constexpr std::size_t kGemmNr = 16;
inline constexpr std::size_t kGemmKc = 256;
inline constexpr std::size_t kGemmMc = 96;
inline constexpr std::size_t kGemmNc = 1024;

// Packing buffers of the calling thread, grown on demand and kept for its next call.
struct GemmScratch {
  float* a = nullptr;
  float* b = nullptr;
  std::size_t a_size = 0, b_size = 0;
  ~GemmScratch() {
    delete[] a;
    delete[] b;
  }
  static float* grow(float*& p, std::size_t& size, std::size_t want) {
    if (size < want) {
      delete[] p;
      p = new float[want];
      size = want;
    }
    return p;
  }
};

inline GemmScratch& gemm_scratch() {
  static thread_local GemmScratch scratch;
  return scratch;
}

// Packs B[p0 : p0 + kc, j0 : j0 + nc] as ceil(nc / NR) slivers of kc x NR floats, zero-padded.
template <class TB>
inline void pack_b(float* TESSERA_RESTRICT dst, Tile<const TB> b, std::size_t p0, std::size_t kc,
                   std::size_t j0, std::size_t nc) {
  for (std::size_t jr = 0; jr < nc; jr += kGemmNr) {
    const std::size_t nr = nc - jr < kGemmNr ? nc - jr : kGemmNr;
    for (std::size_t p = 0; p < kc; ++p) {
      const TB* src = b.row(p0 + p) + j0 + jr;
      float* out = dst + p * kGemmNr;
      if (nr == kGemmNr) {
        for (std::size_t j = 0; j < kGemmNr; ++j) out[j] = to_float(src[j]);
      } else {
        for (std::size_t j = 0; j < kGemmNr; ++j) out[j] = j < nr ? to_float(src[j]) : 0.0f;
      }
    }
    dst += kc * kGemmNr;
  }
}

// Packs A[i0 : i0 + mc, p0 : p0 + kc] as ceil(mc / MR) slivers of kc x MR floats, zero-padded.
template <class TA>
inline void pack_a(float* TESSERA_RESTRICT dst, Tile<const TA> a, std::size_t i0, std::size_t mc,
                   std::size_t p0, std::size_t kc) {
  for (std::size_t ir = 0; ir < mc; ir += kGemmMr) {
    const std::size_t mr = mc - ir < kGemmMr ? mc - ir : kGemmMr;
    for (std::size_t i = 0; i < kGemmMr; ++i) {
      if (i < mr) {
        const TA* src = a.row(i0 + ir + i) + p0;
        for (std::size_t p = 0; p < kc; ++p) dst[p * kGemmMr + i] = to_float(src[p]);
      } else {
        for (std::size_t p = 0; p < kc; ++p) dst[p * kGemmMr + i] = 0.0f;
      }
    }
    dst += kc * kGemmMr;
  }
}

// C[0 : mr, 0 : nr] (+)= Ap * Bp over kc: MR x NR accumulators, written back clipped to mr x nr.
TESSERA_NO_LOOP_VECTORIZE inline void gemm_micro(std::size_t kc, const float* TESSERA_RESTRICT ap,
                                                 const float* TESSERA_RESTRICT bp, float* c,
                                                 std::size_t ldc, std::size_t mr, std::size_t nr,
                                                 bool load_c) {
  // Six named rows, each touched only by the one j loop, so the compiler vectorises that loop
  // and keeps all 96 accumulators in registers (12 AVX2 / 24 SSE registers).
  static_assert(kGemmMr == 6, "the micro-kernel names its six rows");
  float acc0[kGemmNr] = {}, acc1[kGemmNr] = {}, acc2[kGemmNr] = {};
  float acc3[kGemmNr] = {}, acc4[kGemmNr] = {}, acc5[kGemmNr] = {};
  for (std::size_t p = 0; p < kc; ++p) {
    const float* TESSERA_RESTRICT brow = bp + p * kGemmNr;
    const float* TESSERA_RESTRICT acol = ap + p * kGemmMr;
    const float a0 = acol[0], a1 = acol[1], a2 = acol[2], a3 = acol[3], a4 = acol[4], a5 = acol[5];
    // Two half-width loops: each vectorises to one AVX2 iteration, after which the
    // accumulators have fixed addresses and are promoted to registers across the k loop.
    constexpr std::size_t kHalf = kGemmNr / 2;
    for (std::size_t j = 0; j < kHalf; ++j) {
      const float bl = brow[j], bh = brow[j + kHalf];
      acc0[j] += a0 * bl;
      acc0[j + kHalf] += a0 * bh;
      acc1[j] += a1 * bl;
      acc1[j + kHalf] += a1 * bh;
      acc2[j] += a2 * bl;
      acc2[j + kHalf] += a2 * bh;
      acc3[j] += a3 * bl;
      acc3[j + kHalf] += a3 * bh;
      acc4[j] += a4 * bl;
      acc4[j + kHalf] += a4 * bh;
      acc5[j] += a5 * bl;
      acc5[j + kHalf] += a5 * bh;
    }
  }
  const float* const acc[kGemmMr] = {acc0, acc1, acc2, acc3, acc4, acc5};
  if (mr == kGemmMr && nr == kGemmNr) {
    for (std::size_t i = 0; i < kGemmMr; ++i) {
      float* crow = c + i * ldc;
      if (load_c) {
        for (std::size_t j = 0; j < kGemmNr; ++j) crow[j] += acc[i][j];
      } else {
        for (std::size_t j = 0; j < kGemmNr; ++j) crow[j] = acc[i][j];
      }
    }
    return;
  }
  // Edge block: through a full-size copy, so acc is only ever indexed by constants and stays in
  // registers.
  float edge[kGemmMr * kGemmNr];
  for (std::size_t i = 0; i < kGemmMr; ++i) {
    for (std::size_t j = 0; j < kGemmNr; ++j) edge[i * kGemmNr + j] = acc[i][j];
  }
  for (std::size_t i = 0; i < mr; ++i) {
    float* crow = c + i * ldc;
    for (std::size_t j = 0; j < nr; ++j) {
      crow[j] = load_c ? crow[j] + edge[i * kGemmNr + j] : edge[i * kGemmNr + j];
    }
  }
}

// The host kernel (GotoBLAS loop order). Blocks of MC rows of C are shared out over the group.
template <class G, class TA, class TB>
inline void gemm_tile_blocked(G g, Tile<float> c, Tile<const TA> a, Tile<const TB> b,
                              bool accumulate) {
  const std::size_t m = c.rows, n = c.cols, k = a.cols;
  GemmScratch& scratch = gemm_scratch();
  float* bpack = GemmScratch::grow(scratch.b, scratch.b_size,
                                   kGemmKc * ((kGemmNc + kGemmNr - 1) / kGemmNr) * kGemmNr);
  float* apack = GemmScratch::grow(scratch.a, scratch.a_size,
                                   kGemmKc * ((kGemmMc + kGemmMr - 1) / kGemmMr) * kGemmMr);
  const auto rank = static_cast<std::size_t>(g.rank()),
             parties = static_cast<std::size_t>(g.size());
  for (std::size_t j0 = 0; j0 < n; j0 += kGemmNc) {
    const std::size_t nc = n - j0 < kGemmNc ? n - j0 : kGemmNc;
    for (std::size_t p0 = 0; p0 < k; p0 += kGemmKc) {
      const std::size_t kc = k - p0 < kGemmKc ? k - p0 : kGemmKc;
      const bool load_c = accumulate || p0 > 0;
      pack_b(bpack, b, p0, kc, j0, nc);
      for (std::size_t i0 = rank * kGemmMc; i0 < m; i0 += parties * kGemmMc) {
        const std::size_t mc = m - i0 < kGemmMc ? m - i0 : kGemmMc;
        pack_a(apack, a, i0, mc, p0, kc);
        for (std::size_t jr = 0; jr < nc; jr += kGemmNr) {
          const std::size_t nr = nc - jr < kGemmNr ? nc - jr : kGemmNr;
          const float* bp = bpack + (jr / kGemmNr) * kc * kGemmNr;
          for (std::size_t ir = 0; ir < mc; ir += kGemmMr) {
            const std::size_t mr = mc - ir < kGemmMr ? mc - ir : kGemmMr;
            gemm_micro(kc, apack + (ir / kGemmMr) * kc * kGemmMr, bp, c.row(i0 + ir) + j0 + jr,
                       c.ld, mr, nr, load_c);
          }
        }
      }
    }
  }
}
// Widens rows x cols of `src` into dense fp32 at `dst` (ld = cols).
template <class T>
inline void widen_tile(float* TESSERA_RESTRICT dst, Tile<const T> src) {
  for (std::size_t i = 0; i < src.rows; ++i) {
    const T* row = src.row(i);
    for (std::size_t j = 0; j < src.cols; ++j) dst[i * src.cols + j] = to_float(row[j]);
  }
}

// The host BLAS path: each member of the group hands one contiguous stripe of C's rows to the
// BLAS (tessera/device/ops/impl/host_blas.hpp), in its own thread. fp32 x fp32 goes straight in;
// bf16 x bf16 through sbgemm when the library has it; anything else is widened to fp32 first
// (into this thread's packing buffers), then sgemm, so accumulation is fp32 throughout. Returns
// false, having written nothing, when no BLAS is loaded or a dimension exceeds its int; every
// member decides the same, so the group then takes the portable kernel together.
template <class G, class TA, class TB>
inline bool gemm_tile_blas(G g, Tile<float> c, Tile<const TA> a, Tile<const TB> b,
                           bool accumulate) {
  constexpr std::size_t kIntMax = 0x7fffffff;
  if (!host_blas::info().available) return false;
  if (c.rows > kIntMax || c.cols > kIntMax || a.cols > kIntMax || a.ld > kIntMax ||
      b.ld > kIntMax || c.ld > kIntMax) {
    return false;
  }
  const std::size_t m = c.rows, n = c.cols, k = a.cols;
  const auto parties = static_cast<std::size_t>(g.size());
  const auto rank = static_cast<std::size_t>(g.rank());
  const std::size_t per = (m + parties - 1) / parties;
  const std::size_t r0 = rank * per < m ? rank * per : m;
  const std::size_t rows = m - r0 < per ? m - r0 : per;
  if (rows == 0) return true;
  if constexpr (std::is_same_v<TA, float> && std::is_same_v<TB, float>) {
    return host_blas::sgemm(rows, n, k, a.row(r0), a.ld, b.data, b.ld, c.row(r0), c.ld, accumulate);
  } else {
    if constexpr (std::is_same_v<TA, bf16> && std::is_same_v<TB, bf16>) {
      if (host_blas::sbgemm(rows, n, k, a.row(r0), a.ld, b.data, b.ld, c.row(r0), c.ld,
                            accumulate)) {
        return true;
      }
    }
    GemmScratch& scratch = gemm_scratch();
    const float* aw = nullptr;
    std::size_t lda = a.ld;
    if constexpr (std::is_same_v<TA, float>) {
      aw = a.row(r0);
    } else {
      float* buf = GemmScratch::grow(scratch.a, scratch.a_size, rows * k);
      widen_tile(buf, a.sub(r0, 0, rows, k));
      aw = buf;
      lda = k;
    }
    const float* bw = nullptr;
    std::size_t ldb = b.ld;
    if constexpr (std::is_same_v<TB, float>) {
      bw = b.data;
    } else {
      float* buf = GemmScratch::grow(scratch.b, scratch.b_size, k * n);
      widen_tile(buf, b);
      bw = buf;
      ldb = n;
    }
    return host_blas::sgemm(rows, n, k, aw, lda, bw, ldb, c.row(r0), c.ld, accumulate);
  }
}

// The tensor-core path. C is walked in 64 x 64 block tiles; for each 32-deep step of k the block
// stages A's 64 x 32 and B's 32 x 64 slices in shared memory (zero-padded at ragged edges, so any
// shape, leading dimension and alignment works), and each of 8 warps accumulates two 16 x 16
// sub-tiles of C (rows 16 * (warp / 2), columns 32 * (warp % 2) and 16 more) with the platform's
// MMA. The fp32 result goes through shared memory to C, predicated at the edges. Padded leading
// dimensions (+8 halves, +4 floats) keep every fragment 32-byte aligned and spread rows over banks.
inline constexpr std::size_t kMmaBm = 64;
inline constexpr std::size_t kMmaBn = 64;
inline constexpr std::size_t kMmaBk = 32;
inline constexpr std::size_t kMmaLdA = kMmaBk + 8;
inline constexpr std::size_t kMmaLdB = kMmaBn + 8;
inline constexpr std::size_t kMmaLdC = kMmaBn + 4;
inline constexpr int kMmaWarps = 8;

template <class T>
struct MmaStage {
  T a[kMmaBm * kMmaLdA];
  T b[kMmaBk * kMmaLdB];
  float c[kMmaBm * kMmaLdC];
};

template <class T>
inline constexpr bool is_mma_input_v = std::is_same_v<T, bf16> || std::is_same_v<T, half>;

template <class G, class T>
TESSERA_KERNEL_CODE void gemm_tile_mma(G g, Tile<float> c, Tile<const T> a, Tile<const T> b,
                                       bool accumulate) {
  constexpr platform::MmaInput kIn =
      std::is_same_v<T, bf16> ? platform::MmaInput::bf16 : platform::MmaInput::f16;
  MmaStage<T>& st = *platform::block_shared<MmaStage<T>>();
  const std::size_t m = c.rows, n = c.cols, k = a.cols;
  const auto threads = static_cast<std::size_t>(g.size());
  const auto tid = static_cast<std::size_t>(g.rank());
  const int warp = g.rank() / platform::warp_size();
  const std::size_t wm = static_cast<std::size_t>(warp / 2) * 16;
  const std::size_t wn = static_cast<std::size_t>(warp % 2) * 32;
  const T zero{};
  for (std::size_t m0 = 0; m0 < m; m0 += kMmaBm) {
    for (std::size_t n0 = 0; n0 < n; n0 += kMmaBn) {
      platform::MmaAccumulator acc0, acc1;
      platform::mma_zero(acc0);
      platform::mma_zero(acc1);
      for (std::size_t k0 = 0; k0 < k; k0 += kMmaBk) {
        for (std::size_t i = tid; i < kMmaBm * kMmaBk; i += threads) {
          const std::size_t r = i / kMmaBk, p = i % kMmaBk;
          st.a[r * kMmaLdA + p] = m0 + r < m && k0 + p < k ? a.row(m0 + r)[k0 + p] : zero;
        }
        for (std::size_t i = tid; i < kMmaBk * kMmaBn; i += threads) {
          const std::size_t p = i / kMmaBn, j = i % kMmaBn;
          st.b[p * kMmaLdB + j] = k0 + p < k && n0 + j < n ? b.row(k0 + p)[n0 + j] : zero;
        }
        g.sync();
        if (warp < kMmaWarps) {
          for (std::size_t kk = 0; kk < kMmaBk; kk += 16) {
            const T* a_frag = st.a + wm * kMmaLdA + kk;
            const T* b_frag = st.b + kk * kMmaLdB + wn;
            platform::mma_16x16x16<kIn>(acc0, a_frag, kMmaLdA, b_frag, kMmaLdB);
            platform::mma_16x16x16<kIn>(acc1, a_frag, kMmaLdA, b_frag + 16, kMmaLdB);
          }
        }
        g.sync();
      }
      if (warp < kMmaWarps) {
        platform::mma_store(st.c + wm * kMmaLdC + wn, kMmaLdC, acc0);
        platform::mma_store(st.c + wm * kMmaLdC + wn + 16, kMmaLdC, acc1);
      }
      g.sync();
      const std::size_t rows = m - m0 < kMmaBm ? m - m0 : kMmaBm;
      const std::size_t cols = n - n0 < kMmaBn ? n - n0 : kMmaBn;
      for (std::size_t i = tid; i < rows * cols; i += threads) {
        const std::size_t r = i / cols, j = i % cols;
        float* out = c.row(m0 + r) + n0 + j;
        const float v = st.c[r * kMmaLdC + j];
        *out = accumulate ? *out + v : v;
      }
      g.sync();  // the next block tile restages st
    }
  }
}

}  // namespace detail

template <class G, class TA, class TB>
TESSERA_KERNEL_CODE void gemm_tile(G g, Tile<float> c, Tile<const TA> a, Tile<const TB> b,
                                   bool accumulate) {
  if (c.rows == 0 || c.cols == 0) {
    g.sync();
    return;
  }
  if constexpr (platform::kHasTensorCoreMma && std::is_same_v<G, Block> && std::is_same_v<TA, TB> &&
                detail::is_mma_input_v<TA>) {
    if (a.cols != 0 && g.size() >= detail::kMmaWarps * platform::warp_size()) {
      detail::gemm_tile_mma(g, c, a, b, accumulate);
      g.sync();
      return;
    }
  }
  if constexpr (TESSERA_DEVICE_COMPILE != 0) {
    detail::gemm_tile_rows(g, c, a, b, accumulate);
  } else if (a.cols == 0) {
    detail::gemm_tile_rows(g, c, a, b, accumulate);  // C = 0 or unchanged
  } else if (!detail::gemm_tile_blas(g, c, a, b, accumulate)) {
    detail::gemm_tile_blocked(g, c, a, b, accumulate);
  }
  g.sync();
}

}  // namespace tessera::device::ops
