// Host launch: co-resident blocks, stream order, failures reported at synchronize.
#include <atomic>
#include <cstdint>
#include <vector>

#include "device_test_util.hpp"

namespace tessera::device_test {
namespace {

using harness::run_pes;

// Block b waits for block b + 1's signal before signalling block b - 1: only co-resident
// blocks finish (the last block starts the chain).
struct Chain {
  void operator()(td::Block blk, td::Context ctx, std::uint64_t* flags, int* order) const {
    const int b = blk.block_id();
    if (b + 1 < blk.grid_size()) td::wait_until(blk, ctx, &flags[b + 1], td::Cmp::ge, 1);
    order[b] = blk.grid_size() - b;
    td::signal(ctx, &flags[b], 1, td::SignalOp::set, ctx.my_pe);
  }
};

TEST(Launch, BlocksAreCoResidentSoAChainAcrossBlocksFinishes) {
  run_pes(2, [](Runtime& rt) {
    for (int grid : {3, 24, 2}) {
      auto flags = rt.alloc<std::uint64_t>(static_cast<std::size_t>(grid));
      for (int b = 0; b < grid; ++b) flags[static_cast<std::size_t>(b)] = 0;
      std::vector<int> order(static_cast<std::size_t>(grid), -1);
      launch(rt.stream(), grid, Chain{}, rt.device_context(), flags.get(), order.data());
      rt.stream().synchronize();
      for (int b = 0; b < grid; ++b) EXPECT_EQ(order[static_cast<std::size_t>(b)], grid - b);
    }
  });
}

TEST(Launch, BlocksSeeTheirIdAndGridSize) {
  Stream s(0);
  std::vector<std::atomic<int>> hits(7);
  launch(s, 7, [&hits](td::Block b) {
    EXPECT_EQ(b.grid_size(), 7);
    EXPECT_EQ(b.size(), 1);
    EXPECT_EQ(b.rank(), 0);
    hits[static_cast<std::size_t>(b.block_id())].fetch_add(1);
  });
  s.synchronize();
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
}

TEST(Launch, WorkRunsInStreamOrder) {
  Stream s(0);
  std::vector<int> log;
  for (int i = 0; i < 50; ++i) {
    launch(s, 1 + i % 3, [&log, i](td::Block b) {
      if (b.block_id() == 0) log.push_back(i);
    });
    s.enqueue([&log, i] { log.push_back(1000 + i); });
  }
  s.synchronize();
  ASSERT_EQ(log.size(), 100u);
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(log[static_cast<std::size_t>(2 * i)], i);
    EXPECT_EQ(log[static_cast<std::size_t>(2 * i + 1)], 1000 + i);
  }
}

TEST(Launch, AFailureIsReportedOnceAndLaterWorkIsSkippedUntilThen) {
  Stream s(3);
  int ran = 0;
  launch(s, 4, [](td::Block b) {
    if (b.block_id() == 2)
      td::platform::report_failure(td::FailureCode::invalid_argument, "block 2 says no");
  });
  s.enqueue([&ran] { ++ran; });
  Error e = expect_error(ErrorCode::invalid_argument, [&] { s.synchronize(); });
  EXPECT_THAT(e.message(), ::testing::HasSubstr("block 2 says no"));
  EXPECT_EQ(e.pe(), 3);
  EXPECT_EQ(ran, 0);
  s.enqueue([&ran] { ++ran; });
  s.synchronize();  // the failure was reported; the stream works again
  EXPECT_EQ(ran, 1);
}

TEST(Launch, GridMustHaveABlock) {
  Stream s(0);
  expect_error(ErrorCode::invalid_argument, [&] { launch(s, 0, [](td::Block) {}); });
}

TEST(Launch, FinalizeWaitsForQueuedWork) {
  std::atomic<int> done{0};
  run_pes(2,
          [&](Runtime& rt) { launch(rt.stream(), 2, [&done](td::Block) { done.fetch_add(1); }); });
  EXPECT_EQ(done.load(), 4);
}

}  // namespace
}  // namespace tessera::device_test
