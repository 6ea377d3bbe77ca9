// The row-owned reduction that gemm_ar runs and gemm_rs runs in its pipelined patterns: C's rows
// cut into n_pes shards, every PE's partial of a tile summed by the shard's owner
// (<tessera/device/ops/gemm_ar.hpp>); all_rows gives every PE the whole sum (gemm_ar), else each
// PE keeps its own shard (gemm_rs). Its workspace and one call of each pattern. Internal.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ops/fused_gemm.hpp"
#include "ops/heap_fill.hpp"
#include "tessera/device/ops/gemm_ar.hpp"
#include "tessera/heap.hpp"
#include "tessera/ops/all_reduce.hpp"
#include "tessera/team.hpp"

namespace tessera::detail {

class RowReduce {
 public:
  // Allocates the workspace of s's resolved pattern: the partials (m x n floats) and, when the
  // pattern is pipelined, the push slots, the sums (all_rows) and the handshake words
  // [ready: T][part: T][sum: T][consumed: n_pes][readers: 1] (T tiles); bulk_synchronous: the
  // world team of the fused ops.
  void allocate(FusedGemmState& s, std::size_t shard_rows, bool all_rows) {
    shard_rows_ = shard_rows;
    all_rows_ = all_rows;
    partial_ = s.rt.alloc<float>(s.m * s.n);
    if (s.overlap.pattern == ops::OverlapPattern::bulk_synchronous) {
      team_ = &fused_world_team(s.rt);
      return;
    }
    const std::size_t tiles = static_cast<std::size_t>(s.rt.n_pes()) * per_shard(s);
    if (s.overlap.direction == ops::CommDirection::push) {
      slots_ = s.rt.alloc<float>(tiles * s.options.tile_m * s.options.tile_n);
    }
    if (all_rows) reduced_ = s.rt.alloc<float>(s.m * s.n);
    s.allocate_words(3 * tiles + static_cast<std::size_t>(s.rt.n_pes()) + 1);
  }

  // One call: a (m x k) x b (k x n) summed over PEs into c (all_rows: m x n; else this PE's
  // shard_rows x n).
  template <class T>
  void enqueue(FusedGemmState& s, Stream& stream, const T* a, const T* b, float* c) const {
    const device::Tile<const T> ta(a, s.m, s.k), tb(b, s.k, s.n);
    const std::size_t c_rows = all_rows_ ? s.m : shard_rows_;
    if (s.overlap.pattern == ops::OverlapPattern::bulk_synchronous) {
      // The GEMM into this PE's partials, the library all-reduce in place, c's rows copied out.
      s.gemm_tiles(stream, device::Tile<float>(partial_.get(), s.m, s.n), ta, tb);
      ops::all_reduce(s.rt, stream, *team_, partial_.get(), partial_.get(), s.m * s.n,
                      ops::Dtype::f32, ops::ReduceOp::sum);
      const std::size_t first = all_rows_ ? 0 : static_cast<std::size_t>(s.rt.pe()) * shard_rows_;
      copy_on_stream(stream, c, partial_.get() + first * s.n, c_rows * s.n * sizeof(float));
      return;
    }
    device::ops::GemmArArgs<T, T> args;
    args.a = ta;
    args.b = tb;
    args.c = device::Tile<float>(c, c_rows, s.n);
    args.partial = partial_.get();
    args.slots = slots_.get();
    args.reduced = reduced_.get();
    args.shard_rows = shard_rows_;
    args.tile_m = s.options.tile_m;
    args.tile_n = s.options.tile_n;
    args.pull = s.overlap.direction == ops::CommDirection::pull;
    args.all_rows = all_rows_;
    const std::size_t tiles = static_cast<std::size_t>(s.rt.n_pes()) * args.per_shard();
    std::uint64_t* w = s.words.get();
    args.part_flags = w + tiles;
    args.sum_flags = w + 2 * tiles;
    args.words = s.next_words(w, w + 3 * tiles);
    s.launch_pipelined(stream, args);
  }

 private:
  std::size_t per_shard(const FusedGemmState& s) const {
    return ((shard_rows_ + s.options.tile_m - 1) / s.options.tile_m) *
           ((s.n + s.options.tile_n - 1) / s.options.tile_n);
  }

  std::size_t shard_rows_ = 0;
  bool all_rows_ = true;
  Symmetric<float> partial_, slots_, reduced_;
  const Team* team_ = nullptr;  // bulk_synchronous
};

}  // namespace tessera::detail
