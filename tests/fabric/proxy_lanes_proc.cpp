// One PE of the proxy-lanes stress (issue 18 item 2), started by tessera-run with the PEs on
// different nodes (every peer reached through the network proxy). Device producers (a kernel of
// kBlocks blocks) and host producers (kHostThreads threads calling Runtime::put/get) drive this
// PE's proxy at once, each at full rate, against the other PE. Then every PE checks:
//   - nothing lost or duplicated: the peer's atomic_add count is exact, each fetch_add result is
//     a distinct value in range, every device put and every host put landed with its own value,
//     and each host get read back what that thread had put;
//   - the two producer kinds never shared a ticket counter: the device lane's `reserve` grew by
//     exactly the number of descriptors device code pushed (host calls take host-lane tickets);
//   - the proxy never hung: every wait is bounded by TESSERA_TIMEOUT and tessera-run's timeout.
// Prints "proxy lanes PASS PE p/n ..." per PE. argv[1]: rounds per producer (default 200).
// argv[1] = "lane-failure": device code on PE 0 pushes a descriptor the proxy rejects; PE 0's
// next host puts (host lane) must fail with that rejection, not time out: "lane-failure PASS".
// Single source: compiled by nvcc in CUDA builds, the kernel runs on the GPU there (thread 0 of
// each block pushes) and the heap is read and written only through Runtime::put/get.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "tessera/device.hpp"
#include "tessera/launch.hpp"
#include "tessera/tessera.hpp"

namespace td = tessera::device;

namespace {

constexpr int kBlocks = 4;
constexpr int kHostThreads = 3;
constexpr int kFetchEvery = 8;         // every 8th device round also does a fetch_add (collected)
constexpr int kGetEvery = 4;           // every 4th host round also reads back an earlier put
constexpr std::size_t kHostWords = 8;  // one host put: 64 bytes

int failures = 0;

void expect(bool ok, int pe, const std::string& what) {
  if (ok) return;
  if (++failures <= 10) std::fprintf(stderr, "PE %d: FAILED %s\n", pe, what.c_str());
}

// The value device round `r` of block `b` on PE `pe` puts, and host round `r` of thread `t`.
std::uint64_t device_value(int pe, int b, int r) {
  return (std::uint64_t{1} << 63) | (static_cast<std::uint64_t>(pe) << 40) |
         (static_cast<std::uint64_t>(b) << 24) | static_cast<std::uint64_t>(r);
}
std::uint64_t host_value(int pe, int t, int r, std::size_t w) {
  return (static_cast<std::uint64_t>(pe) << 40) | (static_cast<std::uint64_t>(t) << 32) |
         (static_cast<std::uint64_t>(r) << 8) | w;
}

// Each block, `rounds` times: put one word of `src` into the peer's `box`, add 1 to the peer's
// counters[0], and every kFetchEvery-th round fetch_add the peer's counters[1] into `fetched`.
struct DeviceProducers {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, std::uint64_t* box,
                                      const std::uint64_t* src, std::uint64_t* counters,
                                      std::uint64_t* fetched, int rounds, int fetches_per_block,
                                      int peer) const {
    if (blk.rank() != 0) return;
    const int b = blk.block_id();
    for (int r = 0; r < rounds; ++r) {
      const std::size_t i = static_cast<std::size_t>(b * rounds + r);
      td::put_nbi(td::Thread{}, ctx, td::make_tile(box + i, 1),
                  td::make_tile<const std::uint64_t>(src + i, 1), peer);
      td::atomic_add(ctx, counters, std::uint64_t{1}, peer);
      if (r % kFetchEvery == 0) {
        fetched[static_cast<std::size_t>(b * fetches_per_block + r / kFetchEvery)] =
            td::atomic_fetch_add(ctx, counters + 1, std::uint64_t{1}, peer);
      }
    }
    td::quiet(ctx);
  }
};

// Pushes one put the proxy must reject (its target range lies past the end of the heap),
// straight onto the device lane, bypassing the device API's own checks.
struct DeviceBadPush {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, const std::uint64_t* src,
                                      int peer) const {
    if (blk.rank() != 0) return;
    td::detail::proxy_push(ctx,
                           td::encode_proxy_rma(td::ProxyOp::put, peer, ctx.heap_size + 64,
                                                reinterpret_cast<std::uintptr_t>(src), 8),
                           "lane-failure put");
  }
};

// The n words at heap `p` of this PE, and the same written.
std::vector<std::uint64_t> read_local(tessera::Runtime& rt, const std::uint64_t* p, std::size_t n) {
  std::vector<std::uint64_t> v(n);
  rt.get(v.data(), p, n * sizeof(std::uint64_t), rt.pe());
  return v;
}
void write_local(tessera::Runtime& rt, std::uint64_t* p, const std::vector<std::uint64_t>& v) {
  rt.put(p, v.data(), v.size() * sizeof(std::uint64_t), rt.pe());
}

