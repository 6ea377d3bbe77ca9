// One PE of a multi-process fabric test, started by tessera-run (or by hand, one per network
// namespace). Modes:
//   ops        every PE moves data to and from every other PE with put, get, put_signal,
//              signal and the remote atomics, then meets the others at a device barrier, then
//              with the host's Runtime::put/get; prints "fabric ops PASS" per PE and each
//              peer's transport. Then GemmRs in its push patterns, all_gather in each
//              algorithm, MoE dispatch and combine: each call is correct and leaves no proxy
//              operation in flight once its stream is synchronized.
//   peer-lost  PE 1 leaves without finalizing; PE 0's next puts to it must end with PeerLost
//              naming PE 1 (or Timeout), never hang; prints "peer-lost PASS".
//   peer-lost-host  the same with the host's Runtime::put.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "tessera/device.hpp"
#include "tessera/device/proxy_wire.hpp"
#include "tessera/launch.hpp"
#include "tessera/ops/all_gather.hpp"
#include "tessera/ops/gemm_rs.hpp"
#include "tessera/ops/moe.hpp"
#include "tessera/tessera.hpp"

namespace td = tessera::device;

namespace {

int failures = 0;

void expect(bool ok, int pe, const std::string& what) {
  if (ok) return;
  ++failures;
  std::fprintf(stderr, "PE %d: FAILED %s\n", pe, what.c_str());
}

template <class Fn>
void run_kernel(tessera::Runtime& rt, Fn fn) {
  tessera::launch(rt.stream(), 1, [fn](td::Block blk) { fn(blk); });
  rt.stream().synchronize();
}

// True when every descriptor device code has pushed on this PE's proxy ring is complete.
bool proxy_idle(const td::Context& ctx) {
  if (ctx.proxy == nullptr) return true;
  const std::uint64_t reserved =
      td::platform::atomic_load(&ctx.proxy->reserve, td::Sem::acquire, td::Scope::system);
  return td::platform::atomic_load(&ctx.proxy->completed, td::Sem::acquire, td::Scope::system) >=
         reserved;
}

// Synchronizes the stream, then expects nothing of its calls left in the proxy (see
// fused_calls_complete).
void expect_proxy_idle(tessera::Runtime& rt, const td::Context& ctx, const std::string& what) {
  rt.stream().synchronize();
  expect(proxy_idle(ctx), rt.pe(),
         what + ": proxy operations still in flight after the stream was synchronized");
}

// GemmRs through the proxy in each push pattern, fused_sequential first (the order that once
// failed: the next op's zeroed words took the freed block of the previous op's, and that op's
// last "done reading" signal, still in flight after its stream was synchronized, landed in a
// tile flag of the new op). A call is complete once its stream is: nothing of it is left in the
// proxy, so a freed workspace gets no late write.
void fused_calls_complete(tessera::Runtime& rt) {
  namespace ops = tessera::ops;
  const int me = rt.pe(), n = rt.n_pes();
  const std::size_t rows = 16, m = rows * static_cast<std::size_t>(n), cols = 32, k = 16;
  // PE q's A is all q + 1 and B all ones: every element of the sum is k * n (n + 1) / 2.
  const std::vector<float> a(m * k, static_cast<float>(me + 1)), b(k * cols, 1.0f);
  const float want = static_cast<float>(k) * static_cast<float>(n * (n + 1) / 2);
  const auto ctx = rt.device_context();
  for (const ops::OverlapPattern pattern :
       {ops::OverlapPattern::fused_sequential, ops::OverlapPattern::producer_consumer,
        ops::OverlapPattern::workgroup_specialized, ops::OverlapPattern::fused_sequential}) {
    ops::GemmRsOptions options;
    options.pattern = pattern;
    options.direction = ops::CommDirection::push;
    ops::GemmRs op(rt, m, cols, k, ops::GemmDtype::f32, options);
    const std::string what = std::string("gemm_rs ") + ops::to_string(pattern);
    for (int call = 0; call < 2; ++call) {
      std::vector<float> c(rows * cols, -1.0f);
      op.run(rt.stream(), a.data(), b.data(), c.data());
      expect_proxy_idle(rt, ctx, what);
      std::size_t wrong = 0;
      for (const float x : c) wrong += x != want ? 1 : 0;
      expect(wrong == 0, me,
             what + ": " + std::to_string(wrong) + " of " + std::to_string(c.size()) +
                 " elements are not " + std::to_string(want));
    }
  }
}

// Calls of each op below: the second runs on words the first has used.
constexpr int kCalls = 3;

// all_gather in each algorithm through the proxy; a send in host memory, rewritten between calls.
void all_gather_calls_complete(tessera::Runtime& rt) {
  namespace ops = tessera::ops;
  const int me = rt.pe(), n = rt.n_pes();
  const auto ctx = rt.device_context();
  struct Case {
    ops::AllGatherAlgo algo;
    std::size_t bytes;
    const char* name;
  };
  const auto byte_of = [](int pe, int call, std::size_t i) {
    return static_cast<std::uint8_t>(pe * 31 + call * 7 + static_cast<int>(i % 251));
  };
  for (const Case c :
       {Case{ops::AllGatherAlgo::oneshot, 4096, "oneshot (staged)"},
        Case{ops::AllGatherAlgo::oneshot, ops::kAllGatherStagedMax + 4096, "oneshot (into recv)"},
        Case{ops::AllGatherAlgo::ring, 8192, "ring"}}) {
    auto recv = rt.alloc<std::uint8_t>(static_cast<std::size_t>(n) * c.bytes);
    const std::string what = std::string("all_gather ") + c.name;
    std::vector<std::uint8_t> send(c.bytes);
    for (int call = 0; call < kCalls; ++call) {
      for (std::size_t i = 0; i < c.bytes; ++i) send[i] = byte_of(me, call, i);
      ops::all_gather(rt, rt.stream(), send.data(), recv.get(), c.bytes, c.algo);
      expect_proxy_idle(rt, ctx, what);
      std::size_t wrong = 0;
      for (int p = 0; p < n; ++p) {
        for (std::size_t i = 0; i < c.bytes; ++i) {
          wrong += recv[static_cast<std::size_t>(p) * c.bytes + i] != byte_of(p, call, i) ? 1 : 0;
        }
      }
      expect(wrong == 0, me,
             what + ": " + std::to_string(wrong) + " of " +
                 std::to_string(static_cast<std::size_t>(n) * c.bytes) + " bytes are wrong");
    }
  }
}

// MoE dispatch then combine through the proxy, with identity experts (expert_out = expert_x):
// each token goes to the experts of two other PEs with weights 0.25 and 0.5, so y = 0.75 x.
void moe_calls_complete(tessera::Runtime& rt) {
  namespace ops = tessera::ops;
  const int me = rt.pe(), n = rt.n_pes();
  const auto ctx = rt.device_context();
  ops::MoeConfig config;
  config.max_tokens_per_pe = 160;
  config.hidden = 16;
  config.topk = 2;
  config.num_experts = 2 * n;
  config.dtype = ops::MoeDtype::f32;
  ops::MoeBuffer moe(rt, config);
  const std::size_t h = config.hidden;
  // One block (decode), then the prefill grid.
  for (const std::size_t tokens : {std::size_t{8}, config.max_tokens_per_pe}) {
    const std::string what = "moe " + std::to_string(tokens) + " tokens";
    std::vector<float> x(tokens * h), y(tokens * h), weight(tokens * 2);
    std::vector<std::int32_t> idx(tokens * 2);
    for (std::size_t t = 0; t < tokens; ++t) {
      const auto ti = static_cast<int>(t);
      idx[2 * t] = 2 * ((me + 1 + ti) % n);
      idx[2 * t + 1] = 2 * ((me + 2 + ti) % n) + 1;
      weight[2 * t] = 0.25f;
      weight[2 * t + 1] = 0.5f;
    }
    for (int call = 0; call < kCalls; ++call) {
      for (std::size_t i = 0; i < x.size(); ++i) {
        x[i] = static_cast<float>(me * 4096 + call + static_cast<int>(i));
      }
      const ops::MoeHandle handle =
          moe.dispatch(rt.stream(), x.data(), tokens, idx.data(), weight.data());
      expect_proxy_idle(rt, ctx, what + " dispatch");
      moe.combine(rt.stream(), handle, static_cast<const float*>(handle.expert_x), y.data());
      expect_proxy_idle(rt, ctx, what + " combine");
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < x.size(); ++i) wrong += y[i] != 0.75f * x[i] ? 1 : 0;
      expect(wrong == 0, me,
             what + ": " + std::to_string(wrong) + " of " + std::to_string(y.size()) +
                 " elements of y are not 0.75 x");
    }
  }
}

