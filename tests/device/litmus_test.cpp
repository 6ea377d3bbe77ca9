// The litmus tests with PEs as threads (the same code runs across processes as device_litmus
// under mpirun, and on the cuda backend as tests/gpu/gpu_litmus_test).
#include "litmus.hpp"
#include "device_test_util.hpp"
#include "harness/sanitized.hpp"

namespace tessera::device_test {
namespace {

class Litmus : public ::testing::TestWithParam<int> {};

TEST_P(Litmus, EveryCaseHasZeroViolations) {
  const int n = GetParam();
  // Fewer rounds than across processes: threads share the test's time budget. Under a sanitizer
  // each round's spin handshake costs ~100x more, and a race shows in the first rounds.
  const std::uint64_t iterations = harness::repetitions<std::uint64_t>(20000, 2000);
  harness::run_pes(n, [&](Runtime& rt) {
    litmus::run_all(
        rt, iterations,
        [&](const char* group, const litmus::Case& c, std::uint64_t, const litmus::Result& res) {
          EXPECT_EQ(res.violations, 0u)
              << c.name << " (" << group << ") on PE " << rt.pe() << ": " << res.detail;
        });
  });
}

INSTANTIATE_TEST_SUITE_P(Pes, Litmus, ::testing::Values(1, 2, 4));

}  // namespace
}  // namespace tessera::device_test
