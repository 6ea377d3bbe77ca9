// Bodies of ops/overlap.hpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/device/ops/gemm_tile.hpp"
#include "tessera/device/ops/impl/fused_handshake.hpp"
#include "tessera/device/ops/overlap.hpp"
#include "tessera/device/rma.hpp"
#include "tessera/device/signal.hpp"

namespace tessera::device::ops {

namespace detail {

// Returns once every PE has finished call epoch - 1 (at once for the first call).
template <class G>
TESSERA_KERNEL_CODE void wait_previous_call(G g, const Context& ctx, const OverlapWords& w) {
  if (w.epoch > 1) {
    wait_until_all(g, ctx, w.consumed, static_cast<std::size_t>(ctx.n_pes), Cmp::ge, w.epoch - 1);
  }
}

// Marks tile t of this PE computed: its communicating groups acquire ready[t].
template <class G>
TESSERA_KERNEL_CODE void mark_ready(G g, const Context& ctx, const OverlapWords& w, std::size_t t) {
  g.sync();
  if (g.rank() == 0) signal(ctx, &w.ready[t], w.epoch, SignalOp::set, ctx.my_pe, Sem::release);
  g.sync();
}

template <class G, class Op>
TESSERA_KERNEL_CODE void run_finish_steps(G g, const Context& ctx, const Op& op, int rank,
                                          int count) {
  const std::size_t steps = op.finish_items(ctx);
  for (std::size_t j = static_cast<std::size_t>(rank); j < steps;
       j += static_cast<std::size_t>(count)) {
    op.finish(g, ctx, j);
  }
  quiet(g, ctx);
}

}  // namespace detail

template <class G, class Op>
TESSERA_KERNEL_CODE void overlap_compute(G g, const Context& ctx, const Op& op, int rank,
                                         int count) {
  const OverlapWords& w = op.words;
  detail::wait_previous_call(g, ctx, w);
  const std::size_t items = op.items(ctx);
  for (std::size_t i = static_cast<std::size_t>(rank); i < items;
       i += static_cast<std::size_t>(count)) {
    const std::size_t t = op.tile(ctx, i);
    if (t == kNoTile) continue;
    op.compute(g, ctx, t);
    detail::mark_ready(g, ctx, w, t);
  }
  detail::finish_reading(g, ctx, w.readers_done, w.consumed, w.groups, w.epoch);
}

template <class G, class Op>
TESSERA_KERNEL_CODE void overlap_communicate(G g, const Context& ctx, const Op& op, int rank,
                                             int count) {
  const OverlapWords& w = op.words;
  detail::wait_previous_call(g, ctx, w);
  const std::size_t items = op.items(ctx);
  for (std::size_t i = static_cast<std::size_t>(rank); i < items;
       i += static_cast<std::size_t>(count)) {
    const std::size_t t = op.tile(ctx, i);
    if (t == kNoTile) continue;
    wait_until(g, ctx, &w.ready[t], Cmp::ge, w.epoch);
    detail::delay_us(w.comm_delay_us);
    op.publish(g, ctx, t);
  }
  detail::run_finish_steps(g, ctx, op, rank, count);
  detail::finish_reading(g, ctx, w.readers_done, w.consumed, w.groups, w.epoch);
}

template <class G, class Op>
TESSERA_KERNEL_CODE void overlap_fused(G g, const Context& ctx, const Op& op, int rank, int count) {
  const OverlapWords& w = op.words;
  detail::wait_previous_call(g, ctx, w);
  const std::size_t items = op.items(ctx);
  for (std::size_t i = static_cast<std::size_t>(rank); i < items;
       i += static_cast<std::size_t>(count)) {
    const std::size_t t = op.tile(ctx, i);
    if (t == kNoTile) continue;
    op.compute(g, ctx, t);
    detail::mark_ready(g, ctx, w, t);
    detail::delay_us(w.comm_delay_us);
    op.publish(g, ctx, t);
  }
  detail::run_finish_steps(g, ctx, op, rank, count);
  detail::finish_reading(g, ctx, w.readers_done, w.consumed, w.groups, w.epoch);
}

template <class Op>
TESSERA_KERNEL_CODE void overlap_specialized(Block blk, const Context& ctx, const Op& op,
                                             int comm_blocks) {
  if (blk.block_id() < comm_blocks) {
    overlap_communicate(blk, ctx, op, blk.block_id(), comm_blocks);
  } else {
    overlap_compute(blk, ctx, op, blk.block_id() - comm_blocks, blk.grid_size() - comm_blocks);
  }
}

template <class G, class TA, class TB>
TESSERA_KERNEL_CODE void gemm_tiles(G g, Tile<float> c, Tile<const TA> a, Tile<const TB> b,
                                    std::size_t tile_m, std::size_t tile_n, int rank, int count) {
  const std::size_t m = c.rows, n = c.cols, k = a.cols;
  const std::size_t tiles = ((m + tile_m - 1) / tile_m) * ((n + tile_n - 1) / tile_n);
  for (std::size_t t = static_cast<std::size_t>(rank); t < tiles;
       t += static_cast<std::size_t>(count)) {
    const GridTile x = grid_tile(t, m, n, tile_m, tile_n);
    gemm_tile(g, c.sub(x.r0, x.c0, x.rows, x.cols), a.sub(x.r0, 0, x.rows, k),
              b.sub(0, x.c0, k, x.cols), false);
  }
  g.sync();
}

}  // namespace tessera::device::ops
