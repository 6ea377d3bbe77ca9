// The cuda backend's host side, on real PEs (processes): backend selection, the device heap,
// peer mapping, host put/get and calloc through device copies, the peer table kernels read.
#include <cstdint>
#include <vector>

#include "gpu_test_env.hpp"

namespace tessera::gpu_test {
namespace {

TEST(CudaRuntime, InitPicksTheCudaBackendAndAHeapPerPe) {
  TESSERA_SKIP_WITHOUT_CUDA();
  auto rt = Runtime::init(gpu_options());
  EXPECT_EQ(rt.backend(), Backend::cuda);
  EXPECT_NE(rt.heap_base(), nullptr);
  EXPECT_NE(rt.stream().native_handle(), nullptr);
  // Context::peer_base lives in pinned mapped memory that host code can read too.
  const auto ctx = rt.device_context();
  for (int pe = 0; pe < rt.n_pes(); ++pe) {
    EXPECT_EQ(ctx.peer_base[pe] == nullptr, rt.ptr(rt.heap_base(), pe) == nullptr) << "PE " << pe;
  }
  EXPECT_EQ(ctx.peer_base[rt.pe()], static_cast<char*>(rt.heap_base()));
}

TEST(CudaRuntime, HostPutReachesEveryMappedPeerAndGetReadsItBack) {
  TESSERA_SKIP_WITHOUT_CUDA();
  auto rt = Runtime::init(gpu_options());
  const int me = rt.pe(), n = rt.n_pes();
  auto slots = rt.alloc<std::uint64_t>(static_cast<std::size_t>(n) * 16);
  rt.barrier();
  std::vector<std::uint64_t> mine(16);
  for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = static_cast<std::uint64_t>(me) << 32 | i;
  for (int pe = 0; pe < n; ++pe) {
    if (rt.ptr(slots.get(), pe) == nullptr) continue;  // no P2P to that GPU: proxy path
    rt.put(slots.get() + static_cast<std::size_t>(me) * 16, mine.data(), 16 * sizeof(std::uint64_t),
           pe);
  }
  rt.barrier();
  std::vector<std::uint64_t> seen(static_cast<std::size_t>(n) * 16);
  rt.get(seen.data(), slots.get(), seen.size() * sizeof(std::uint64_t), me);
  for (int from = 0; from < n; ++from) {
    for (std::size_t i = 0; i < 16; ++i) {
      EXPECT_EQ(seen[static_cast<std::size_t>(from) * 16 + i],
                static_cast<std::uint64_t>(from) << 32 | i)
          << "slot of PE " << from;
    }
  }
}

TEST(CudaRuntime, CallocZeroesDeviceMemory) {
  TESSERA_SKIP_WITHOUT_CUDA();
  auto rt = Runtime::init(gpu_options());
  {
    auto dirty = rt.alloc<std::uint32_t>(1024);
    std::vector<std::uint32_t> ones(1024, 0xffffffffu);
    rt.put(dirty.get(), ones.data(), ones.size() * 4, rt.pe());
  }
  auto* zeroed = static_cast<std::uint32_t*>(rt.calloc(1024, 4));
  std::vector<std::uint32_t> seen(1024, 1);
  rt.get(seen.data(), zeroed, seen.size() * 4, rt.pe());
  for (auto v : seen) ASSERT_EQ(v, 0u);
  rt.free(zeroed);
}

// A kernel compiled by a host compiler has no GPU code: launching it on the cuda backend's
// stream must say so instead of running CPU code on device pointers.
struct HostOnlyKernel {
  void operator()(device::Block, int) const {}
};

TEST(CudaRuntime, LaunchFromAHostCompiledFileIsABackendError) {
  TESSERA_SKIP_WITHOUT_CUDA();
  auto rt = Runtime::init(gpu_options());
  try {
    launch(rt.stream(), 1, HostOnlyKernel{}, 0);
    FAIL() << "launch did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::backend);
    EXPECT_NE(e.message().find("nvcc"), std::string::npos) << e.message();
  }
}

}  // namespace
}  // namespace tessera::gpu_test
