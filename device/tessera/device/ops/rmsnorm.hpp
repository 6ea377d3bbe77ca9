// all_reduce_rmsnorm building blocks (device side of tessera::ops::all_reduce_rmsnorm, host
// header <tessera/ops/all_reduce_rmsnorm.hpp>): y = rmsnorm(sum over team members of x +
// residual) * weight, row by row: v / sqrt(mean(v^2) + eps) * weight, in fp32, rounded once into
// y. Elements are float, bf16 or half. The threads of a group take whole rows (row r by thread
// r mod size), so no reduction crosses threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "tessera/device/context.hpp"
#include "tessera/device/group.hpp"
#include "tessera/device/numeric.hpp"
#include "tessera/device/signal.hpp"
#include "tessera/device/team.hpp"

namespace tessera::device::ops {

// The norm alone, for rows [row_begin, row_end): reads sum (already reduced), residual and
// weight, writes y (which may alias sum or residual: each element is read before it is
// written). Local memory only; nothing is made visible to other PEs.
template <class G, class T>
TESSERA_KERNEL_CODE void rmsnorm_rows(G g, T* y, const T* sum, const T* residual, const T* weight,
                                      std::size_t hidden, float eps, std::size_t row_begin,
                                      std::size_t row_end);

// The fused pattern's arguments: the same on every member except the local pointers.
template <class T>
struct AllReduceRmsnormArgs {
  const T* x = nullptr;               // rows x hidden, this PE's contribution (any memory)
  const T* residual = nullptr;        // rows x hidden
  const T* weight = nullptr;          // hidden
  T* y = nullptr;                     // rows x hidden (may equal x or residual)
  T* stage = nullptr;                 // symmetric rows x hidden: this PE's x, read by every member
  std::uint64_t* flags = nullptr;     // symmetric, team.size * blocks: [member rank][block]
  std::uint64_t* consumed = nullptr;  // symmetric, world n_pes words (the reuse handshake)
  std::uint64_t* readers_done = nullptr;  // symmetric, 1 word
  Team team;
  std::size_t rows = 0, hidden = 0;
  float eps = 1e-6f;
  int blocks = 1;           // the grid: blocks calling all_reduce_rmsnorm per member
  std::uint64_t epoch = 0;  // 1 for the first call, then 2, 3, ...
  // When set (words non-null: DeviceEpoch::kWords local words, zero before the first call), the
  // call's epoch is taken from it on the device instead (every block calls next_in_grid, so all
  // agree) and `epoch` is ignored: a launch captured into a Graph takes a new epoch every replay.
  DeviceEpoch calls;
  std::uint32_t comm_delay_us = 0;  // test hook: delay before each block announces its rows

  TESSERA_HOST_DEVICE std::size_t row_begin(int block) const {
    return rows * static_cast<std::size_t>(block) / static_cast<std::size_t>(blocks);
  }
};

// Fused pattern, block `blk` of args.blocks: stages its rows of x, tells every member, waits
// until every member has staged the same rows, sums them (member order 0, 1, ...: every member
// gets identical bits), adds residual, normalises and writes y. Every member must be mapped.
// Reuse: a block first waits until every member has finished the previous call
// (consumed >= epoch - 1), and the last block to finish sets consumed[me] = epoch on every PE.
template <class T>
TESSERA_KERNEL_CODE void all_reduce_rmsnorm(Block blk, const Context& ctx,
                                            const AllReduceRmsnormArgs<T>& args);

}  // namespace tessera::device::ops

#include "tessera/device/ops/impl/rmsnorm_funcs.hpp"
