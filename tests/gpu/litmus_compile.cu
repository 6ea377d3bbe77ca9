// The litmus suite of tests/device/litmus.hpp (the host backend's source) compiled as GPU code
// without gtest: every case for Block, Warp and Thread, through the launch glue, so its kernels
// are instantiated for the device. For hipcc (clang 15 crashes on gtest's headers in its
// device pass, so gpu_litmus_test.cu itself cannot be the HIP check); nvcc builds the same
// kernels in gpu_litmus_test.
#include "../device/litmus.hpp"

namespace tessera::litmus_compile {

template <class G>
std::uint64_t all_cases(Runtime& rt) {
  std::uint64_t v = 0;
  for (const auto& c : litmus::kCases<G>) v += c.run(rt, 1).violations;
  return v;
}

std::uint64_t every_group(Runtime& rt) {
  return all_cases<device::Block>(rt) + all_cases<device::Warp>(rt) + all_cases<device::Thread>(rt);
}

}  // namespace tessera::litmus_compile