// A block freed while a put into it is still in the proxy (put_nbi, no quiet: the kernel ends
// and the stream synchronizes with the put in flight) and then allocated again: free completes
// this PE's proxied operations before it returns, so the put is done by then and cannot land
// on the new block's zeros. Large puts to a PE on the other node (or, with TESSERA_P2P=0, any
// other PE) keep the proxy busy for milliseconds, far longer than free's exchange takes.
void free_completes_proxied_writes(tessera::Runtime& rt) {
  const int me = rt.pe();
  const int n = rt.n_pes();
  const int target = (me + n / 2) % n;
  constexpr std::size_t kWords = std::size_t{1} << 20;  // 8 MiB
  const auto ctx = rt.device_context();
  for (int round = 0; round < 3; ++round) {
    auto* source = static_cast<std::uint64_t*>(rt.malloc(kWords * sizeof(std::uint64_t)));
    auto* block = static_cast<std::uint64_t*>(rt.malloc(kWords * sizeof(std::uint64_t)));
    for (std::size_t i = 0; i < kWords; ++i) source[i] = 0xfeed0000u + static_cast<unsigned>(me);
    rt.barrier();
    run_kernel(rt, [&, ctx](td::Block blk) {
      td::put_nbi(blk, ctx, td::make_tile(block, kWords),
                  td::make_tile<const std::uint64_t>(source, kWords), target);
    });
    rt.free(block);
    expect(proxy_idle(ctx), me, "free returned with a proxied put into the freed block in flight");
    auto* again = static_cast<std::uint64_t*>(rt.malloc(kWords * sizeof(std::uint64_t)));
    expect(again == block, me, "the freed block was not allocated again (the test needs it)");
    std::memset(again, 0, kWords * sizeof(std::uint64_t));
    rt.barrier();
    std::size_t written = 0;
    for (std::size_t i = 0; i < kWords; ++i) written += again[i] != 0;
    expect(written == 0, me,
           std::to_string(written) +
               " words of a re-allocated, zeroed block were written by a "
               "put issued before its free");
    rt.free(again);
    rt.free(source);
  }
}

