// The hip backend's host side, on real PEs (processes): backend selection, the fine-grained
// device heap, peer mapping through IPC, host put/get and calloc through device copies, the peer
// table kernels read, and the error a host-compiled kernel gets on a HIP stream. Without a
// visible AMD GPU every test skips.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace tessera {
namespace {

// Skips the calling test, with the message ctest's SKIP_REGULAR_EXPRESSION matches, when this
// process sees no HIP device.
#define TESSERA_SKIP_WITHOUT_HIP()                                \
  do {                                                            \
    if (!::tessera::backend_available(::tessera::Backend::hip)) { \
      GTEST_SKIP() << "no HIP device visible";                    \
    }                                                             \
  } while (0)

Options hip_options() {
  Options o = Options::from_env();
  o.backend = Backend::hip;
  o.heap_size = std::size_t{64} << 20;
  o.timeout = std::chrono::milliseconds(30000);
  return o;
}

TEST(HipRuntime, InitPicksTheHipBackendAndAFineGrainedHeapPerPe) {
  TESSERA_SKIP_WITHOUT_HIP();
  auto rt = Runtime::init(hip_options());
  EXPECT_EQ(rt.backend(), Backend::hip);
  EXPECT_NE(rt.heap_base(), nullptr);
  EXPECT_NE(rt.stream().native_handle(), nullptr);
  // Context::peer_base lives in pinned mapped memory that host code can read too.
  const auto ctx = rt.device_context();
  for (int pe = 0; pe < rt.n_pes(); ++pe) {
    EXPECT_EQ(ctx.peer_base[pe] == nullptr, rt.ptr(rt.heap_base(), pe) == nullptr) << "PE " << pe;
  }
  EXPECT_EQ(ctx.peer_base[rt.pe()], static_cast<char*>(rt.heap_base()));
}

TEST(HipRuntime, HostPutReachesEveryMappedPeerAndGetReadsItBack) {
  TESSERA_SKIP_WITHOUT_HIP();
  auto rt = Runtime::init(hip_options());
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
    if (rt.ptr(slots.get(), from) == nullptr) continue;
    for (std::size_t i = 0; i < 16; ++i) {
      EXPECT_EQ(seen[static_cast<std::size_t>(from) * 16 + i],
                static_cast<std::uint64_t>(from) << 32 | i)
          << "slot of PE " << from;
    }
  }
}

TEST(HipRuntime, CallocZeroesDeviceMemory) {
  TESSERA_SKIP_WITHOUT_HIP();
  auto rt = Runtime::init(hip_options());
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

// This file is compiled by the host compiler, so its kernel has no GPU code: launching it on the
// hip backend's stream must say so instead of running CPU code on device pointers.
struct HostOnlyKernel {
  void operator()(device::Block, int) const {}
};

TEST(HipRuntime, LaunchFromAHostCompiledFileIsABackendError) {
  TESSERA_SKIP_WITHOUT_HIP();
  auto rt = Runtime::init(hip_options());
  try {
    launch(rt.stream(), 1, HostOnlyKernel{}, 0);
    FAIL() << "launch did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::backend);
    EXPECT_NE(e.message().find("hipcc"), std::string::npos) << e.message();
  }
}

}  // namespace
}  // namespace tessera
