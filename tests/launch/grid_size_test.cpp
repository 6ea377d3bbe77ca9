// Default grid sizes: a PE's share of the cores its node's PEs run on, for 1..8 PEs per node.
#include "launch/grid_size.hpp"

#include <gtest/gtest.h>

namespace tessera::detail {
namespace {

TEST(GridSize, UnboundPesShareTheNodesCoresEvenly) {
  // 16 cores, no PE bound: all the node's PEs share the 16.
  const int expected[] = {16, 8, 5, 4, 3, 2, 2, 2};
  for (int pes = 1; pes <= 8; ++pes) {
    EXPECT_EQ(blocks_per_pe(16, 16, pes, 64), expected[pes - 1]) << pes << " PEs";
  }
}

TEST(GridSize, PesBoundToCoresOfTheirOwnUseThoseCores) {
  for (int pes = 1; pes <= 8; ++pes) {
    EXPECT_EQ(blocks_per_pe(1, 16, pes, 64), 1) << pes << " PEs, one core each";
    EXPECT_EQ(blocks_per_pe(2, 16, pes, 64), 2) << pes << " PEs, two cores each";
  }
  // Bound to one of two 8-core sockets: the node's PEs split over the sockets.
  EXPECT_EQ(blocks_per_pe(8, 16, 4, 64), 4);
  EXPECT_EQ(blocks_per_pe(8, 16, 8, 64), 2);
}

TEST(GridSize, MorePesThanCoresStillGetOneBlock) {
  for (int pes = 1; pes <= 8; ++pes)
    EXPECT_EQ(blocks_per_pe(2, 2, pes, 64), pes <= 2 ? 2 / pes : 1);
  EXPECT_EQ(blocks_per_pe(0, 0, 0, 0), 1);
  EXPECT_EQ(blocks_per_pe(-3, 4, 2, 8), 1);
}

TEST(GridSize, TheCapBoundsTheShare) {
  EXPECT_EQ(blocks_per_pe(64, 64, 1, 4), 4);
  EXPECT_EQ(blocks_per_pe(64, 64, 2, 40), 32);
  // A node count below the mask's (a wrong hardware count) is read as the mask's.
  EXPECT_EQ(blocks_per_pe(8, 4, 2, 64), 4);
}

TEST(GridSize, TheProcessSeesAtLeastOneCore) {
  EXPECT_GE(mask_cores(), 1);
  EXPECT_GE(node_cores(), mask_cores());
}

}  // namespace
}  // namespace tessera::detail
