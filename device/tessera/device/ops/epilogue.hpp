// The epilogue hook of the fused GEMM ops (ag_gemm, gemm_rs): what a caller passes to rewrite
// each finished C tile in place (bias, activation), and the default that leaves it as it is.
#pragma once

#include <cstddef>

#include "tessera/device/platform/macros.hpp"
#include "tessera/device/tile.hpp"

namespace tessera::device::ops {

// The default epilogue of the fused GEMM ops: leaves each finished C tile as it is. An epilogue
// is called as epi(g, c_tile, row0, col0) by the group g that computed the tile, once per tile,
// with the tile's position in the op's C; it may rewrite the tile in place (bias, activation).
struct NoEpilogue {
  template <class G>
  TESSERA_KERNEL_CODE void operator()(G, Tile<float>, std::size_t, std::size_t) const {}
};

}  // namespace tessera::device::ops
