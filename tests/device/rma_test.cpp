// put / get / put_nbi / get_nbi for every group, element size and tile shape, between every
// pair of PEs including a PE and itself (device_suites.hpp's kernels, run by suite_runner.hpp:
// PEs as threads with checked mode off and on, or as processes); Tile's host-side views; a
// 32 MiB put from a host buffer outside the heap (host backend only).
#include <cstdint>
#include <vector>

#include "suite_runner.hpp"

namespace tessera::device_test {
namespace {

// Every op, shape, element size and group: device_suites.hpp (the same kernels run on the GPU).
class Rma : public ::testing::TestWithParam<suites::Case> {};

TEST_P(Rma, EveryOpMovesEveryShapeBetweenEveryPairOfPes) { run_suite_case(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Suite, Rma, ::testing::ValuesIn(suites::kRmaCases), suite_case_name);

// A blocking get of 3001 words: several 16-byte pieces per thread of a GPU block and a tail.
class LongTile : public ::testing::TestWithParam<suites::Case> {};

TEST_P(LongTile, Case) { run_suite_case(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Suite, LongTile, ::testing::ValuesIn(suites::kLongTileCases),
                         suite_case_name);

TEST(Tile, SubViewAndConstConversionKeepTheLeadingDimension) {
  std::vector<int> buf(10 * 16);
  td::Tile<int> t(buf.data(), 10, 12, 16);
  EXPECT_FALSE(t.is_contiguous());
  auto s = t.sub(2, 3, 4, 5);
  EXPECT_EQ(s.data, buf.data() + 2 * 16 + 3);
  EXPECT_EQ(s.rows, 4u);
  EXPECT_EQ(s.cols, 5u);
  EXPECT_EQ(s.ld, 16u);
  td::Tile<const int> c = s;
  EXPECT_EQ(c.data, s.data);
  EXPECT_EQ(c.extent_bytes(), (3 * 16 + 5) * sizeof(int));
  EXPECT_TRUE(td::make_tile(buf.data(), 7).is_contiguous());
  EXPECT_TRUE(td::Tile<int>(buf.data(), 3, 16, 16).is_contiguous());
  EXPECT_TRUE(td::Tile<int>(buf.data(), 1, 5, 16).is_contiguous());
}

harness::PeOptions big_heap() {
  harness::PeOptions o;
  o.heap_size = std::size_t{128} << 20;
  return o;
}

TEST(RmaHost, LargeContiguousPutFromOutsideTheHeapArrivesWhole) {
  TESSERA_SKIP_ACROSS_PROCESSES();
  harness::run_pes(
      2,
      [](Runtime& rt) {
        constexpr std::size_t kN = std::size_t{4} << 20;  // 32 MiB of uint64: memcpy's large path
        auto dst = rt.alloc<std::uint64_t>(kN);
        std::vector<std::uint64_t> src(kN);
        for (std::size_t i = 0; i < kN; ++i) src[i] = i * 3 + static_cast<unsigned>(rt.pe());
        const auto ctx = rt.device_context();
        const int right = (rt.pe() + 1) % rt.n_pes();
        run_kernel<td::Block>(rt, [&, ctx](td::Block g) {
          td::put(g, ctx, td::make_tile(dst.get(), kN),
                  td::make_tile<const std::uint64_t>(src.data(), kN), right);
        });
        rt.barrier();
        const unsigned left = static_cast<unsigned>((rt.pe() + 1) % 2);
        for (std::size_t i = 0; i < kN; ++i) ASSERT_EQ(dst[i], i * 3 + left) << i;
        rt.barrier();
      },
      big_heap());
}

}  // namespace
}  // namespace tessera::device_test
