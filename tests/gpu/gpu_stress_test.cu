// GPU-only stresses (issue #18, "What to build" 4): the races a first GPU run would hit that
// have no host-backend analogue. PEs are processes sharing the GPU (gpu_test_env.hpp); every
// case is its own job under run_gpu_cases.sh. Iteration counts finish with or without MPS.
#include <cuda_runtime_api.h>
#include <gmock/gmock.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "../device/litmus.hpp"
#include "gpu/vmm_heap.hpp"
#include "gpu_test_env.hpp"
#include "harness/expect_error.hpp"

namespace tessera::gpu_test {
namespace {

namespace td = tessera::device;

using litmus::as_group;
using litmus::Tally;
using litmus::Words;
using ::testing::AllOf;
using ::testing::HasSubstr;

std::uint32_t word_pattern(std::size_t i, std::uint32_t round) {
  return static_cast<std::uint32_t>(i) * 2654435761u + round;
}

// Counts the words of d[0, n) that differ from word_pattern(i, round); grid-strided.
struct CheckWords {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, const std::uint32_t* d,
                                      std::size_t n, std::uint32_t round, Tally* t) const {
    const std::size_t stride = static_cast<std::size_t>(blk.size()) * blk.grid_size();
    for (std::size_t i = static_cast<std::size_t>(blk.block_id()) * blk.size() + blk.rank(); i < n;
         i += stride) {
      const std::uint32_t want = static_cast<std::uint32_t>(i) * 2654435761u + round;
      if (d[i] != want) litmus::record(ctx, t, round, i, d[i]);
    }
  }
};

// Fills d[0, n) with word_pattern(i, round); grid-strided.
struct FillWords {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, std::uint32_t* d, std::size_t n,
                                      std::uint32_t round) const {
    const std::size_t stride = static_cast<std::size_t>(blk.size()) * blk.grid_size();
    for (std::size_t i = static_cast<std::size_t>(blk.block_id()) * blk.size() + blk.rank(); i < n;
         i += stride)
      d[i] = static_cast<std::uint32_t>(i) * 2654435761u + round;
  }
};

Options stress_options() {
  Options o = gpu_options();
  o.heap_size = std::size_t{256} << 20;
  return o;
}

Tally read(Runtime& rt, const Words& w) {
  Tally t{};
  rt.get(&t, w.tally(), sizeof(t), rt.pe());
  return t;
}

// Runtime::put from pageable host memory is complete on return: a kernel launched right after
// it on the PE's stream must see all 64 MiB (a DMA still in flight would show old words).
TEST(GpuStress, PageablePutOf64MiBIsCompleteBeforeTheNextKernel) {
  TESSERA_SKIP_WITHOUT_CUDA();
  auto rt = Runtime::init(stress_options());
  constexpr std::size_t kWords = (std::size_t{64} << 20) / 4;
  auto* d = static_cast<std::uint32_t*>(rt.malloc(kWords * 4));
  Words tally(rt, 4);
  std::vector<std::uint32_t> host(kWords);  // pageable
  for (std::uint32_t round = 1; round <= 20; ++round) {
    for (std::size_t i = 0; i < kWords; ++i) host[i] = word_pattern(i, round);
    rt.put(d, host.data(), kWords * 4, rt.pe());
    launch(rt.stream(), 8, CheckWords{}, rt.device_context(), static_cast<const std::uint32_t*>(d),
           kWords, round, tally.tally());
  }
  rt.stream().synchronize();
  const Tally t = read(rt, tally);
  EXPECT_EQ(t.count, 0u) << "round " << t.round << " word " << t.word << " = " << t.value;
  rt.barrier();
  rt.free(d);
}

// Runtime::put from this PE's heap (device memory) into the right neighbour's, then barrier():
// the neighbour's kernel must see every word (a device-to-device copy that has not landed when
// put returns would show old words).
TEST(GpuStress, HeapToPeerPutIsVisibleToThePeerAfterBarrier) {
  TESSERA_SKIP_WITHOUT_CUDA();
  auto rt = Runtime::init(stress_options());
  const int right = (rt.pe() + 1) % rt.n_pes();
  constexpr std::size_t kWords = (std::size_t{16} << 20) / 4;
  auto* mine = static_cast<std::uint32_t*>(rt.malloc(kWords * 4));
  auto* inbox = static_cast<std::uint32_t*>(rt.malloc(kWords * 4));
  Words tally(rt, 4);
  for (std::uint32_t round = 1; round <= 20; ++round) {
    launch(rt.stream(), 8, FillWords{}, mine, kWords, round);
    rt.stream().synchronize();
    rt.put(inbox, mine, kWords * 4, right);
    rt.barrier();
    launch(rt.stream(), 8, CheckWords{}, rt.device_context(),
           static_cast<const std::uint32_t*>(inbox), kWords, round, tally.tally());
    rt.stream().synchronize();
    rt.barrier();  // the next round's put must not overwrite the inbox under the check
  }
  const Tally t = read(rt, tally);
  EXPECT_EQ(t.count, 0u) << "round " << t.round << " word " << t.word << " = " << t.value;
  rt.free(inbox);
  rt.free(mine);
}

