// A GPU backend's host side, on real PEs (processes), written once and run per backend: ctest
// starts it with TESSERA_BACKEND=cuda (tests/gpu/CMakeLists.txt) and, in HIP builds, with
// TESSERA_BACKEND=hip (tests/gpu/hip/CMakeLists.txt). Backend selection, the device heap, peer
// mapping, host put/get and calloc through the segment's synchronous copies, the peer table
// kernels read, and the error a host-compiled kernel gets on a GPU stream. Without a visible
// device of the backend every test skips with "no CUDA device visible" / "no HIP device visible".
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace tessera {
namespace {

// The backend under test: TESSERA_BACKEND=hip selects hip, anything else cuda.
Backend tested_backend() {
  const char* env = std::getenv("TESSERA_BACKEND");
  return env != nullptr && std::string(env) == "hip" ? Backend::hip : Backend::cuda;
}

#define TESSERA_SKIP_WITHOUT_GPU()                                                   \
  do {                                                                               \
    if (!::tessera::backend_available(tested_backend())) {                           \
      GTEST_SKIP() << (tested_backend() == Backend::hip ? "no HIP device visible"    \
                                                        : "no CUDA device visible"); \
    }                                                                                \
  } while (0)

Options gpu_options() {
  Options o = Options::from_env();
  o.backend = tested_backend();
  o.heap_size = std::size_t{64} << 20;
  o.timeout = std::chrono::milliseconds(30000);
  return o;
}

TEST(GpuRuntime, InitPicksTheAskedBackendAndAHeapPerPe) {
  TESSERA_SKIP_WITHOUT_GPU();
  auto rt = Runtime::init(gpu_options());
  EXPECT_EQ(rt.backend(), tested_backend());
  EXPECT_NE(rt.heap_base(), nullptr);
  EXPECT_NE(rt.stream().native_handle(), nullptr);
  // Context::peer_base has one address for host and device code (read-mostly managed memory,
  // or pinned mapped memory): host code reads it too.
  const auto ctx = rt.device_context();
  for (int pe = 0; pe < rt.n_pes(); ++pe) {
    EXPECT_EQ(ctx.peer_base[pe] == nullptr, rt.ptr(rt.heap_base(), pe) == nullptr) << "PE " << pe;
  }
  EXPECT_EQ(ctx.peer_base[rt.pe()], static_cast<char*>(rt.heap_base()));
}

TEST(GpuRuntime, HostPutReachesEveryMappedPeerAndGetReadsItBack) {
  TESSERA_SKIP_WITHOUT_GPU();
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
    if (rt.ptr(slots.get(), from) == nullptr) continue;
    for (std::size_t i = 0; i < 16; ++i) {
      EXPECT_EQ(seen[static_cast<std::size_t>(from) * 16 + i],
                static_cast<std::uint64_t>(from) << 32 | i)
          << "slot of PE " << from;
    }
  }
}

// A pageable 16 MiB host buffer put and read straight back: the copy is complete on return
// (it runs on the segment's copy stream and waits for it), so nothing reads stale bytes.
TEST(GpuRuntime, PageablePutIsCompleteOnReturn) {
  TESSERA_SKIP_WITHOUT_GPU();
  auto rt = Runtime::init(gpu_options());
  const std::size_t words = std::size_t{4} << 20;
  auto block = rt.alloc<std::uint32_t>(words);
  std::vector<std::uint32_t> src(words);
  for (std::size_t i = 0; i < words; ++i) src[i] = static_cast<std::uint32_t>(i * 2654435761u);
  rt.put(block.get(), src.data(), words * 4, rt.pe());
  std::vector<std::uint32_t> seen(words, 0);
  rt.get(seen.data(), block.get(), words * 4, rt.pe());
  for (std::size_t i = 0; i < words; i += 4099) ASSERT_EQ(seen[i], src[i]) << "word " << i;
  ASSERT_EQ(seen.back(), src.back());
  rt.barrier();
}

TEST(GpuRuntime, CallocZeroesDeviceMemory) {
  TESSERA_SKIP_WITHOUT_GPU();
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

// This file is compiled by the host compiler, so its kernel has no GPU code: launching it on a
// GPU stream must say so instead of running CPU code on device pointers.
struct HostOnlyKernel {
  void operator()(device::Block, int) const {}
};

TEST(GpuRuntime, LaunchFromAHostCompiledFileIsABackendError) {
  TESSERA_SKIP_WITHOUT_GPU();
  auto rt = Runtime::init(gpu_options());
  try {
    launch(rt.stream(), 1, HostOnlyKernel{}, 0);
    FAIL() << "launch did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::backend);
    EXPECT_NE(e.message().find("nvcc"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("hipcc"), std::string::npos) << e.message();
  }
}

}  // namespace
}  // namespace tessera