int ops(tessera::Runtime& rt) {
  const int me = rt.pe();
  const int n = rt.n_pes();
  constexpr std::size_t kWords = 4096;
  auto inbox = rt.alloc<std::uint64_t>(kWords * static_cast<std::size_t>(n));
  auto source = rt.alloc<std::uint64_t>(kWords);
  auto sig = rt.alloc<std::uint64_t>(static_cast<std::size_t>(n));
  auto words = rt.alloc<std::uint64_t>(4);
  auto small = rt.alloc<std::int32_t>(2);
  for (std::size_t i = 0; i < kWords; ++i) source[i] = (static_cast<std::uint64_t>(me) << 32) | i;
  for (int p = 0; p < n; ++p) sig[static_cast<std::size_t>(p)] = 0;
  for (int i = 0; i < 4; ++i) words[static_cast<std::size_t>(i)] = 0;
  small[0] = 100;
  small[1] = 0;
  rt.barrier();
  std::string transports;
  for (int p = 0; p < n; ++p)
    transports += std::string(p ? "," : "") + tessera::to_string(rt.transport(p));
  std::vector<std::uint64_t> local(kWords);
  std::vector<std::uint64_t> fetched(static_cast<std::size_t>(n));
  std::vector<std::int32_t> mins(static_cast<std::size_t>(n));
  const auto ctx = rt.device_context();
  run_kernel(rt, [&, ctx](td::Block blk) {
    for (int i = 1; i < n; ++i) {
      const int p = (me + i) % n;
      // put_signal my source into slot `me` of p's inbox.
      td::put_signal(blk, ctx, td::make_tile(inbox.get() + kWords * me, kWords),
                     td::make_tile<const std::uint64_t>(source.get(), kWords), sig.get() + me, 1,
                     td::SignalOp::set, p);
      td::atomic_add(ctx, words.get(), std::uint64_t{1}, p);
      fetched[static_cast<std::size_t>(p)] =
          td::atomic_fetch_add(ctx, words.get() + 1, std::uint64_t{10}, p);
      td::atomic_fetch_or(ctx, words.get() + 2, std::uint64_t{1} << me, p);
      mins[static_cast<std::size_t>(p)] = td::atomic_fetch_min(ctx, small.get(), -me, p);
      td::atomic_compare_exchange(ctx, small.get() + 1, 0, me + 1, p);
    }
    td::barrier(blk, ctx);
    for (int i = 1; i < n; ++i) {
      const int p = (me + i) % n;
      td::wait_until(blk, ctx, sig.get() + p, td::Cmp::ge, 1);
    }
    // get p's source back, strided: every other word.
    const int p = (me + 1) % n;
    td::get(blk, ctx, td::make_tile(local.data(), kWords / 2, 1, 1),
            td::make_tile<const std::uint64_t>(source.get(), kWords / 2, 1, 2), p);
    td::signal(ctx, words.get() + 3, 5, td::SignalOp::add, p);
    td::barrier(blk, ctx);
  });
  const auto un = static_cast<std::uint64_t>(n);
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    const std::size_t at = kWords * static_cast<std::size_t>(p);
    expect(inbox[at] == (static_cast<std::uint64_t>(p) << 32) &&
               inbox[at + kWords - 1] == ((static_cast<std::uint64_t>(p) << 32) | (kWords - 1)),
           me, "put_signal data from PE " + std::to_string(p));
    expect(fetched[static_cast<std::size_t>(p)] % 10 == 0 &&
               fetched[static_cast<std::size_t>(p)] < 10 * (un - 1),
           me, "fetch_add result from PE " + std::to_string(p));
  }
  const int right = (me + 1) % n;
  for (std::size_t i = 0; i < kWords / 2; ++i) {
    if (local[i] != ((static_cast<std::uint64_t>(right) << 32) | (2 * i))) {
      expect(false, me, "get word " + std::to_string(i) + " from PE " + std::to_string(right));
      break;
    }
  }
  expect(words[0] == un - 1, me, "atomic_add total " + std::to_string(words[0]));
  expect(words[1] == 10 * (un - 1), me, "fetch_add total " + std::to_string(words[1]));
  const std::uint64_t others = ((std::uint64_t{1} << n) - 1) & ~(std::uint64_t{1} << me);
  expect(words[2] == others, me, "fetch_or bits " + std::to_string(words[2]));
  expect(words[3] == 5, me, "signal add " + std::to_string(words[3]));
  expect(small[0] == -(me == n - 1 ? n - 2 : n - 1), me, "fetch_min " + std::to_string(small[0]));
  expect(small[1] >= 1 && small[1] <= n, me, "compare_exchange " + std::to_string(small[1]));
  rt.barrier();
  // Host-side put and get: my left neighbour's slot of my inbox is refilled by it with
  // Runtime::put; I read my right neighbour's source back with Runtime::get.
  std::vector<std::uint64_t> host_words(kWords);
  for (std::size_t i = 0; i < kWords; ++i)
    host_words[i] = ~((static_cast<std::uint64_t>(me) << 32) | i);
  rt.put(inbox.get() + kWords * static_cast<std::size_t>(me), host_words.data(),
         kWords * sizeof(std::uint64_t), right);
  std::vector<std::uint64_t> host_got(kWords, 0);
  rt.get(host_got.data(), source.get(), kWords * sizeof(std::uint64_t), right);
  rt.barrier();
  const int left = (me + n - 1) % n;
  const std::size_t left_at = kWords * static_cast<std::size_t>(left);
  expect(
      inbox[left_at] == ~(static_cast<std::uint64_t>(left) << 32) &&
          inbox[left_at + kWords - 1] == ~((static_cast<std::uint64_t>(left) << 32) | (kWords - 1)),
      me, "host put from PE " + std::to_string(left));
  expect(host_got[0] == (static_cast<std::uint64_t>(right) << 32) &&
             host_got[kWords - 1] == ((static_cast<std::uint64_t>(right) << 32) | (kWords - 1)),
         me, "host get from PE " + std::to_string(right));
  rt.barrier();
  fused_calls_complete(rt);
  rt.barrier();
  all_gather_calls_complete(rt);
  rt.barrier();
  moe_calls_complete(rt);
  rt.barrier();
  free_completes_proxied_writes(rt);
  rt.barrier();
  std::printf("fabric ops %s PE %d/%d provider %s nic %s transports %s\n",
              failures == 0 ? "PASS" : "FAIL", me, n, rt.fabric_provider().c_str(),
              rt.fabric_nic().c_str(), transports.c_str());
  std::fflush(stdout);
  return failures == 0 ? 0 : 1;
}