int run(tessera::Runtime& rt, int rounds) {
  const int me = rt.pe();
  const int n = rt.n_pes();
  if (n != 2) {
    std::fprintf(stderr, "proxy_lanes_proc: needs 2 PEs, got %d\n", n);
    return 2;
  }
  const int peer = 1 - me;
  const auto dev_slots = static_cast<std::size_t>(kBlocks) * static_cast<std::size_t>(rounds);
  const auto host_slots = static_cast<std::size_t>(kHostThreads) * static_cast<std::size_t>(rounds);
  auto dev_src = rt.alloc<std::uint64_t>(dev_slots);  // device puts' sources (in the heap)
  auto dev_box = rt.alloc<std::uint64_t>(dev_slots);  // where the peer's device puts land
  auto host_box = rt.alloc<std::uint64_t>(host_slots * kHostWords);  // the peer's host puts
  auto words = rt.alloc<std::uint64_t>(2);  // [0] atomic_add count, [1] fetch_add count
  const int fetches_per_block = (rounds + kFetchEvery - 1) / kFetchEvery;
  const auto n_fetched = static_cast<std::size_t>(kBlocks * fetches_per_block);
  auto fetched_at = rt.alloc<std::uint64_t>(n_fetched);  // this PE's fetch_add results
  std::vector<std::uint64_t> init(dev_slots);
  for (int b = 0; b < kBlocks; ++b)
    for (int r = 0; r < rounds; ++r)
      init[static_cast<std::size_t>(b * rounds + r)] = device_value(me, b, r);
  write_local(rt, dev_src.get(), init);
  write_local(rt, dev_box.get(), std::vector<std::uint64_t>(dev_slots, 0));
  write_local(rt, host_box.get(), std::vector<std::uint64_t>(host_slots * kHostWords, 0));
  write_local(rt, words.get(), std::vector<std::uint64_t>(2, 0));
  write_local(rt, fetched_at.get(), std::vector<std::uint64_t>(n_fetched, ~0ull));
  rt.barrier();

  const auto ctx = rt.device_context();
  if (ctx.proxy == nullptr) {
    std::fprintf(stderr, "proxy_lanes_proc: PE %d has no network proxy (run with --node-ids)\n",
                 me);
    return 2;
  }
  const std::uint64_t reserve_before =
      td::platform::atomic_load(&ctx.proxy->reserve, td::Sem::acquire, td::Scope::system);

  // Both kinds start together: the host threads spin on `go`, set once the kernel is queued.
  std::atomic<bool> go{false};
  std::atomic<int> host_bad{0};
  std::vector<std::thread> hosts;
  for (int t = 0; t < kHostThreads; ++t) {
    hosts.emplace_back([&, t] {
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      std::uint64_t out[kHostWords];
      std::uint64_t back[kHostWords];
      try {
        for (int r = 0; r < rounds; ++r) {
          const std::size_t slot = static_cast<std::size_t>(t * rounds + r) * kHostWords;
          for (std::size_t w = 0; w < kHostWords; ++w) out[w] = host_value(me, t, r, w);
          rt.put(host_box.get() + slot, out, sizeof(out), peer);
          if (r % kGetEvery == 0) {
            rt.get(back, host_box.get() + slot, sizeof(back), peer);
            for (std::size_t w = 0; w < kHostWords; ++w)
              if (back[w] != out[w]) host_bad.fetch_add(1);
          }
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "PE %d host thread %d: %s\n", me, t, e.what());
        host_bad.fetch_add(1000000);
      }
    });
  }
  tessera::launch(rt.stream(), kBlocks, DeviceProducers{}, ctx, dev_box.get(),
                  static_cast<const std::uint64_t*>(dev_src.get()), words.get(), fetched_at.get(),
                  rounds, fetches_per_block, peer);
  go.store(true, std::memory_order_release);
  for (auto& h : hosts) h.join();
  rt.stream().synchronize();
  const std::uint64_t reserve_after =
      td::platform::atomic_load(&ctx.proxy->reserve, td::Sem::acquire, td::Scope::system);
  rt.barrier();  // every PE's operations complete, and visible here
  const auto counts = read_local(rt, words.get(), 2);
  const auto fetched = read_local(rt, fetched_at.get(), n_fetched);
  const auto box = read_local(rt, dev_box.get(), dev_slots);
  const auto hbox = read_local(rt, host_box.get(), host_slots * kHostWords);

  const std::uint64_t device_pushes =
      static_cast<std::uint64_t>(kBlocks) *
      (2 * static_cast<std::uint64_t>(rounds) + static_cast<std::uint64_t>(fetches_per_block));
  expect(reserve_after - reserve_before == device_pushes, me,
         "device lane tickets: " + std::to_string(reserve_after - reserve_before) +
             ", device code "
             "pushed " +
             std::to_string(device_pushes) + " (host calls must not take these)");
  expect(host_bad.load() == 0, me,
         "host get read back other data (" + std::to_string(host_bad.load()) + " words)");
  expect(counts[0] == static_cast<std::uint64_t>(kBlocks) * static_cast<std::uint64_t>(rounds), me,
         "atomic_add count " + std::to_string(counts[0]));
  expect(counts[1] == fetched.size(), me, "fetch_add count " + std::to_string(counts[1]));
  std::vector<int> seen(fetched.size(), 0);
  for (std::uint64_t v : fetched) {
    if (v < seen.size()) {
      ++seen[v];
    } else {
      expect(false, me, "fetch_add returned " + std::to_string(v));
    }
  }
  for (std::size_t v = 0; v < seen.size(); ++v)
    expect(
        seen[v] == 1, me,
        "fetch_add value " + std::to_string(v) + " returned " + std::to_string(seen[v]) + " times");
  for (int b = 0; b < kBlocks; ++b)
    for (int r = 0; r < rounds; ++r)
      expect(box[static_cast<std::size_t>(b * rounds + r)] == device_value(peer, b, r), me,
             "device put block " + std::to_string(b) + " round " + std::to_string(r));
  for (int t = 0; t < kHostThreads; ++t)
    for (int r = 0; r < rounds; ++r)
      for (std::size_t w = 0; w < kHostWords; ++w)
        expect(hbox[static_cast<std::size_t>(t * rounds + r) * kHostWords + w] ==
                   host_value(peer, t, r, w),
               me, "host put thread " + std::to_string(t) + " round " + std::to_string(r));
  rt.barrier();
  std::printf("proxy lanes %s PE %d/%d: %llu device-lane tickets, %d host puts\n",
              failures == 0 ? "PASS" : "FAIL", me, n,
              static_cast<unsigned long long>(reserve_after - reserve_before),
              kHostThreads * rounds);
  std::fflush(stdout);
  return failures == 0 ? 0 : 1;
}