// Message passing on 8 blocks at once, each block its own channel to the right neighbour,
// run by group G of the block, with 1- and 2-byte elements (the GPU copies move ragged heads
// and tails byte by byte, and 1-byte elements go through a 32-bit CAS loop on some paths).
// Round k: stage v(k, i), wait until the neighbour acknowledged round k - 1, put_signal (add 1)
// into its inbox, wait for my count >= k, check every element is v(k, i), acknowledge.
template <class T>
TESSERA_KERNEL_CODE T element_value(std::uint64_t k, std::size_t i) {
  return static_cast<T>((k * 31 + i * 7) % 251 + 1);
}

template <class G, class T>
struct MessagePassingBlocks {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, T* inbox, T* staging,
                                      std::size_t n, std::uint64_t* count, std::uint64_t* ack,
                                      Tally* t, std::uint64_t rounds) const {
    const int b = blk.block_id();
    T* in = inbox + static_cast<std::size_t>(b) * n;
    T* st = staging + static_cast<std::size_t>(b) * n;
    const int right = (ctx.my_pe + 1) % ctx.n_pes, left = (ctx.my_pe + ctx.n_pes - 1) % ctx.n_pes;
    as_group<G>(blk, [&](auto g) {
      for (std::uint64_t k = 1; k <= rounds; ++k) {
        for (std::size_t i = static_cast<std::size_t>(g.rank()); i < n;
             i += static_cast<std::size_t>(g.size()))
          st[i] = element_value<T>(k, i);
        g.sync();
        td::wait_until(g, ctx, ack + b, td::Cmp::ge, k - 1);
        td::put_signal(g, ctx, td::make_tile(in, n), td::make_tile<const T>(st, n), count + b,
                       std::uint64_t{1}, td::SignalOp::add, right);
        td::wait_until(g, ctx, count + b, td::Cmp::ge, k);
        for (std::size_t i = static_cast<std::size_t>(g.rank()); i < n;
             i += static_cast<std::size_t>(g.size())) {
          const T v = static_cast<const volatile T*>(in)[i];
          if (v != element_value<T>(k, i)) litmus::record(ctx, t, k, i, v);
        }
        g.sync();
        if (g.rank() == 0) td::signal(ctx, ack + b, k, td::SignalOp::set, left);
        g.sync();
      }
    });
  }
};

template <class G_, class T_>
struct Combo {
  using G = G_;
  using T = T_;
};

template <class C>
class GpuMessagePassing : public ::testing::Test {};

using Combos = ::testing::Types<Combo<td::Warp, std::uint8_t>, Combo<td::Warp, std::uint16_t>,
                                Combo<td::Thread, std::uint8_t>, Combo<td::Thread, std::uint16_t>>;
TYPED_TEST_SUITE(GpuMessagePassing, Combos);

TYPED_TEST(GpuMessagePassing, EightBlocksNeverSeeStaleElements) {
  using G = typename TypeParam::G;
  using T = typename TypeParam::T;
  TESSERA_SKIP_WITHOUT_CUDA();
  auto rt = Runtime::init(gpu_options());
  constexpr int kBlocks = 8;
  constexpr std::size_t kElems = 1001;  // odd: ragged tails
  auto* inbox = static_cast<T*>(rt.calloc(kBlocks * kElems, sizeof(T)));
  auto* staging = static_cast<T*>(rt.calloc(kBlocks * kElems, sizeof(T)));
  Words count(rt, kBlocks), ack(rt, kBlocks), tally(rt, 4);
  rt.barrier();
  launch(rt.stream(), kBlocks, MessagePassingBlocks<G, T>{}, rt.device_context(), inbox, staging,
         kElems, count.get(), ack.get(), tally.tally(), std::uint64_t{50});
  rt.stream().synchronize();
  rt.barrier();
  const Tally t = read(rt, tally);
  EXPECT_EQ(t.count, 0u) << "round " << t.round << " element " << t.word << " = " << t.value;
  rt.free(staging);
  rt.free(inbox);
}

struct Nothing {
  TESSERA_KERNEL_CODE void operator()(td::Block) const {}
};

// A grid ten times the most blocks a GPU can hold at once (every SM at its hardware limit of
// 32 resident blocks) cannot be a cooperative launch: invalid_argument, saying why.
TEST(GpuStress, ALaunchTenTimesOverTheCoResidentLimitIsInvalidArgument) {
  TESSERA_SKIP_WITHOUT_CUDA();
  auto rt = Runtime::init(gpu_options());
  int sms = 0;
  ASSERT_EQ(
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, rt.stream().native_device()),
      cudaSuccess);
  const int grid = 10 * 32 * sms;
  const Error e = harness::expect_error(ErrorCode::invalid_argument,
                                        [&] { launch(rt.stream(), grid, Nothing{}); });
  EXPECT_THAT(e.message(), AllOf(HasSubstr("launch of " + std::to_string(grid) + " blocks"),
                                 HasSubstr("all blocks must be resident at once")));
  // The stream still works.
  launch(rt.stream(), 1, Nothing{});
  rt.stream().synchronize();
  rt.barrier();
}

