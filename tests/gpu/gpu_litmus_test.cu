// The litmus suite of tests/device/litmus.hpp on the cuda backend: the same source the host
// backend runs (device_litmus_test, device_litmus), compiled by nvcc, every case for Block,
// Warp and Thread groups, between PEs that are processes sharing the GPU (gpu_test_env.hpp).
// One gtest case per (group, case), so run_gpu_cases.sh runs each as its own job.
//
// Rounds: TESSERA_LITMUS_ROUNDS (default 200; Warp and Thread a tenth). Without MPS the PEs'
// kernels time-slice the GPU and every handshake waits for a context switch, so the default
// is small enough to finish either way.
#include <cstdlib>
#include <string>
#include <vector>

#include "../device/litmus.hpp"
#include "gpu_test_env.hpp"

namespace tessera::gpu_test {
namespace {

namespace td = tessera::device;

struct Param {
  const char* group;
  litmus::Case c;
  std::uint64_t divisor;  // rounds = TESSERA_LITMUS_ROUNDS / divisor
};

template <class G>
void add_cases(std::vector<Param>& out, std::uint64_t divisor) {
  for (const auto& c : litmus::kCases<G>) out.push_back({litmus::group_name<G>(), c, divisor});
}

std::vector<Param> all_cases() {
  std::vector<Param> out;
  add_cases<td::Block>(out, 1);
  add_cases<td::Warp>(out, 10);
  add_cases<td::Thread>(out, 10);
  return out;
}

std::uint64_t rounds() {
  const char* v = std::getenv("TESSERA_LITMUS_ROUNDS");
  return v != nullptr ? std::strtoull(v, nullptr, 10) : 200;
}

class GpuLitmus : public ::testing::TestWithParam<Param> {};

TEST_P(GpuLitmus, ZeroViolations) {
  TESSERA_SKIP_WITHOUT_CUDA();
  const Param& p = GetParam();
  auto rt = Runtime::init(gpu_options());
  const std::uint64_t it = std::max<std::uint64_t>(1, rounds() / p.divisor);
  const auto res = p.c.run(rt, it);
  EXPECT_EQ(res.violations, 0u) << p.c.name << " (" << p.group << ") on PE " << rt.pe() << ", "
                                << it << " rounds: " << res.detail;
}

INSTANTIATE_TEST_SUITE_P(Cases, GpuLitmus, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Param>& pi) {
                           return std::string(pi.param.group) + "_" + pi.param.c.name;
                         });

}  // namespace
}  // namespace tessera::gpu_test
