// The typed device suites of tests/device/device_suites.hpp, device_suites_sync.hpp,
// device_suites_calls.hpp and device_suites_checked.hpp on the cuda backend: the same source the
// host backend runs (device_rma_test, device_signal_test, device_atomic_test,
// device_barrier_test, device_team_test, device_calls_test, device_checked_test), compiled by
// nvcc -- RMA for 12 (group, element) pairs, every tile shape and op between every pair of PEs,
// and a blocking get of 3001 words by a Block (several 16-byte pieces per thread and a 4-byte
// tail); put_signal over twenty epochs, wait_until for every comparison, wait_until_all/any for
// Thread, Warp and Block; every remote atomic with its exact result, a contended fetch_add from
// every thread of every PE, and atomic_add to every PE from the four blocks of one launch;
// rounds of puts ordered by the whole-job barrier and by the barriers of two strided teams
// running at once, for Thread, Warp and Block, and barriers alone on a PE; the Device API II
// calls (pointer and byte RMA forms, the pointer put_signal, wait_until's value,
// wait_until_some/any draining without resets, the grouped wait_until_any for Thread, Warp and
// Block; p/g, the tests, Epoch::advance, float and double atomic adds); 1x1 tiles of
// under-aligned structs at odd offsets for Thread, Warp and Block (a too-wide access is a
// misaligned-address fault here) -- between PEs that are processes sharing the GPU
// (gpu_test_env.hpp). One gtest case per suite case, so run_gpu_cases.sh runs each as its own
// job; the names are the host tests' names with the suite in front.
#include <ostream>
#include <string>
#include <vector>

#include "../device/device_suites_all.hpp"
#include "gpu_test_env.hpp"

namespace tessera::gpu_test {
namespace {

struct Param {
  const char* suite;
  suites::Case c;
};

// gtest prints a case by its name.
[[maybe_unused]] void PrintTo(const Param& p, std::ostream* os) {
  *os << p.suite << "_" << p.c.name;
}

std::vector<Param> all_cases() {
  std::vector<Param> out;
  for (const suites::Table& t : suites::kTables) {
    for (std::size_t i = 0; i < t.size; ++i) out.push_back({t.suite, t.cases[i]});
  }
  return out;
}

class GpuDeviceSuites : public ::testing::TestWithParam<Param> {};

TEST_P(GpuDeviceSuites, NoMismatch) {
  TESSERA_SKIP_WITHOUT_CUDA();
  const Param& p = GetParam();
  auto rt = Runtime::init(gpu_options());
  const auto res = p.c.run(rt);
  EXPECT_EQ(res.violations, 0u) << p.suite << " " << p.c.name << " on PE " << rt.pe() << " of "
                                << rt.n_pes() << ": first mismatch: " << res.detail;
}

INSTANTIATE_TEST_SUITE_P(Cases, GpuDeviceSuites, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Param>& pi) {
                           return std::string(pi.param.suite) + "_" + pi.param.c.name;
                         });

}  // namespace
}  // namespace tessera::gpu_test
