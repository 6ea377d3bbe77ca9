// Bodies of ops/gemm_ar.hpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/device/ops/gemm_ar.hpp"
#include "tessera/device/ops/gemm_tile.hpp"
#include "tessera/device/ops/impl/fused_handshake.hpp"
#include "tessera/device/ops/overlap.hpp"
#include "tessera/device/rma.hpp"
#include "tessera/device/signal.hpp"

namespace tessera::device::ops {

template <class TA, class TB>
TESSERA_HOST_DEVICE ShardTile GemmArArgs<TA, TB>::shard_tile(std::size_t t) const {
  ShardTile s;
  const std::size_t ps = per_shard(), tn = tiles_n();
  s.owner = static_cast<int>(t / ps);
  s.index = t % ps;
  const std::size_t begin = static_cast<std::size_t>(s.owner) * shard_rows;
  const std::size_t end = begin + shard_rows < m() ? begin + shard_rows : m();
  s.r0 = begin + (s.index / tn) * tile_m;
  s.rows = s.r0 >= end ? 0 : (end - s.r0 < tile_m ? end - s.r0 : tile_m);
  s.c0 = (s.index % tn) * tile_n;
  s.cols = n() - s.c0 < tile_n ? n() - s.c0 : tile_n;
  return s;
}

template <class TA, class TB>
TESSERA_HOST_DEVICE std::size_t GemmArArgs<TA, TB>::tile(const Context& ctx, std::size_t i) const {
  const std::size_t ps = per_shard();
  const int owner = (ctx.my_pe + 1 + static_cast<int>(i / ps)) % ctx.n_pes;
  const std::size_t t = static_cast<std::size_t>(owner) * ps + i % ps;
  return shard_tile(t).rows == 0 ? kNoTile : t;
}

template <class TA, class TB>
template <class G>
TESSERA_KERNEL_CODE void GemmArArgs<TA, TB>::compute(G g, const Context&, std::size_t t) const {
  const ShardTile s = shard_tile(t);
  const std::size_t k = a.cols;
  const Tile<float> dst(partial + s.r0 * n() + s.c0, s.rows, s.cols, n());
  gemm_tile(g, dst, a.sub(s.r0, 0, s.rows, k), b.sub(0, s.c0, k, s.cols), false);
}

template <class TA, class TB>
template <class G>
TESSERA_KERNEL_CODE void GemmArArgs<TA, TB>::publish(G g, const Context& ctx, std::size_t t) const {
  const ShardTile s = shard_tile(t);
  const int me = ctx.my_pe;
  if (s.owner == me) return;  // summed in place by reduce()
  const std::size_t ps = per_shard();
  std::uint64_t* flag = &part_flags[static_cast<std::size_t>(me) * ps + s.index];
  const std::uint64_t e = words.epoch;
  if (pull) {
    g.sync();
    if (g.rank() == 0) signal(ctx, flag, e, SignalOp::set, s.owner, Sem::release);
    g.sync();
    return;
  }
  const Tile<const float> src(partial + s.r0 * n() + s.c0, s.rows, s.cols, n());
  const Tile<float> dst(slots + (static_cast<std::size_t>(me) * ps + s.index) * tile_m * tile_n,
                        s.rows, s.cols, s.cols);
  put_signal(g, ctx, dst, src, flag, e, SignalOp::set, s.owner);
}

template <class TA, class TB>
template <class G>
TESSERA_KERNEL_CODE void GemmArArgs<TA, TB>::reduce(G g, const Context& ctx,
                                                    std::size_t index) const {
  const int me = ctx.my_pe, n_pes = ctx.n_pes;
  const std::size_t ps = per_shard();
  const std::size_t t = static_cast<std::size_t>(me) * ps + index;
  const ShardTile s = shard_tile(t);
  if (s.rows == 0) return;
  const std::uint64_t e = words.epoch;
  wait_until(g, ctx, &words.ready[t], Cmp::ge, e);  // my own partial
  const std::size_t ldn = n();
  const Tile<float> sum =
      all_rows ? Tile<float>(reduced + s.r0 * ldn + s.c0, s.rows, s.cols, ldn)
               : c.sub(s.r0 - static_cast<std::size_t>(me) * shard_rows, s.c0, s.rows, s.cols);
  const float* own = partial + s.r0 * ldn + s.c0;
  for (std::size_t r = static_cast<std::size_t>(g.rank()); r < s.rows;
       r += static_cast<std::size_t>(g.size())) {
    float* out = sum.row(r);
    const float* in = own + r * ldn;
    for (std::size_t j = 0; j < s.cols; ++j) out[j] = in[j];
  }
  g.sync();
  for (int i = 1; i < n_pes; ++i) {
    const int src = (me - i + n_pes) % n_pes;
    wait_until(g, ctx, &part_flags[static_cast<std::size_t>(src) * ps + index], Cmp::ge, e);
    const float* base;
    std::size_t ld;
    if (pull) {
      base = ctx.ptr(partial, src) + s.r0 * ldn + s.c0;
      ld = ldn;
    } else {
      base = slots + (static_cast<std::size_t>(src) * ps + index) * tile_m * tile_n;
      ld = s.cols;
    }
    for (std::size_t r = static_cast<std::size_t>(g.rank()); r < s.rows;
         r += static_cast<std::size_t>(g.size())) {
      float* out = sum.row(r);
      const float* in = base + r * ld;
      for (std::size_t j = 0; j < s.cols; ++j) out[j] += in[j];
    }
    g.sync();
  }
  if (!all_rows) return;
  device::detail::copy_tile(g, c.sub(s.r0, s.c0, s.rows, s.cols), Tile<const float>(sum));
  g.sync();
  detail::delay_us(words.comm_delay_us);
  for (int i = 1; i < n_pes; ++i) {
    const int pe = (me + i) % n_pes;
    if (pull) {
      if (g.rank() == 0) signal(ctx, &sum_flags[t], e, SignalOp::set, pe, Sem::release);
    } else {
      put_signal(g, ctx, sum, Tile<const float>(sum), &sum_flags[t], e, SignalOp::set, pe);
    }
  }
  g.sync();
}

template <class TA, class TB>
template <class G>
TESSERA_KERNEL_CODE void GemmArArgs<TA, TB>::collect(G g, const Context& ctx, std::size_t t) const {
  const ShardTile s = shard_tile(t);
  if (s.rows == 0) return;
  wait_until(g, ctx, &sum_flags[t], Cmp::ge, words.epoch);
  const std::size_t ldn = n();
  float* local = reduced + s.r0 * ldn + s.c0;
  const Tile<const float> src(pull ? ctx.ptr(local, s.owner) : local, s.rows, s.cols, ldn);
  device::detail::copy_tile(g, c.sub(s.r0, s.c0, s.rows, s.cols), src);
  g.sync();
}

template <class TA, class TB>
template <class G>
TESSERA_KERNEL_CODE void GemmArArgs<TA, TB>::finish(G g, const Context& ctx, std::size_t j) const {
  const std::size_t ps = per_shard();
  if (j < ps) {
    reduce(g, ctx, j);
    return;
  }
  // The other shards' sums, the nearest owner first.
  const std::size_t i = j - ps;
  const int owner = (ctx.my_pe + 1 + static_cast<int>(i / ps)) % ctx.n_pes;
  collect(g, ctx, static_cast<std::size_t>(owner) * ps + i % ps);
}

template <class TA, class TB>
TESSERA_KERNEL_CODE void gemm_ar(Block blk, const Context& ctx, const GemmArArgs<TA, TB>& args,
                                 int comm_blocks) {
  overlap_specialized(blk, ctx, args, comm_blocks);
}

}  // namespace tessera::device::ops
