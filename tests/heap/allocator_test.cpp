// The allocator alone: first fit, coalescing, determinism.
#include <gtest/gtest.h>

#include "heap/allocator.hpp"

namespace tessera::detail {
namespace {

TEST(Allocator, FirstFitRoundsToGranulesAndCoalesces) {
  Allocator a(0, 1 << 16);
  auto x = a.allocate(1, 64);
  auto y = a.allocate(65, 64);
  auto z = a.allocate(64, 64);
  ASSERT_TRUE(x && y && z);
  EXPECT_EQ(*x, 0u);
  EXPECT_EQ(*y, 64u);
  EXPECT_EQ(*z, 192u);
  EXPECT_EQ(a.block_size(*y), 128u);
  EXPECT_TRUE(a.release(*x));
  EXPECT_TRUE(a.release(*z));
  EXPECT_EQ(a.largest_free(), (1u << 16) - 192u);
  EXPECT_TRUE(a.release(*y));
  EXPECT_EQ(a.largest_free(), 1u << 16);
  EXPECT_EQ(a.free_bytes(), 1u << 16);
  EXPECT_EQ(a.live_blocks(), 0u);
}

TEST(Allocator, AlignmentPaddingReturnsWithTheBlock) {
  Allocator a(0, 1 << 20);
  auto small = a.allocate(64, 64);
  auto aligned = a.allocate(64, 4096);
  ASSERT_TRUE(small && aligned);
  EXPECT_EQ(*aligned, 4096u);
  EXPECT_EQ(a.block_containing(4096 + 10), 4096u);
  EXPECT_FALSE(a.block_containing(2000).has_value());
  EXPECT_TRUE(a.release(*aligned));
  EXPECT_TRUE(a.release(*small));
  EXPECT_EQ(a.free_bytes(), 1u << 20);
  EXPECT_EQ(a.largest_free(), 1u << 20);
}

TEST(Allocator, RejectsWhatDoesNotFitAndDoubleRelease) {
  Allocator a(0, 4096);
  EXPECT_FALSE(a.allocate(8192, 64).has_value());
  EXPECT_FALSE(a.allocate(0, 64).has_value());
  auto x = a.allocate(4096, 64);
  ASSERT_TRUE(x);
  EXPECT_FALSE(a.allocate(1, 64).has_value());
  EXPECT_TRUE(a.release(*x));
  EXPECT_FALSE(a.release(*x));
  EXPECT_FALSE(a.release(12345));
}

}  // namespace
}  // namespace tessera::detail
