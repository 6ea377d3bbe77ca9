// Element alignment, misaligned words and allocation bounds (checked_cases.hpp) with PEs as
// threads, under TESSERA_CHECK=0 and =1, for every group. Built with _GLIBCXX_ASSERTIONS, which
// is what turns a misaligned std::atomic_ref into a failure on the host.
#include "checked_cases.hpp"

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

template <class G>
class CheckedByGroup : public ::testing::Test {};
using Groups = ::testing::Types<td::Thread, td::Warp, td::Block>;
TYPED_TEST_SUITE(CheckedByGroup, Groups);

TYPED_TEST(CheckedByGroup, OneElementTilesOfUnderAlignedTypesMoveWithoutMisalignedAccesses) {
  for (bool checked : {false, true}) {
    run_pes(2, cases::one_element_tiles_of_under_aligned_types<TypeParam>, with_check(checked));
  }
}

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

}  // namespace
}  // namespace tessera::device_test
