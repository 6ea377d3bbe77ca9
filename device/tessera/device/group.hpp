// Cooperating thread groups: the first template parameter of every device call. All threads of
// a group make the call together and it returns in all of them. On the host backend a block runs
// one thread, so Warp and Block have one member; kernels still loop with group strides so the
// same text is right on GPUs.
#pragma once

#include <type_traits>

#include "tessera/device/platform.hpp"

namespace tessera::device {

// One thread acting alone.
struct Thread {
  TESSERA_HOST_DEVICE static constexpr int size() { return 1; }
  TESSERA_HOST_DEVICE static constexpr int rank() { return 0; }
  // Free: a thread is always in step with itself.
  TESSERA_HOST_DEVICE static void sync() {}
};

// The lanes of one warp (wavefront on AMD). Host: one lane.
struct Warp {
  TESSERA_HOST_DEVICE static int size() { return platform::warp_size(); }
  TESSERA_HOST_DEVICE static int rank() { return platform::lane_id(); }
  // Every lane's memory accesses before it are visible to every lane after it.
  TESSERA_HOST_DEVICE static void sync() { platform::warp_sync(); }
};

// The threads of one block of a grid, plus where the block sits in its grid. Host: one thread.
class Block {
 public:
  TESSERA_HOST_DEVICE constexpr Block(int block_id, int grid_size)
      : block_id_(block_id), grid_size_(grid_size) {}

  TESSERA_HOST_DEVICE static int size() { return platform::block_threads(); }
  TESSERA_HOST_DEVICE static int rank() { return platform::thread_in_block(); }
  // Every thread's memory accesses before it are visible to every thread of the block after it.
  TESSERA_HOST_DEVICE static void sync() { platform::block_sync(); }

  // This block's index in its grid, in [0, grid_size()).
  TESSERA_HOST_DEVICE constexpr int block_id() const { return block_id_; }
  // Number of blocks in the grid (all co-resident on the host backend).
  TESSERA_HOST_DEVICE constexpr int grid_size() const { return grid_size_; }

 private:
  int block_id_;
  int grid_size_;
};

static_assert(std::is_trivially_copyable_v<Block>, "groups are passed by value");

// True for the group types above.
template <class G>
inline constexpr bool is_group_v =
    std::is_same_v<G, Thread> || std::is_same_v<G, Warp> || std::is_same_v<G, Block>;

}  // namespace tessera::device