int peer_lost(tessera::Runtime& rt, bool host) {
  const int me = rt.pe();
  auto box = rt.alloc<std::uint64_t>(1024);
  rt.barrier();
  if (me == 1) {
    std::fflush(stdout);
    _exit(0);  // vanish: no finalize, endpoint and sockets closed by the kernel
  }
  std::vector<std::uint64_t> data(1024, 7);
  const auto ctx = rt.device_context();
  try {
    // Keep writing until the loss is noticed; each put is bounded by TESSERA_TIMEOUT.
    for (int i = 0; i < 1000; ++i) {
      if (host) {
        rt.put(box.get(), data.data(), 1024 * sizeof(std::uint64_t), 1);
      } else {
        run_kernel(rt, [&, ctx](td::Block blk) {
          td::put(blk, ctx, td::make_tile(box.get(), 1024),
                  td::make_tile<const std::uint64_t>(data.data(), 1024), 1);
        });
      }
      // Not a wait for a result: the loop ends on its condition (a put throws PeerLost) or at its
      // bound (1000 puts). The pause only spreads the puts over ~10 s, the time the provider may
      // take to see the closed connection, instead of spending the bound in a few milliseconds.
      usleep(10000);
    }
    std::printf("peer-lost FAIL: puts to a vanished PE kept succeeding\n");
    std::fflush(stdout);
    _exit(1);
  } catch (const tessera::Error& e) {
    const bool named = std::string(e.what()).find("PE 1") != std::string::npos;
    const bool ok =
        (e.code() == tessera::ErrorCode::peer_lost || e.code() == tessera::ErrorCode::timeout) &&
        named;
    std::printf("peer-lost %s: %s\n", ok ? "PASS" : "FAIL", e.what());
    std::fflush(stdout);
    _exit(ok ? 0 : 1);  // the job is broken: no collective finalize
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "ops";
  try {
    auto options = tessera::Options::from_env();
    if (std::getenv("TESSERA_HEAP_SIZE") == nullptr) options.heap_size = std::size_t{32} << 20;
    auto rt = tessera::Runtime::init(options);
    const int rc =
        mode.rfind("peer-lost", 0) == 0 ? peer_lost(rt, mode == "peer-lost-host") : ops(rt);
    rt.finalize();
    return rc;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fabric_proc: %s\n", e.what());
    return 2;
  }
}