// A failure the proxy records because of a device-lane descriptor reaches host calls, whose
// waits watch the host lane: both lanes carry it.
int lane_failure(tessera::Runtime& rt) {
  const int me = rt.pe();
  auto word = rt.alloc<std::uint64_t>(1);
  rt.barrier();
  // The job is broken after the failure: no Runtime collective and no finalize. PE 1 stays alive
  // (a lost peer would be another failure) until PE 0 checked, meeting it at a bootstrap barrier.
  if (me != 0) {
    rt.bootstrap().barrier();
    _exit(0);
  }
  const auto ctx = rt.device_context();
  tessera::launch(rt.stream(), 1, DeviceBadPush{}, ctx,
                  static_cast<const std::uint64_t*>(word.get()), 1);
  rt.stream().synchronize();
  const std::uint64_t v = 1;
  const auto start = std::chrono::steady_clock::now();
  try {
    // Puts issued before the proxy reached the bad descriptor may land; the loop ends on its
    // condition (a put throws) or at its bound.
    for (int i = 0; i < 100000; ++i) rt.put(word.get(), &v, sizeof(v), 1);
    std::printf("lane-failure FAIL: host puts kept succeeding after the proxy failed\n");
  } catch (const tessera::Error& e) {
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const bool ok = e.code() == tessera::ErrorCode::invalid_argument &&
                    std::string(e.what()).find(
                        "network proxy of PE 0 rejected a descriptor: "
                        "put to PE 1") != std::string::npos &&
                    s < 5.0;
    std::printf("lane-failure %s after %.2f s: %s\n", ok ? "PASS" : "FAIL", s, e.what());
    std::fflush(stdout);
    rt.bootstrap().barrier();
    _exit(ok ? 0 : 1);
  }
  std::fflush(stdout);
  rt.bootstrap().barrier();
  _exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "200";
  const int rounds = std::atoi(mode.c_str());
  try {
    auto options = tessera::Options::from_env();
    if (std::getenv("TESSERA_HEAP_SIZE") == nullptr) options.heap_size = std::size_t{16} << 20;
    auto rt = tessera::Runtime::init(options);
    const int rc = mode == "lane-failure" ? lane_failure(rt) : run(rt, rounds < 1 ? 1 : rounds);
    rt.finalize();
    return rc;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "proxy_lanes_proc: %s\n", e.what());
    return 2;
  }
}
