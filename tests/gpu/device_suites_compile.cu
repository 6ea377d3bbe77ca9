// The typed device suites of tests/device/device_suites.hpp, device_suites_sync.hpp,
// device_suites_calls.hpp and device_suites_checked.hpp (the host backend's source) compiled as
// GPU code without gtest (every table of device_suites_all.hpp): every RMA, signal, atomic,
// barrier, team, Device API II calls and alignment case, through the launch glue, so their kernels
// are instantiated for the device. For hipcc (clang 15 crashes on gtest's headers in its device
// pass, so gpu_device_suites_test.cu itself cannot be the HIP check); nvcc builds the same kernels
// in gpu_device_suites_test.
#include "../device/device_suites_all.hpp"

namespace tessera::device_suites_compile {

std::uint64_t every_case(Runtime& rt) {
  std::uint64_t v = 0;
  for (const suites::Table& t : suites::kTables) {
    for (std::size_t i = 0; i < t.size; ++i) v += t.cases[i].run(rt).violations;
  }
  return v;
}

}  // namespace tessera::device_suites_compile