struct WaitForever {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, std::uint64_t* sig) const {
    td::wait_until(blk, ctx, sig, td::Cmp::ge, std::uint64_t{1});
  }
};

// A wait nobody signals, with TESSERA_TIMEOUT=3: PE 0's wait times out (Error(timeout) at
// synchronize), which aborts the job; every other PE, waiting on its own never-signalled word
// with a 60 s bound, must end with PeerLost naming PE 0 within 2x the timeout.
TEST(GpuStress, ANeverSignalledWaitTimesOutAndThePeersLearnWithinTwiceTheTimeout) {
  TESSERA_SKIP_WITHOUT_CUDA();
  Options o = gpu_options();
  o.timeout = std::chrono::seconds(3);
  auto rt = Runtime::init(o);
  // Not freed: after the abort the heap's collectives fail with PeerLost too.
  auto* sig = static_cast<std::uint64_t*>(rt.calloc(1, sizeof(std::uint64_t)));
  rt.barrier();
  auto ctx = rt.device_context();
  if (rt.pe() != 0) ctx.timeout_ns = 60'000'000'000ull;
  const auto start = std::chrono::steady_clock::now();
  launch(rt.stream(), 1, WaitForever{}, ctx, sig);
  if (rt.pe() == 0) {
    const Error e = harness::expect_error(ErrorCode::timeout, [&] { rt.stream().synchronize(); });
    EXPECT_THAT(e.message(), AllOf(HasSubstr("wait_until on PE 0"), HasSubstr("timed out after"),
                                   HasSubstr("saw 0")));
  } else {
    const Error e = harness::expect_error(ErrorCode::peer_lost, [&] { rt.stream().synchronize(); });
    EXPECT_THAT(e.message(), HasSubstr("failed and aborted the job"));
    const auto waited = std::chrono::steady_clock::now() - start;
    EXPECT_LT(waited, std::chrono::seconds(6))
        << "PeerLost came after "
        << std::chrono::duration_cast<std::chrono::milliseconds>(waited).count() << " ms";
  }
  harness::expect_error(ErrorCode::peer_lost, [&] { rt.barrier(); });
}

// Issue 17 item 1 on the VMM path: the hole between a PE's heap and its control area is
// reserved but unmapped, so a tile that runs off the heap's end with checked mode off faults
// (an illegal address, Error(backend) at the synchronize) instead of writing anything. Before,
// the hole was memory of the heap's own allocation: a 512-byte overrun landed in it silently,
// and one that started at the hole's end wrote the barrier words and the abort word. Each
// process runs a job of its own (a faulted context is lost; no peer should wait on it).
struct PutTile {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, std::uint64_t* dst,
                                      const std::uint64_t* src, std::size_t n) const {
    td::put(blk, ctx, td::make_tile(dst, n), td::make_tile(src, n), ctx.my_pe);
  }
};

// Where the overrunning tile starts, relative to the heap's end.
class GpuGuard : public ::testing::TestWithParam<std::ptrdiff_t> {};

TEST_P(GpuGuard, ATileRunningOffTheHeapFaultsInsteadOfWritingTheHoleOrTheControlArea) {
  TESSERA_SKIP_WITHOUT_CUDA();
  int device = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  if (!detail::cuda::vmm_heap_supported(device)) {
    GTEST_SKIP() << "no VMM with POSIX fds here: the heap takes cudaMalloc, whose hole is memory";
  }
  if ((std::size_t{2} << 20) % detail::cuda::vmm_heap_granularity(device, 0) != 0) {
    GTEST_SKIP() << "a VMM granularity above 2 MiB: the heap stays one allocation";
  }
  Options o = gpu_options();
  o.bootstrap_kind = BootstrapKind::single;
  o.checked = false;
  auto rt = Runtime::init(o);
  auto src = rt.alloc<std::uint64_t>(128);
  std::vector<std::uint64_t> pattern(128, 3);
  rt.put(src.get(), pattern.data(), pattern.size() * sizeof(std::uint64_t), 0);
  auto* dst = reinterpret_cast<std::uint64_t*>(static_cast<char*>(rt.heap_base()) + rt.heap_size() +
                                               GetParam());
  launch(rt.stream(), 1, PutTile{}, rt.device_context(), dst,
         static_cast<const std::uint64_t*>(src.get()), std::size_t{128});
  const Error e = harness::expect_error(ErrorCode::backend, [&] { rt.stream().synchronize(); });
  EXPECT_THAT(e.message(), HasSubstr("illegal memory access"));
}

// 512 bytes before the end (the last 512 bytes land in the hole), and 512 bytes before the
// control area (the tile's second half would be the barrier words).
INSTANTIATE_TEST_SUITE_P(Overrun, GpuGuard,
                         ::testing::Values(std::ptrdiff_t{-512}, std::ptrdiff_t{(2 << 20) - 512}));

}  // namespace
}  // namespace tessera::gpu_test
