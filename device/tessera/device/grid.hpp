// grid_sync: the barrier among the blocks of one launch (CUDA's this_grid().sync()), on this PE
// only. It is not a cross-PE barrier: barrier / sync_all (barrier.hpp) are.
#pragma once

#include <cstdint>

#include "tessera/device/context.hpp"
#include "tessera/device/group.hpp"
#include "tessera/device/impl/wait.hpp"
#include "tessera/device/platform.hpp"

namespace tessera::device {

// Returns in every thread of every block of the calling launch once all of them have called
// it; every store any thread of the grid made before it is visible to every thread of the grid
// after it. Every block of the grid calls it, the same number of times; the grid must be one
// tessera::launch made (all blocks co-resident: a thread per block on the host backend, a
// cooperative launch on GPUs). Bounded by ctx.timeout_ns on the host backend.
// Block only: every thread of the grid must be in it (its visibility promise covers them all,
// and this_grid().sync() hangs unless every thread reaches it), which is what Block means; a
// Thread or Warp form would be either this under another name or a hang (docs/device-api.md).
TESSERA_KERNEL_CODE inline void grid_sync(Block blk, const Context& ctx);

namespace detail {

// Host backend: the k-th grid_sync of a block adds 1 to its launch's arrival counter (acq_rel)
// and waits until the counter reaches k * grid blocks (acquire). No block starts grid sync k + 1
// before every block arrived at k, so the counter passes k * grid only once all have arrived.
TESSERA_KERNEL_CODE inline void grid_sync_counted(Block blk, const Context& ctx) {
  const platform::GridSyncWords w = platform::grid_sync_words();
  if (w.arrivals == nullptr) {
    Message m;
    m << "grid_sync on PE " << ctx.my_pe << " (block " << blk.block_id() << " of "
      << blk.grid_size()
      << "): not called from a grid that tessera::launch runs; grid_sync syncs the blocks of "
         "one launch";
    platform::report_failure(FailureCode::invalid_argument, m.c_str());
  }
  const std::uint64_t n = ++*w.done;
  const std::uint64_t target = n * static_cast<std::uint64_t>(blk.grid_size());
  platform::atomic_fetch_add(w.arrivals, std::uint64_t{1}, Sem::acq_rel, Scope::device);
  SpinPacer pacer(ctx, "grid_sync");
  for (std::uint32_t spins = 0;; ++spins) {
    if (platform::atomic_load(w.arrivals, Sem::acquire, Scope::device) >= target) return;
    if (!pacer.pause_and_check(spins)) continue;
    const std::uint64_t seen = platform::atomic_load(w.arrivals, Sem::acquire, Scope::device);
    if (seen >= target) return;
    const std::uint64_t before = (n - 1) * static_cast<std::uint64_t>(blk.grid_size());
    Message m;
    m << "grid_sync on PE " << ctx.my_pe << " (block " << blk.block_id() << ") timed out after "
      << static_cast<std::uint64_t>(ctx.timeout_ns / 1000000) << " ms in grid sync #" << n << ": "
      << (seen - before) << " of " << blk.grid_size()
      << " blocks of the launch arrived; every block of the grid must call grid_sync";
    platform::report_failure(FailureCode::timeout, m.c_str());
  }
}

}  // namespace detail

TESSERA_KERNEL_CODE inline void grid_sync(Block blk, const Context& ctx) {
  if constexpr (platform::kNativeGridSync) {
    platform::grid_sync_native();
  } else {
    blk.sync();
    if (blk.rank() == 0) detail::grid_sync_counted(blk, ctx);
    blk.sync();
  }
}

}  // namespace tessera::device
