// Bodies of ops/rmsnorm.hpp.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "tessera/device/ops/impl/fused_handshake.hpp"
#include "tessera/device/ops/rmsnorm.hpp"
#include "tessera/device/rma.hpp"
#include "tessera/device/signal.hpp"

namespace tessera::device::ops {

namespace detail {

template <class T>
TESSERA_HOST_DEVICE inline float norm_widen(T v) {
  return to_float(v);
}

template <class T>
TESSERA_HOST_DEVICE inline T norm_narrow(float v) {
  if constexpr (std::is_same_v<T, half>) {
    return to_half(v);
  } else if constexpr (std::is_same_v<T, bf16>) {
    return to_bf16(v);
  } else {
    return v;
  }
}

// One row: v[j] = value(j) + residual[j]; y[j] = v[j] / sqrt(mean(v^2) + eps) * weight[j].
// value(j) is read twice (once for the mean, once for y), so y may alias its sources.
template <class T, class Value>
TESSERA_HOST_DEVICE inline void rmsnorm_row(T* y, Value value, const T* residual, const T* weight,
                                            std::size_t hidden, float eps) {
  float sumsq = 0.0f;
  for (std::size_t j = 0; j < hidden; ++j) {
    const float v = value(j) + norm_widen(residual[j]);
    sumsq += v * v;
  }
  const float inv = 1.0f / sqrtf(sumsq / static_cast<float>(hidden) + eps);
  for (std::size_t j = 0; j < hidden; ++j) {
    const float v = value(j) + norm_widen(residual[j]);
    y[j] = norm_narrow<T>(v * inv * norm_widen(weight[j]));
  }
}

}  // namespace detail

template <class G, class T>
TESSERA_KERNEL_CODE void rmsnorm_rows(G g, T* y, const T* sum, const T* residual, const T* weight,
                                      std::size_t hidden, float eps, std::size_t row_begin,
                                      std::size_t row_end) {
  for (std::size_t r = row_begin + static_cast<std::size_t>(g.rank()); r < row_end;
       r += static_cast<std::size_t>(g.size())) {
    const T* s = sum + r * hidden;
    detail::rmsnorm_row(
        y + r * hidden, [s](std::size_t j) { return detail::norm_widen(s[j]); },
        residual + r * hidden, weight, hidden, eps);
  }
  g.sync();
}

template <class T>
TESSERA_KERNEL_CODE void all_reduce_rmsnorm(Block blk, const Context& ctx,
                                            const AllReduceRmsnormArgs<T>& args) {
  const Team& team = args.team;
  const int b = blk.block_id();
  const std::uint64_t e = args.calls.words != nullptr ? args.calls.next_in_grid(blk) : args.epoch;
  const std::size_t r0 = args.row_begin(b), r1 = args.row_begin(b + 1), h = args.hidden;
  if (e > 1) {
    for (int r = 0; r < team.size; ++r) {
      wait_until(blk, ctx, &args.consumed[team.pe(r)], Cmp::ge, e - 1);
    }
  }
  if (r1 > r0) {
    device::detail::copy_tile(blk, Tile<T>(args.stage + r0 * h, r1 - r0, h, h),
                              Tile<const T>(args.x + r0 * h, r1 - r0, h, h));
  }
  blk.sync();
  detail::delay_us(args.comm_delay_us);
  std::uint64_t* mine = &args.flags[static_cast<std::size_t>(team.my_rank) * args.blocks + b];
  if (blk.rank() == 0) {
    for (int r = 0; r < team.size; ++r) {
      signal(ctx, mine, e, SignalOp::set, team.pe(r), Sem::release);
    }
  }
  for (int r = 0; r < team.size; ++r) {
    wait_until(blk, ctx, &args.flags[static_cast<std::size_t>(r) * args.blocks + b], Cmp::ge, e);
  }
  const int members = team.size;
  for (std::size_t row = r0 + static_cast<std::size_t>(blk.rank()); row < r1;
       row += static_cast<std::size_t>(blk.size())) {
    const std::size_t off = row * h;
    auto value = [&](std::size_t j) {
      float s = 0.0f;
      for (int r = 0; r < members; ++r) {
        s += detail::norm_widen(ctx.ptr(args.stage, team.pe(r))[off + j]);
      }
      return s;
    };
    detail::rmsnorm_row(args.y + off, value, args.residual + off, args.weight, h, args.eps);
  }
  detail::finish_reading(blk, ctx, args.readers_done, args.consumed, args.blocks, e);
}

}  // namespace tessera::device::ops
