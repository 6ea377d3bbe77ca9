// The cases of checked_test with PEs as processes: `mpirun -np 2 device_checked_proc_test`, each
// process one PE of a job made from the environment (TESSERA_CHECK chooses checked mode): the
// alignment cases of device_suites_checked.hpp and the host-only checked_cases.hpp.
#include <cstdlib>
#include <optional>
#include <string>

#include "checked_cases.hpp"
#include "device_suites_checked.hpp"

namespace tessera::device_test {
namespace {

namespace cases = checked_cases;

// The PE's Runtime, made before the first test and finalized after the last (every process runs
// the same tests in the same order, so the collective calls pair up).
std::optional<Runtime> the_runtime;

class ProcessPe : public ::testing::Environment {
 public:
  void SetUp() override {
    auto options = Options::from_env();
    if (std::getenv("TESSERA_HEAP_SIZE") == nullptr) options.heap_size = std::size_t{64} << 20;
    the_runtime.emplace(Runtime::init(options));
  }
  void TearDown() override {
    if (the_runtime) the_runtime->finalize();
    the_runtime.reset();
  }
};
[[maybe_unused]] ::testing::Environment* const kProcessPe =
    ::testing::AddGlobalTestEnvironment(new ProcessPe);

Runtime& runtime() { return *the_runtime; }

// device_suites_checked.hpp's cases (1x1 tiles of under-aligned types, Thread, Warp, Block).
class Alignment : public ::testing::TestWithParam<suites::Case> {};

TEST_P(Alignment, Case) {
  Runtime& rt = runtime();
  const suites::Result res = GetParam().run(rt);
  EXPECT_EQ(res.violations, 0u) << GetParam().name << " on PE " << rt.pe() << " of " << rt.n_pes()
                                << ": first mismatch: " << res.detail;
}

std::string alignment_case_name(const ::testing::TestParamInfo<suites::Case>& param) {
  return param.param.name;
}

INSTANTIATE_TEST_SUITE_P(Suite, Alignment, ::testing::ValuesIn(suites::kAlignmentCases),
                         alignment_case_name);

template <class G>
class CheckedProcByGroup : public ::testing::Test {};
using Groups = ::testing::Types<td::Thread, td::Warp, td::Block>;
TYPED_TEST_SUITE(CheckedProcByGroup, Groups);

TYPED_TEST(CheckedProcByGroup, MisalignedAtomicAndSignalWordsAreRefusedWithAddressAndAlignment) {
  cases::misaligned_words_are_refused<TypeParam>(runtime());
}

TEST(CheckedProc, AllocationBoundsAreCheckedWithFiveThousandLiveAllocations) {
  cases::bounds_checked_with_many_allocations(runtime(), 5000);
}

}  // namespace
}  // namespace tessera::device_test
