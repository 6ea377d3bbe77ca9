// The tile GEMM engine the fused ops are made of: C (+)= A * B on tiles, fp32 accumulation.
// Inputs are float or bf16 (bf16 widened to fp32 on load); C is float. Row-major tiles with
// leading dimensions. All threads of the group call together and share the work.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tessera/device/group.hpp"
#include "tessera/device/tile.hpp"

// No-alias hint for the packed kernels. Belongs in platform.hpp (owned elsewhere); this
// fallback stands until it is defined there.
#ifndef TESSERA_RESTRICT
#define TESSERA_RESTRICT __restrict
#endif

// Keeps GCC's loop vectorizer (on at -O3) off the micro-kernel: it would vectorize the k loop
// as 96 reductions and spill, instead of leaving the 6 x 16 block to the basic-block (SLP)
// vectorizer, which keeps it in registers. Belongs in platform.hpp; local fallback meanwhile.
#ifndef TESSERA_NO_LOOP_VECTORIZE
#if defined(__GNUC__) && !defined(__clang__)
#define TESSERA_NO_LOOP_VECTORIZE __attribute__((optimize("O2")))
#else
#define TESSERA_NO_LOOP_VECTORIZE
#endif
#endif

namespace tessera::device::ops {

// The fp32 value of a bf16 (its bits are the high half of a float's).
TESSERA_HOST_DEVICE inline float to_float(bf16 v) {
  std::uint32_t bits = static_cast<std::uint32_t>(v.bits) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}
TESSERA_HOST_DEVICE inline float to_float(float v) { return v; }

// The bf16 nearest to `f` (round to nearest even; NaN stays NaN).
TESSERA_HOST_DEVICE inline bf16 to_bf16(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0) {
    return bf16{static_cast<std::uint16_t>((bits >> 16) | 0x40u)};
  }
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return bf16{static_cast<std::uint16_t>(bits >> 16)};
}

// C = A * B (accumulate = false) or C += A * B (accumulate = true), with A m x k, B k x n and
// C m x n (m = c.rows, n = c.cols, k = a.cols; a.rows == m, b.rows == k, b.cols == n). Reads
// only A and B, writes only C; nothing is made visible to other PEs. Host: a packed, register-
// blocked kernel (6 x 16 fp32 accumulators over 256-deep k panels, bf16 widened while packing);
// compile the caller with the target's vector ISA (-march) to get FMA and 8-lane vectors.
template <class G, class TA, class TB>
TESSERA_DEVICE void gemm_tile(G g, Tile<float> c, Tile<const TA> a, Tile<const TB> b,
                              bool accumulate);

// ---------------------------------------------------------------------------------------------

namespace detail {

// The portable loop: rows of C shared out over the group; within a row, an i-k-j loop streams
// B's rows.
template <class G, class TA, class TB>
TESSERA_DEVICE void gemm_tile_rows(G g, Tile<float> c, Tile<const TA> a, Tile<const TB> b,
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

#if !TESSERA_DEVICE_COMPILE
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
#endif  // !TESSERA_DEVICE_COMPILE

}  // namespace detail

template <class G, class TA, class TB>
TESSERA_DEVICE void gemm_tile(G g, Tile<float> c, Tile<const TA> a, Tile<const TB> b,
                              bool accumulate) {
#if !TESSERA_DEVICE_COMPILE
  if (c.rows == 0 || c.cols == 0) {
    g.sync();
    return;
  }
  if (a.cols == 0) {
    detail::gemm_tile_rows(g, c, a, b, accumulate);  // C = 0 or unchanged
  } else {
    detail::gemm_tile_blocked(g, c, a, b, accumulate);
  }
#else
  detail::gemm_tile_rows(g, c, a, b, accumulate);
#endif
  g.sync();
}

}  // namespace tessera::device::ops
