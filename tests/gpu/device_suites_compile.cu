// The typed device suites of tests/device/device_suites.hpp, device_suites_sync.hpp,
// device_suites_calls.hpp and device_suites_checked.hpp (the host backend's source) compiled as
// GPU code without gtest: every RMA, signal, atomic, barrier, team, Device API II calls and
// alignment case, through the launch glue, so their kernels are instantiated for the device. For
// hipcc (clang 15 crashes on gtest's headers in its device pass, so gpu_device_suites_test.cu
// itself cannot be the HIP check); nvcc builds the same kernels in gpu_device_suites_test.
#include "../device/device_suites.hpp"
#include "../device/device_suites_calls.hpp"
#include "../device/device_suites_checked.hpp"
#include "../device/device_suites_sync.hpp"

namespace tessera::device_suites_compile {

template <std::size_t N>
std::uint64_t run_each(Runtime& rt, const suites::Case (&cases)[N]) {
  std::uint64_t v = 0;
  for (const auto& c : cases) v += c.run(rt).violations;
  return v;
}

std::uint64_t every_case(Runtime& rt) {
  return run_each(rt, suites::kRmaCases) + run_each(rt, suites::kLongTileCases) +
         run_each(rt, suites::kSignalCases) + run_each(rt, suites::kAtomicCases) +
         run_each(rt, suites::kBarrierCases) + run_each(rt, suites::kTeamCases) +
         run_each(rt, suites::kCallsCases) + run_each(rt, suites::kAlignmentCases);
}

}  // namespace tessera::device_suites_compile
