// Peers' control pages are found through Context::peer_control, never at an offset from a heap
// base (issue 17 item 1 on the GPUs' IPC path, where the control area is an allocation of its
// own). Two PEs as threads of this process over hand-made Contexts whose heaps and control pages
// are four unrelated allocations: the whole-job barrier and the abort broadcast must reach each
// PE's own control page and leave both heaps untouched. With the control words located by heap
// arithmetic (control_page - heap base + the peer's heap base, as before this test), PE 0's
// arrival would land past PE 1's 4 KiB heap, in memory that is no control page, and the barrier
// would time out.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "tessera/device/device.hpp"

namespace tessera::device_test {
namespace {

namespace td = tessera::device;

constexpr std::size_t kHeapWords = 512;
constexpr std::size_t kControlWords = td::kControlAreaBytes / sizeof(std::uint64_t);

// Two PEs' memory and a Context for each, as a runtime would hand them out.
struct TwoPes {
  std::array<std::vector<std::uint64_t>, 2> heaps{std::vector<std::uint64_t>(kHeapWords),
                                                  std::vector<std::uint64_t>(kHeapWords)};
  std::array<std::vector<std::uint64_t>, 2> controls{std::vector<std::uint64_t>(kControlWords),
                                                     std::vector<std::uint64_t>(kControlWords)};
  std::array<char*, 2> bases{};
  std::array<std::uint64_t*, 2> control_pages{};

  TwoPes() {
    for (std::size_t p = 0; p < 2; ++p) {
      bases[p] = reinterpret_cast<char*>(heaps[p].data());
      control_pages[p] = controls[p].data();
    }
  }

  td::Context context(int pe, std::uint64_t timeout_ns) const {
    td::Context ctx{};
    ctx.my_pe = pe;
    ctx.n_pes = 2;
    ctx.peer_base = bases.data();
    ctx.heap_size = kHeapWords * sizeof(std::uint64_t);
    ctx.timeout_ns = timeout_ns;
    ctx.control_page = control_pages[static_cast<std::size_t>(pe)];
    ctx.peer_control = control_pages.data();
    ctx.control_offset = 1u << 21;
    return ctx;
  }

  bool heaps_untouched() const {
    return std::all_of(heaps.begin(), heaps.end(), [](const std::vector<std::uint64_t>& h) {
      return std::all_of(h.begin(), h.end(), [](std::uint64_t w) { return w == 0; });
    });
  }
};

TEST(ControlTable, BarriersArriveAtEachPesOwnControlPage) {
  TwoPes job;
  constexpr int kRounds = 50;
  std::array<std::string, 2> errors;
  std::vector<std::thread> pes;
  for (int pe = 0; pe < 2; ++pe) {
    pes.emplace_back([&, pe] {
      const td::Context ctx = job.context(pe, 20'000'000'000ull);
      try {
        for (int i = 0; i < kRounds; ++i) td::barrier(td::Thread{}, ctx);
      } catch (const td::Failure& f) {
        errors[static_cast<std::size_t>(pe)] = f.what();
      }
    });
  }
  for (std::thread& t : pes) t.join();
  for (std::size_t p = 0; p < 2; ++p) {
    EXPECT_EQ(errors[p], "") << "PE " << p;
    const std::vector<std::uint64_t>& c = job.controls[p];
    EXPECT_EQ(c[td::Context::kBarrierArrivals], 2u * kRounds) << "PE " << p;
    EXPECT_EQ(c[td::Context::kBarrierEntered], std::uint64_t{kRounds}) << "PE " << p;
    // Every PE noted each barrier it entered in every PE's seen words.
    EXPECT_EQ(c[td::Context::kBarrierSeen + 0], std::uint64_t{kRounds}) << "PE " << p;
    EXPECT_EQ(c[td::Context::kBarrierSeen + 1], std::uint64_t{kRounds}) << "PE " << p;
  }
  EXPECT_TRUE(job.heaps_untouched());
}

TEST(ControlTable, AWaitThatTimesOutRaisesTheAbortInEveryMappedControlPage) {
  TwoPes job;
  const td::Context ctx = job.context(0, 20'000'000);  // 20 ms
  try {
    (void)td::wait_until(td::Thread{}, ctx, job.heaps[0].data(), td::Cmp::eq, 1);
    ADD_FAILURE() << "the wait returned";
  } catch (const td::Failure& f) {
    EXPECT_EQ(f.code(), td::FailureCode::timeout);
  }
  const std::uint64_t word = td::encode_abort(0, td::AbortReason::failed);
  EXPECT_EQ(job.controls[0][td::Context::kAbortWord], word);
  EXPECT_EQ(job.controls[1][td::Context::kAbortWord], word);
  EXPECT_TRUE(job.heaps_untouched());
}

TEST(ControlTable, APeerWhoseControlPageIsNotMappedIsSkipped) {
  TwoPes job;
  job.control_pages[1] = nullptr;  // PE 1's page is not mapped here
  const td::Context ctx = job.context(0, 0);
  EXPECT_EQ(ctx.control_word(td::Context::kAbortWord, 1), nullptr);
  EXPECT_EQ(ctx.control_word(td::Context::kAbortWord, 0),
            &job.controls[0][td::Context::kAbortWord]);
  EXPECT_EQ(ctx.control_wire_offset(td::Context::kAbortWord),
            ctx.control_offset + 8 * td::Context::kAbortWord);
  td::detail::broadcast_abort(ctx);
  EXPECT_EQ(job.controls[0][td::Context::kAbortWord], td::encode_abort(0, td::AbortReason::failed));
  EXPECT_EQ(job.controls[1][td::Context::kAbortWord], 0u);
}

}  // namespace
}  // namespace tessera::device_test
