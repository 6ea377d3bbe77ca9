// The proxy ring's two producers: device code (tessera/device/impl/proxy_producer.hpp, through
// the device API) and host code (src/transport/proxy_host_producer.hpp) write byte-identical
// descriptors for the same operations. Each runs against its own ring, drained by a recording
// consumer that completes every descriptor as the proxy would; no fabric is needed.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "harness/ring_memory.hpp"
#include "tessera/device.hpp"
#include "transport/proxy_host_producer.hpp"

namespace td = tessera::device;

namespace {

constexpr std::uint32_t kSlots = 8;
constexpr std::uint64_t kFetchResult = 77;

// A ring with a consumer thread that records each published descriptor and completes it: a
// collected one with kFetchResult, the others by freeing the slot and advancing `completed`.
class RecordingRing {
 public:
  RecordingRing() : memory_(kSlots), ring_(memory_.get()) {
    consumer_ = std::thread([this] { consume(); });
  }
  ~RecordingRing() {
    stop_.store(true, std::memory_order_release);
    consumer_.join();
  }

  td::ProxyChannel* ring() { return ring_; }

  // The descriptors recorded so far, once `n` were (bounded by the test's own timeout).
  std::vector<td::ProxyDescriptor> recorded(std::size_t n) {
    while (count_.load(std::memory_order_acquire) < n) std::this_thread::yield();
    return std::vector<td::ProxyDescriptor>(seen_.begin(), seen_.begin() + n);
  }

 private:
  void consume() {
    namespace platform = td::platform;
    for (std::uint64_t t = 0; !stop_.load(std::memory_order_acquire);) {
      td::ProxyDescriptor* slot = &ring_->slots()[t % kSlots];
      if (platform::atomic_load(&slot->seq, td::Sem::acquire, td::Scope::system) !=
          td::proxy_slot_published(t)) {
        std::this_thread::yield();
        continue;
      }
      td::ProxyDescriptor d;
      std::memcpy(&d, slot, sizeof(d));
      seen_[t] = d;
      if ((d.flags & td::kProxyCollect) != 0) {
        platform::atomic_store(&slot->value, kFetchResult, td::Sem::relaxed, td::Scope::system);
        platform::atomic_store(&slot->seq, td::proxy_slot_result(t), td::Sem::release,
                               td::Scope::system);
      } else {
        platform::atomic_store(&slot->seq, td::proxy_slot_next_lap(t, kSlots), td::Sem::release,
                               td::Scope::system);
      }
      ++t;
      platform::atomic_store(&ring_->completed, t, td::Sem::release, td::Scope::system);
      count_.store(t, std::memory_order_release);
    }
  }

  tessera::harness::RingMemory memory_;
  td::ProxyChannel* ring_;
  std::array<td::ProxyDescriptor, 64> seen_{};
  std::atomic<std::uint64_t> count_{0};
  std::atomic<bool> stop_{false};
  std::thread consumer_;
};

TEST(ProxyProducer, HostAndDeviceProducersWriteIdenticalDescriptors) {
  alignas(64) std::uint64_t heap[64] = {};
  std::uint64_t source[4] = {1, 2, 3, 4};
  std::uint64_t sink[4] = {};
  constexpr int kPeer = 1;
  const auto offset = [&](const void* p) {
    return static_cast<std::uint64_t>(static_cast<const char*>(p) -
                                      reinterpret_cast<const char*>(heap));
  };
  const auto local = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p); };

  RecordingRing device_ring;
  char* bases[2] = {reinterpret_cast<char*>(heap), nullptr};  // PE 1: through the proxy
  td::Context ctx{};
  ctx.my_pe = 0;
  ctx.n_pes = 2;
  ctx.peer_base = bases;
  ctx.heap_size = sizeof(heap);
  ctx.timeout_ns = 20'000'000'000ull;
  ctx.proxy = device_ring.ring();
  const td::Thread t;
  td::put_nbi(t, ctx, td::make_tile(heap + 8, 4), td::make_tile<const std::uint64_t>(source, 4),
              kPeer);
  td::get_nbi(t, ctx, td::make_tile(sink, 4), td::make_tile<const std::uint64_t>(heap + 16, 4),
              kPeer);
  td::put_signal_nbi(t, ctx, td::make_tile(heap + 8, 4),
                     td::make_tile<const std::uint64_t>(source, 4), heap, 5, td::SignalOp::add,
                     kPeer);
  td::signal(ctx, heap, 9, td::SignalOp::set, kPeer, td::Sem::release, td::Scope::system);
  td::atomic_add(ctx, heap + 2, std::uint64_t{3}, kPeer, td::Sem::relaxed);
  const std::uint64_t device_fetched = td::atomic_fetch_add(ctx, heap + 3, std::uint64_t{4}, kPeer);
  td::fence(ctx);

  RecordingRing host_ring;
  const tessera::detail::ProxyHostProducer host(host_ring.ring(), 0, tessera::Timeout(20000),
                                                nullptr);
  host.push(td::encode_proxy_rma(td::ProxyOp::put, kPeer, offset(heap + 8), local(source), 32),
            "put");
  host.push(td::encode_proxy_rma(td::ProxyOp::get, kPeer, offset(heap + 16), local(sink), 32),
            "get");
  host.push(td::encode_proxy_put_signal(kPeer, offset(heap + 8), local(source), 32, offset(heap), 5,
                                        td::SignalOp::add),
            "put_signal");
  host.push(td::encode_proxy_signal(kPeer, offset(heap), 9, td::SignalOp::set, true), "signal");
  host.push(td::encode_proxy_atomic<std::uint64_t>(td::ProxyOp::atomic, td::ProxyAmo::add, kPeer,
                                                   offset(heap + 2), 3, 0, false),
            "atomic_add");
  const std::uint64_t ticket =
      host.push(td::encode_proxy_atomic<std::uint64_t>(td::ProxyOp::fetch_atomic, td::ProxyAmo::add,
                                                       kPeer, offset(heap + 3), 4, 0, true),
                "atomic_fetch_add");
  const std::uint64_t host_fetched = host.collect(ticket, "atomic_fetch_add");
  host.push(td::encode_proxy_fence(0), "fence");

  constexpr std::size_t kOps = 7;
  const auto from_device = device_ring.recorded(kOps);
  const auto from_host = host_ring.recorded(kOps);
  for (std::size_t i = 0; i < kOps; ++i) {
    EXPECT_EQ(std::memcmp(&from_device[i], &from_host[i], sizeof(td::ProxyDescriptor)), 0)
        << "descriptor " << i << " (op " << static_cast<int>(from_device[i].op) << " vs "
        << static_cast<int>(from_host[i].op) << ")";
  }
  EXPECT_EQ(device_fetched, kFetchResult);
  EXPECT_EQ(host_fetched, kFetchResult);
}

}  // namespace
