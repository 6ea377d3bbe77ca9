// The device barrier: many iterations in one kernel and across kernels, no reset.
#include <cstdint>

#include "device_test_util.hpp"

namespace tessera::device_test {
namespace {

using harness::run_pes;

template <class G>
class DeviceBarrier : public ::testing::Test {};
using Groups = ::testing::Types<td::Thread, td::Warp, td::Block>;
TYPED_TEST_SUITE(DeviceBarrier, Groups);

// Each round every PE writes the round number into its slot on its right neighbour, then
// barriers; the neighbour must see it. A second barrier keeps round r + 1's write from racing
// round r's read.
TYPED_TEST(DeviceBarrier, OrdersEveryRoundOfWritesOverManyIterations) {
  using G = TypeParam;
  run_pes(4, [](Runtime& rt) {
    const auto ctx = rt.device_context();
    auto slot = rt.alloc<std::uint64_t>(1);
    auto bad = rt.alloc<std::uint64_t>(1);
    slot[0] = bad[0] = 0;
    rt.barrier();
    for (int kernel = 0; kernel < 3; ++kernel) {
      run_kernel<G>(rt, [&, ctx, kernel](G g) {
        const int right = (ctx.my_pe + 1) % ctx.n_pes;
        for (std::uint64_t r = 1; r <= 300; ++r) {
          const std::uint64_t value = static_cast<std::uint64_t>(kernel) * 1000 + r;
          // A plain (non-atomic, multi-word-capable) put: only the barrier orders it.
          td::put_nbi(g, ctx, td::make_tile(slot.get(), 1),
                      td::make_tile<const std::uint64_t>(&value, 1), right);
          td::barrier(g, ctx);
          if (slot[0] != value) ++bad[0];
          td::sync_all(g, ctx);
        }
      });
    }
    EXPECT_EQ(bad[0], 0u);
    EXPECT_EQ(slot[0], 2300u);
    rt.barrier();
  });
}

TEST(DeviceBarrier, AloneOnOnePeReturnsAtOnce) {
  run_pes(1, [](Runtime& rt) {
    const auto ctx = rt.device_context();
    run_kernel<td::Block>(rt, [ctx](td::Block g) {
      for (int i = 0; i < 1000; ++i) td::barrier(g, ctx);
    });
  });
}

}  // namespace
}  // namespace tessera::device_test
