// Element alignment (device_suites_checked.hpp's cases, the kernels gpu_device_suites_test runs
// on the GPU), misaligned words and allocation bounds (checked_cases.hpp) with PEs as threads,
// under TESSERA_CHECK=0 and =1, for every group. Built with _GLIBCXX_ASSERTIONS, which is what
// turns a misaligned std::atomic_ref into a failure on the host.
#include <atomic>

#include "checked_cases.hpp"
#include "device_suites_checked.hpp"
#include "suite_runner.hpp"

namespace tessera::device_test {
namespace {

using harness::PeOptions;
using harness::run_pes;
namespace cases = checked_cases;

PeOptions with_check(bool checked) {
  PeOptions o;
  o.checked = checked;
  return o;
}

// 1x1 tiles of under-aligned types (Thread, Warp, Block), checked mode off and on.
class Alignment : public ::testing::TestWithParam<suites::Case> {};

TEST_P(Alignment, Case) { run_suite_case(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Suite, Alignment, ::testing::ValuesIn(suites::kAlignmentCases),
                         suite_case_name);

template <class G>
class CheckedByGroup : public ::testing::Test {};
using Groups = ::testing::Types<td::Thread, td::Warp, td::Block>;
TYPED_TEST_SUITE(CheckedByGroup, Groups);

TYPED_TEST(CheckedByGroup, MisalignedAtomicAndSignalWordsAreRefusedWithAddressAndAlignment) {
  run_pes(2, cases::misaligned_words_are_refused<TypeParam>, with_check(true));
}

TEST(CheckedMode, AllocationBoundsAreCheckedWithFiveThousandLiveAllocations) {
  run_pes(
      2, [](Runtime& rt) { cases::bounds_checked_with_many_allocations(rt, 5000); },
      with_check(true));
}

TEST(CheckedMode, AddressesOutsideTheHeapArePrintedInHex) {
  run_pes(
      2,
      [](Runtime& rt) {
        const auto ctx = rt.device_context();
        std::vector<std::uint64_t> not_symmetric(4), src(4);
        std::uint64_t* dst = not_symmetric.data();
        const std::uint64_t* from = src.data();
        launch(rt.stream(), 1, [=](td::Block g) {
          td::put(g, ctx, td::make_tile(dst, 4), td::make_tile(from, 4), 1 - ctx.my_pe);
        });
        Error e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
        EXPECT_THAT(e.message(),
                    ::testing::HasSubstr("put on PE " + std::to_string(rt.pe()) +
                                         ": destination tile [address " + cases::hex_address(dst) +
                                         " (outside the heap), +32 "
                                         "bytes) is not inside the symmetric heap"));
      },
      with_check(true));
}

// Kernels bound their pointers by the table while the host allocates past several of its
// growths (1024, 2048, 4096 entries): every lookup during the switches finds the block (readers
// of a replaced array retry), and the block's bound still holds after them.
TEST(CheckedMode, AllocationChecksHoldWhileTheTableGrows) {
  run_pes(
      1,
      [](Runtime& rt) {
        const auto ctx = rt.device_context();
        auto target = rt.alloc<std::uint32_t>(16);
        std::vector<std::uint32_t> src(32, 5);
        std::uint32_t* dst = target.get();
        const std::uint32_t* from = src.data();
        std::atomic<bool> done{false};
        std::atomic<std::uint64_t> rounds{0};
        std::atomic<bool>* stop = &done;
        std::atomic<std::uint64_t>* count = &rounds;
        launch(rt.stream(), 1, [=](td::Block g) {
          // Bounded: a host that never sets `stop` ends the loop after 2^26 rounds.
          for (std::uint64_t i = 0; i < (std::uint64_t{1} << 26) && !stop->load(); ++i) {
            td::put(g, ctx, td::make_tile(dst, 16), td::make_tile(from, 16), 0);
            count->fetch_add(1, std::memory_order_relaxed);
          }
        });
        std::vector<Symmetric<std::uint32_t>> blocks;
        for (int i = 0; i < 5000; ++i) blocks.push_back(rt.alloc<std::uint32_t>(16));
        done.store(true);
        rt.stream().synchronize();
        EXPECT_GT(rounds.load(), 0u);
        launch(rt.stream(), 1, [=](td::Block g) {
          td::put(g, ctx, td::make_tile(dst, 32), td::make_tile(from, 32), 0);
        });
        Error e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
        EXPECT_THAT(e.message(), ::testing::HasSubstr("runs past the end of its allocation #0"));
      },
      with_check(true));
}

// A misaligned-word failure record, as a Triton kernel in checked mode writes it, is reported
// with the message the C++ device API reports for the same word.
TEST(CheckedMode, MisalignedRecordReadsLikeTheCppDiagnostic) {
  run_pes(
      2,
      [](Runtime& rt) {
        const auto ctx = rt.device_context();
        auto heap = rt.alloc<std::uint64_t>(2);
        auto* word = reinterpret_cast<std::uint64_t*>(reinterpret_cast<char*>(heap.get()) + 4);
        launch(rt.stream(), 1,
               [=](td::Block) { td::signal(ctx, word, 1, td::SignalOp::set, ctx.my_pe); });
        Error cpp = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
        std::uint64_t* r = ctx.failure_record();
        ASSERT_NE(r, nullptr);
        using R = td::FailureRecord;
        std::uint64_t op = 0;
        while (op < td::kFailureOpCount && std::string(td::kFailureOps[op]) != "signal") ++op;
        r[R::kState] = R::kWriting;
        r[R::kCode] = static_cast<std::uint64_t>(td::FailureCode::invalid_argument);
        r[R::kKind] = static_cast<std::uint64_t>(td::FailureKind::misaligned);
        r[R::kOp] = op;
        r[R::kPe] = static_cast<std::uint64_t>(rt.pe());
        r[R::kArgs] = reinterpret_cast<std::uintptr_t>(word);
        r[R::kArgs + 1] = 8;
        r[R::kArgs + 2] = 3;  // "signal"
        r[R::kState] = R::kComplete;
        Error triton =
            expect_error(ErrorCode::invalid_argument, [&] { rt.check_device_failure(); });
        EXPECT_EQ(triton.message(), cpp.message());
        EXPECT_THAT(triton.message(),
                    ::testing::HasSubstr("signal on PE " + std::to_string(rt.pe()) +
                                         ": signal at address " + cases::hex_address(word)));
      },
      with_check(true));
}

}  // namespace
}  // namespace tessera::device_test
