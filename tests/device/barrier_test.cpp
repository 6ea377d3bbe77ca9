// The whole-job device barrier: many rounds in one kernel and across kernels with no reset, for
// Thread, Warp and Block, and a barrier alone on its PE returning at once (device_suites_sync.hpp's
// kernels, run by suite_runner.hpp: PEs as threads with checked mode off and on, or as
// processes).
#include "device_suites_sync.hpp"
#include "suite_runner.hpp"

namespace tessera::device_test {
namespace {

class DeviceBarrier : public ::testing::TestWithParam<suites::Case> {};

TEST_P(DeviceBarrier, Case) { run_suite_case(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Suite, DeviceBarrier, ::testing::ValuesIn(suites::kBarrierCases),
                         suite_case_name);

}  // namespace
}  // namespace tessera::device_test
