// The network transport inside one test process: PEs as threads, split into nodes, reaching the
// other node through the libfabric proxy (provider from TESSERA_FABRIC_PROVIDER, else the best
// offered). The device-API suites themselves run over the proxy as separate ctest entries.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "harness/run_pes.hpp"
#include "tessera/device.hpp"
#include "tessera/launch.hpp"
#include "tessera/tessera.hpp"
#include "transport/descriptor.hpp"
#include "transport/heap_registration.hpp"
#include "transport/proxy_idle.hpp"

namespace tessera {
namespace {

namespace td = tessera::device;
using ::testing::HasSubstr;

harness::PeOptions split(std::vector<std::string> node_ids) {
  harness::PeOptions o;
  o.heap_size = std::size_t{16} << 20;
  o.node_ids = std::move(node_ids);
  o.timeout = std::chrono::milliseconds(30000);
  return o;
}

// Like harness::run_pes, with the network proxy switched on (threads jobs leave it off).
void run_fabric_pes(int n, const harness::PeOptions& o, const std::function<void(Runtime&)>& fn,
                    bool p2p = true) {
  auto group = make_threads_group(n);
  harness::run_threads(n, [&](int rank) {
    Options opts = harness::pe_options(group, rank, o);
    opts.fabric = FabricMode::on;
    opts.p2p = p2p;
    Runtime rt = Runtime::init(opts);
    fn(rt);
    rt.finalize();
  });
}

template <class Fn>
void run_kernel(Runtime& rt, Fn fn) {
  launch(rt.stream(), 1, [fn](td::Block blk) { fn(blk); });
  rt.stream().synchronize();
}

TEST(Transport, EachPeerIsSelfMappedOrProxyByNode) {
  run_fabric_pes(4, split({"a", "a", "b", "b"}), [](Runtime& rt) {
    const int me = rt.pe();
    for (int p = 0; p < 4; ++p) {
      const Transport want =
          p == me ? Transport::self : (p / 2 == me / 2 ? Transport::mapped : Transport::proxy);
      EXPECT_EQ(rt.transport(p), want) << "PE " << me << " -> PE " << p;
    }
    EXPECT_FALSE(rt.fabric_provider().empty());
    EXPECT_FALSE(rt.fabric_nic().empty());
    EXPECT_THROW(rt.transport(4), Error);
  });
}

TEST(Transport, P2PZeroSendsEveryOtherPeThroughTheProxy) {
  run_fabric_pes(
      2, split({}),
      [](Runtime& rt) {
        EXPECT_EQ(rt.transport(rt.pe()), Transport::self);
        EXPECT_EQ(rt.transport(1 - rt.pe()), Transport::proxy);
        EXPECT_EQ(rt.ptr(rt.heap_base(), 1 - rt.pe()), nullptr);
        auto box = rt.alloc<std::uint64_t>(4);
        auto sig = rt.alloc<std::uint64_t>(1);
        for (int i = 0; i < 4; ++i) box[i] = 0;
        *sig.get() = 0;
        rt.barrier();
        const auto ctx = rt.device_context();
        const int other = 1 - rt.pe();
        std::vector<std::uint64_t> mine = {11u + rt.pe(), 22, 33, 44};
        run_kernel(rt, [&, ctx](td::Block blk) {
          td::put_signal(blk, ctx, td::make_tile(box.get(), 4),
                         td::make_tile<const std::uint64_t>(mine.data(), 4), sig.get(), 1,
                         td::SignalOp::set, other);
          td::wait_until(blk, ctx, sig.get(), td::Cmp::ge, 1);
        });
        EXPECT_EQ(box[0], 11u + static_cast<std::uint64_t>(other));
        EXPECT_EQ(box[3], 44u);
        rt.barrier();
      },
      false);
}

TEST(Transport, ThreadsJobsLeaveTheNetworkOffUnlessAskedFor) {
  auto group = make_threads_group(2);
  harness::run_threads(2, [&](int rank) {
    Options opts = harness::pe_options(group, rank, split({"a", "b"}));
    opts.fabric = FabricMode::automatic;
    Runtime rt = Runtime::init(opts);
    EXPECT_EQ(rt.transport(1 - rt.pe()), Transport::unreachable);
    EXPECT_TRUE(rt.fabric_provider().empty());
    rt.finalize();
  });
}

// A 1 MiB tile and a strided tile, each followed by its signal: whoever sees the signal sees
// every byte, from the mapped neighbour and from the PEs of the other node alike.
TEST(ProxyRma, PutSignalDeliversTheWholeTileBeforeTheSignal) {
  constexpr std::size_t kBytes = std::size_t{1} << 20;
  run_fabric_pes(4, split({"a", "a", "b", "b"}), [](Runtime& rt) {
    const int me = rt.pe();
    auto inbox = rt.alloc<std::uint8_t>(kBytes * 4);
    auto strided = rt.alloc<std::uint32_t>(4 * 16 * 24);
    auto sig = rt.alloc<std::uint64_t>(8);
    for (int i = 0; i < 8; ++i) sig[static_cast<std::size_t>(i)] = 0;
    rt.barrier();
    std::vector<std::uint8_t> data(kBytes);
    for (std::size_t i = 0; i < kBytes; ++i) data[i] = static_cast<std::uint8_t>(i * 7 + me);
    std::vector<std::uint32_t> rows(16 * 20);
    for (std::size_t i = 0; i < rows.size(); ++i)
      rows[i] = static_cast<std::uint32_t>(i + 1000u * me);
    const auto ctx = rt.device_context();
    run_kernel(rt, [&, ctx](td::Block blk) {
      for (int p = 0; p < 4; ++p) {
        if (p == me) continue;
        td::put_signal(blk, ctx, td::make_tile(inbox.get() + kBytes * me, kBytes),
                       td::make_tile<const std::uint8_t>(data.data(), kBytes), sig.get() + me, 1,
                       td::SignalOp::add, p);
        // 16 x 12 out of rows of 20 (source) into rows of 24 (destination).
        td::put_signal(blk, ctx, td::make_tile(strided.get() + 16 * 24 * me, 16, 12, 24),
                       td::make_tile<const std::uint32_t>(rows.data(), 16, 12, 20),
                       sig.get() + 4 + me, 1, td::SignalOp::add, p);
      }
      for (int p = 0; p < 4; ++p) {
        if (p == me) continue;
        td::wait_until(blk, ctx, sig.get() + p, td::Cmp::ge, 1);
        td::wait_until(blk, ctx, sig.get() + 4 + p, td::Cmp::ge, 1);
      }
    });
    for (int p = 0; p < 4; ++p) {
      if (p == me) continue;
      for (std::size_t i = 0; i < kBytes; i += 4093)
        ASSERT_EQ(inbox[kBytes * p + i], static_cast<std::uint8_t>(i * 7 + p)) << "from PE " << p;
      ASSERT_EQ(inbox[kBytes * p + kBytes - 1], static_cast<std::uint8_t>((kBytes - 1) * 7 + p));
      for (std::size_t r = 0; r < 16; ++r)
        for (std::size_t c = 0; c < 12; ++c)
          ASSERT_EQ(strided[16 * 24 * p + r * 24 + c], r * 20 + c + 1000u * p)
              << "from PE " << p << " at (" << r << "," << c << ")";
    }
    rt.barrier();
  });
}

// More non-blocking operations than the ring has slots: pushes wait for free slots, tickets wrap
// around, and quiet still sees every one complete.
TEST(ProxyRing, MoreOperationsThanSlotsAllComplete) {
  constexpr std::size_t kOps = 5000;
  run_fabric_pes(2, split({"a", "b"}), [](Runtime& rt) {
    auto box = rt.alloc<std::uint64_t>(kOps);
    auto counter = rt.alloc<std::uint64_t>(1);
    *counter.get() = 0;
    rt.barrier();
    std::vector<std::uint64_t> values(kOps);
    for (std::size_t i = 0; i < kOps; ++i) values[i] = i * 3 + 1;
    const auto ctx = rt.device_context();
    const int other = 1 - rt.pe();
    run_kernel(rt, [&, ctx](td::Block blk) {
      for (std::size_t i = 0; i < kOps; ++i) {
        td::put_nbi(blk, ctx, td::make_tile(box.get() + i, 1),
                    td::make_tile<const std::uint64_t>(&values[i], 1), other);
        td::atomic_add(ctx, counter.get(), std::uint64_t{1}, other, td::Sem::relaxed);
      }
      td::quiet(blk, ctx);
    });
    rt.barrier();
    EXPECT_EQ(*counter.get(), std::uint64_t{kOps});
    for (std::size_t i = 0; i < kOps; ++i) ASSERT_EQ(box[i], i * 3 + 1) << "element " << i;
    rt.barrier();
  });
}

TEST(ProxyRing, ADescriptorOutsideTheHeapIsRejectedNotSent) {
  detail::ProxyBounds b{4, 4096, 8192, 128};
  td::ProxyDescriptor d{};
  d.op = td::ProxyOp::put;
  d.pe = 1;
  d.local = 64;
  d.remote_offset = 4000;
  d.bytes = 96;
  EXPECT_EQ(detail::validate_descriptor(d, b), "");
  d.bytes = 97;
  EXPECT_THAT(detail::validate_descriptor(d, b), HasSubstr("outside the 4096-byte heap"));
  d.bytes = ~std::uint64_t{0};
  EXPECT_THAT(detail::validate_descriptor(d, b), HasSubstr("outside"));
  d.bytes = 8;
  d.pe = 4;
  EXPECT_THAT(detail::validate_descriptor(d, b), HasSubstr("PE is outside [0, 4)"));
  d.pe = -1;
  EXPECT_THAT(detail::validate_descriptor(d, b), HasSubstr("outside"));
  // Atomics may target the control words (the device barrier), puts may not.
  d.pe = 2;
  d.remote_offset = 8192;
  EXPECT_THAT(detail::validate_descriptor(d, b), HasSubstr("outside"));
  d.op = td::ProxyOp::atomic;
  d.word = td::ProxyWord::u64;
  EXPECT_EQ(detail::validate_descriptor(d, b), "");
  d.remote_offset = 8196;
  EXPECT_THAT(detail::validate_descriptor(d, b), HasSubstr("not 8-byte aligned"));
  d.remote_offset = 8192 + 128;
  EXPECT_THAT(detail::validate_descriptor(d, b), HasSubstr("outside"));
  d.remote_offset = 0;
  d.word = static_cast<td::ProxyWord>(9);
  EXPECT_THAT(detail::validate_descriptor(d, b), HasSubstr("unknown word type"));
  d.op = static_cast<td::ProxyOp>(0);
  EXPECT_THAT(detail::validate_descriptor(d, b), HasSubstr("unknown descriptor op 0"));
  d.op = td::ProxyOp::signal;
  d.signal_offset = 8;
  d.compare = 7;
  EXPECT_THAT(detail::validate_descriptor(d, b), HasSubstr("unknown signal op 7"));
}

// A kProxyStaticData descriptor addresses the static data region (OpenSHMEM's static and global
// variables), bounded by its size, never the heap's or the control words'; none is accepted
// while no region is registered.
TEST(ProxyRing, AStaticDataDescriptorIsBoundedByTheStaticDataRegion) {
  detail::ProxyBounds b{4, 4096, 8192, 128, 0};
  td::ProxyDescriptor d{};
  d.op = td::ProxyOp::put;
  d.flags = td::kProxyStaticData;
  d.pe = 1;
  d.local = 64;
  d.remote_offset = 0;
  d.bytes = 8;
  EXPECT_THAT(detail::validate_descriptor(d, b), HasSubstr("no static data region is registered"));
  b.static_bytes = 12288;
  EXPECT_EQ(detail::validate_descriptor(d, b), "");
  d.remote_offset = 12280;  // past the heap's end, inside the static data region
  EXPECT_EQ(detail::validate_descriptor(d, b), "");
  d.bytes = 9;
  EXPECT_THAT(detail::validate_descriptor(d, b),
              HasSubstr("outside the 12288-byte static data region"));
  // Words: inside the region, not in the control area that follows the heap.
  d.op = td::ProxyOp::atomic;
  d.word = td::ProxyWord::u64;
  d.remote_offset = 8192;
  EXPECT_EQ(detail::validate_descriptor(d, b), "");
  b.static_bytes = 4096;
  EXPECT_THAT(detail::validate_descriptor(d, b), HasSubstr("static data"));
  d.op = td::ProxyOp::signal;
  d.signal_offset = 4088;
  EXPECT_EQ(detail::validate_descriptor(d, b), "");
  d.signal_offset = 4096;
  EXPECT_THAT(detail::validate_descriptor(d, b), HasSubstr("static data"));
}

// Host-side put/get reach the PEs of the other node through the proxy, from and into buffers
// outside the heap (registered per operation where the provider asks) and inside it.
TEST(HostRma, PutAndGetReachEveryPeerMappedOrThroughTheProxy) {
  constexpr std::size_t kBytes = (std::size_t{200} << 10) + 3;
  run_fabric_pes(4, split({"a", "a", "b", "b"}), [](Runtime& rt) {
    const int me = rt.pe();
    auto inbox = rt.alloc<std::uint8_t>(kBytes * 4);
    auto source = rt.alloc<std::uint8_t>(kBytes);
    auto landing = rt.alloc<std::uint8_t>(kBytes);
    auto pattern = [](int pe, std::size_t i) { return static_cast<std::uint8_t>(i * 13 + pe * 7); };
    for (std::size_t i = 0; i < kBytes; ++i) source[i] = pattern(me + 10, i);
    rt.barrier();
    std::vector<std::uint8_t> mine(kBytes);
    for (std::size_t i = 0; i < kBytes; ++i) mine[i] = pattern(me, i);
    for (int p = 0; p < 4; ++p) {
      if (p != me) rt.put(inbox.get() + kBytes * me, mine.data(), kBytes, p);
    }
    rt.barrier();
    for (int p = 0; p < 4; ++p) {
      if (p == me) continue;
      for (std::size_t i = 0; i < kBytes; i += 997)
        ASSERT_EQ(inbox[kBytes * p + i], pattern(p, i)) << "from PE " << p << " byte " << i;
      ASSERT_EQ(inbox[kBytes * p + kBytes - 1], pattern(p, kBytes - 1)) << "from PE " << p;
    }
    for (int p = 0; p < 4; ++p) {
      if (p == me) continue;
      std::vector<std::uint8_t> got(kBytes, 0);
      rt.get(got.data(), source.get(), kBytes, p);
      rt.get(landing.get(), source.get(), kBytes, p);
      for (std::size_t i = 0; i < kBytes; i += 997) {
        ASSERT_EQ(got[i], pattern(p + 10, i)) << "get from PE " << p << " byte " << i;
        ASSERT_EQ(landing[i], pattern(p + 10, i)) << "get into the heap from PE " << p;
      }
      ASSERT_EQ(got[kBytes - 1], pattern(p + 10, kBytes - 1)) << "get from PE " << p;
    }
    rt.barrier();
  });
}

TEST(HostRma, BadArgumentsToAProxyPeerFailWithoutTouchingTheNetwork) {
  run_fabric_pes(2, split({"a", "b"}), [](Runtime& rt) {
    auto box = rt.alloc<std::uint64_t>(4);
    rt.barrier();
    const int other = 1 - rt.pe();
    ASSERT_EQ(rt.transport(other), Transport::proxy);
    std::uint64_t word = 5;
    char* heap_end = static_cast<char*>(rt.heap_base()) + rt.heap_size();
    try {
      rt.put(heap_end - 4, &word, sizeof(word), other);  // runs past the heap's end
      ADD_FAILURE() << "a put past the end of the heap succeeded";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << e.what();
    }
    EXPECT_THROW(rt.get(&word, box.get(), sizeof(word), 2), Error);
    EXPECT_THROW(rt.get(&word, box.get(), sizeof(word), -1), Error);
    rt.put(box.get(), &word, 0, other);  // nothing to move: returns at once
    // The proxy is still healthy: a real put after the rejected ones lands.
    rt.put(box.get() + rt.pe(), &word, sizeof(word), other);
    rt.barrier();
    EXPECT_EQ(box[static_cast<std::size_t>(other)], 5u);
    rt.barrier();
  });
}

TEST(ProxyIdle, SpinsRightAfterWorkThenYieldsThenNaps) {
  using P = detail::ProxyIdlePolicy;
  using std::chrono::microseconds;
  using std::chrono::milliseconds;
  EXPECT_EQ(P::next(microseconds(0), false), detail::ProxyWait::spin);
  EXPECT_EQ(P::next(microseconds(49), false), detail::ProxyWait::spin);
  EXPECT_EQ(P::next(microseconds(50), false), detail::ProxyWait::yield);
  EXPECT_EQ(P::next(microseconds(1999), false), detail::ProxyWait::yield);
  EXPECT_EQ(P::next(microseconds(2000), false), detail::ProxyWait::warm_nap);
  EXPECT_EQ(P::next(milliseconds(49), false), detail::ProxyWait::warm_nap);
  EXPECT_EQ(P::next(milliseconds(50), false), detail::ProxyWait::cold_nap);
  EXPECT_EQ(P::next(std::chrono::hours(1), false), detail::ProxyWait::cold_nap);
  // Operations in flight: never a nap, whatever the time since the last completion.
  EXPECT_EQ(P::next(microseconds(10), true), detail::ProxyWait::spin);
  EXPECT_EQ(P::next(milliseconds(3), true), detail::ProxyWait::yield);
  EXPECT_EQ(P::next(std::chrono::seconds(30), true), detail::ProxyWait::yield);
  // A nap is short next to any timeout, and the cold one can be a blocking CQ wait (whole ms).
  EXPECT_LE(P::kWarmNap, microseconds(100));
  EXPECT_GE(P::kColdNap, milliseconds(1));
  EXPECT_LE(P::kColdNap, milliseconds(2));
}

TEST(HeapRegistration, GpuHeapsAskForHmemWithTheirInterfaceAndDevice) {
  const auto host = detail::heap_registration(detail::HeapMemory::host, 3);
  EXPECT_FALSE(host.hmem);
  EXPECT_EQ(host.iface, detail::HeapMemory::host);
  EXPECT_EQ(host.device, -1);
  EXPECT_EQ(detail::describe(host), "host memory");
  const auto cuda = detail::heap_registration(detail::HeapMemory::cuda, 1);
  EXPECT_TRUE(cuda.hmem);
  EXPECT_EQ(cuda.iface, detail::HeapMemory::cuda);
  EXPECT_EQ(cuda.device, 1);
  EXPECT_EQ(detail::describe(cuda), "CUDA device memory (device 1)");
  const auto rocr = detail::heap_registration(detail::HeapMemory::rocr, -1);
  EXPECT_TRUE(rocr.hmem);
  EXPECT_EQ(rocr.iface, detail::HeapMemory::rocr);
  EXPECT_EQ(rocr.device, 0);
  EXPECT_EQ(detail::describe(rocr), "ROCm device memory (device 0)");
}

TEST(Fabric, AnUnknownProviderFailsInitNamingWhatIsOffered) {
  auto group = make_threads_group(2);
  harness::run_threads(2, [&](int rank) {
    Options opts = harness::pe_options(group, rank, split({"a", "b"}));
    opts.fabric = FabricMode::on;
    opts.fabric_provider = "no-such-provider";
    try {
      Runtime rt = Runtime::init(opts);
      ADD_FAILURE() << "init succeeded without a provider";
    } catch (const Error& e) {
      if (e.code() == ErrorCode::transport) {
        EXPECT_THAT(e.message(), HasSubstr("no-such-provider"));
        EXPECT_THAT(e.message(), HasSubstr("RDM providers offered:"));
      } else {
        // The peer left init with its own failure first.
        EXPECT_EQ(e.code(), ErrorCode::peer_lost) << e.what();
      }
    }
  });
}

}  // namespace
}  // namespace tessera
