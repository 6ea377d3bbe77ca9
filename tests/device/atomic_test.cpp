// Remote atomics on int32/uint32/int64/uint64: every operation with its exact result, on a
// remote PE and on self, and a contended fetch_add from every thread of every PE
// (device_suites.hpp's kernels, run by suite_runner.hpp; the same kernels run on the GPU).
#include "suite_runner.hpp"

namespace tessera::device_test {
namespace {

class Atomic : public ::testing::TestWithParam<suites::Case> {};

TEST_P(Atomic, Case) { run_suite_case(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Suite, Atomic, ::testing::ValuesIn(suites::kAtomicCases), suite_case_name);

}  // namespace
}  // namespace tessera::device_test
