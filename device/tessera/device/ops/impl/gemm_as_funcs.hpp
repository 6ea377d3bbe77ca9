// Bodies of ops/gemm_as.hpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/device/ops/gemm_as.hpp"
#include "tessera/device/ops/gemm_tile.hpp"
#include "tessera/device/ops/overlap.hpp"
#include "tessera/device/rma.hpp"
#include "tessera/device/signal.hpp"

namespace tessera::device::ops {

template <class TA, class TB>
TESSERA_HOST_DEVICE Tile<float> GemmAsArgs<TA, TB>::slot_tile(int pe, std::size_t t) const {
  const std::size_t nl = n_local();
  const GridTile x = grid_tile(t, m(), nl, tile_m, tile_n);
  return Tile<float>(gathered + static_cast<std::size_t>(pe) * m() * nl + x.r0 * nl + x.c0, x.rows,
                     x.cols, nl);
}

template <class TA, class TB>
TESSERA_HOST_DEVICE Tile<float> GemmAsArgs<TA, TB>::c_tile(int pe, std::size_t t) const {
  const GridTile x = grid_tile(t, m(), n_local(), tile_m, tile_n);
  return c.sub(x.r0, static_cast<std::size_t>(pe) * n_local() + x.c0, x.rows, x.cols);
}

template <class TA, class TB>
template <class G>
TESSERA_KERNEL_CODE void GemmAsArgs<TA, TB>::compute(G g, const Context& ctx, std::size_t t) const {
  const GridTile x = grid_tile(t, m(), n_local(), tile_m, tile_n);
  gemm_tile(g, slot_tile(ctx.my_pe, t), a.sub(x.r0, 0, x.rows, a.cols),
            b.sub(0, x.c0, b.rows, x.cols), false);
}

template <class TA, class TB>
template <class G>
TESSERA_KERNEL_CODE void GemmAsArgs<TA, TB>::publish(G g, const Context& ctx, std::size_t t) const {
  const int me = ctx.my_pe, n_pes = ctx.n_pes;
  const Tile<float> mine = slot_tile(me, t);
  device::detail::copy_tile(g, c_tile(me, t), Tile<const float>(mine));
  g.sync();
  std::uint64_t* flag = &flags[static_cast<std::size_t>(me) * tiles() + t];
  for (int i = 1; i < n_pes; ++i) {
    const int pe = (me + i) % n_pes;
    if (pull) {
      if (g.rank() == 0) signal(ctx, flag, words.epoch, SignalOp::set, pe, Sem::release);
    } else {
      put_signal(g, ctx, mine, Tile<const float>(mine), flag, words.epoch, SignalOp::set, pe);
    }
  }
  g.sync();
}

template <class TA, class TB>
template <class G>
TESSERA_KERNEL_CODE void GemmAsArgs<TA, TB>::finish(G g, const Context& ctx, std::size_t j) const {
  const int me = ctx.my_pe, n_pes = ctx.n_pes;
  // The nearest sender first: PE me - 1, then me - 2, ...
  const int src = (me - 1 - static_cast<int>(j / tiles()) + n_pes) % n_pes;
  const std::size_t t = j % tiles();
  wait_until(g, ctx, &flags[static_cast<std::size_t>(src) * tiles() + t], Cmp::ge, words.epoch);
  const Tile<float> local = slot_tile(src, t);
  const Tile<const float> from = pull ? local.with_data(ctx.ptr(local.data, src)) : local;
  device::detail::copy_tile(g, c_tile(src, t), from);
  g.sync();
}

template <class TA, class TB>
TESSERA_KERNEL_CODE void gemm_as(Block blk, const Context& ctx, const GemmAsArgs<TA, TB>& args,
                                 int comm_blocks) {
  overlap_specialized(blk, ctx, args, comm_blocks);
}

template <class G>
TESSERA_KERNEL_CODE void gather_columns(G g, Tile<float> c, const float* gathered, int n_pes,
                                        std::size_t n_local, int rank, int count) {
  const std::size_t m = c.rows;
  for (int p = rank; p < n_pes; p += count) {
    const Tile<const float> src(gathered + static_cast<std::size_t>(p) * m * n_local, m, n_local,
                                n_local);
    device::detail::copy_tile(g, c.sub(0, static_cast<std::size_t>(p) * n_local, m, n_local), src);
  }
  g.sync();
}

}  // namespace tessera::device::ops
