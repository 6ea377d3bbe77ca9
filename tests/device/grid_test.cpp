// grid_sync: the blocks of one launch meet, each time, and see each other's stores; a block
// that never comes ends the others' wait with a diagnostic; outside a launch it is refused.
#include <cstdint>
#include <string>
#include <vector>

#include "device_test_util.hpp"

namespace tessera::device_test {
namespace {

using harness::PeOptions;
using harness::run_pes;
using ::testing::AllOf;
using ::testing::HasSubstr;

PeOptions with_check(bool checked) {
  PeOptions o;
  o.checked = checked;
  return o;
}

// Each round every block writes the round into its own slot (a plain store), syncs the grid and
// reads every block's slot; a second grid_sync keeps round r + 1's writes from racing round r's
// reads. 48 blocks: more than the machine has cores, all co-resident on the host backend.
TEST(GridSync, EveryBlockSeesEveryBlocksStoresAfterEachSync) {
  for (bool checked : {false, true}) {
    run_pes(
        2,
        [](Runtime& rt) {
          const auto ctx = rt.device_context();
          constexpr int kGrid = 48;
          std::vector<std::uint64_t> slots(kGrid, 0);
          std::vector<std::uint64_t> bad(kGrid, 0);
          std::uint64_t* s = slots.data();
          std::uint64_t* b = bad.data();
          for (int kernel = 0; kernel < 2; ++kernel) {
            launch(rt.stream(), kGrid, [=](td::Block blk) {
              for (std::uint64_t r = 1; r <= 40; ++r) {
                const std::uint64_t value = static_cast<std::uint64_t>(kernel) * 100 + r;
                if (blk.rank() == 0) s[blk.block_id()] = value;
                td::grid_sync(blk, ctx);
                for (int i = blk.rank(); i < blk.grid_size(); i += blk.size()) {
                  if (s[i] != value) ++b[blk.block_id()];
                }
                td::grid_sync(blk, ctx);
              }
            });
            rt.stream().synchronize();
          }
          for (int i = 0; i < kGrid; ++i) {
            EXPECT_EQ(bad[static_cast<std::size_t>(i)], 0u) << "block " << i;
            EXPECT_EQ(slots[static_cast<std::size_t>(i)], 140u);
          }
        },
        with_check(checked));
  }
}

// grid_sync between the blocks, then the cross-PE barrier by block 0 alone: the two compose.
TEST(GridSync, ComposesWithTheCrossPeBarrierOfOneBlock) {
  run_pes(3, [](Runtime& rt) {
    const auto ctx = rt.device_context();
    auto cell = rt.alloc<std::uint64_t>(1);
    cell[0] = 0;
    rt.barrier();
    std::uint64_t bad = 0;
    std::uint64_t* bad_p = &bad;
    std::uint64_t* c = cell.get();
    launch(rt.stream(), 4, [=](td::Block blk) {
      for (std::uint64_t r = 1; r <= 30; ++r) {
        const int right = (ctx.my_pe + 1) % ctx.n_pes;
        if (blk.block_id() == 1 && blk.rank() == 0) {
          td::atomic_store(ctx, c, r, right, td::Sem::relaxed);
        }
        td::grid_sync(blk, ctx);
        if (blk.block_id() == 0) td::barrier(blk, ctx);
        td::grid_sync(blk, ctx);
        if (blk.block_id() == 3 && td::atomic_load(ctx, c, ctx.my_pe) != r) ++*bad_p;
        td::grid_sync(blk, ctx);
        if (blk.block_id() == 0) td::sync_all(blk, ctx);
        td::grid_sync(blk, ctx);
      }
    });
    rt.stream().synchronize();
    EXPECT_EQ(bad, 0u);
    rt.barrier();
  });
}

TEST(GridSync, TimesOutNamingHowManyBlocksArrived) {
  run_pes(1, [](Runtime& rt) {
    auto ctx = rt.device_context();
    ctx.timeout_ns = 200'000'000;
    launch(rt.stream(), 3, [=](td::Block blk) {
      if (blk.block_id() != 2) td::grid_sync(blk, ctx);
    });
    Error e = expect_error(ErrorCode::timeout, [&] { rt.stream().synchronize(); });
    EXPECT_THAT(e.message(),
                AllOf(HasSubstr("grid_sync on PE 0 (block "),
                      HasSubstr("in grid sync #1: 2 of 3 blocks of the launch arrived"),
                      HasSubstr("every block of the grid must call grid_sync")));
  });
}

TEST(GridSync, OutsideALaunchIsRefused) {
  run_pes(1, [](Runtime& rt) {
    const auto ctx = rt.device_context();
    try {
      td::grid_sync(td::Block(0, 2), ctx);
      ADD_FAILURE() << "grid_sync outside a launch returned";
    } catch (const td::Failure& f) {
      EXPECT_THAT(std::string(f.what()),
                  AllOf(HasSubstr("grid_sync on PE 0 (block 0 of 2)"),
                        HasSubstr("not called from a grid that tessera::launch runs")));
    }
  });
}

}  // namespace
}  // namespace tessera::device_test
