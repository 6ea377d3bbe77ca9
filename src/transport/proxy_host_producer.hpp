// Host code's producer on this PE's network proxy (wire format: tessera/device/proxy_wire.hpp),
// on the proxy's host lane: ordinary host memory with its own ticket counter, never the device
// lane that kernels push on (see proxy_engine.cpp: no word is RMW'd by both CPU and GPU). It pushes
// through the same ring code device code uses (tessera/device/impl/proxy_producer.hpp), so both
// write the same descriptors, and its waits are the library's one bounded wait (the job's timeout,
// its abort word, the proxy's failure flag); failures come out as tessera::Error instead of device
// failures. Internal.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/failure_code.hpp"
#include "tessera/bootstrap.hpp"
#include "tessera/device/failure.hpp"
#include "tessera/device/impl/proxy_producer.hpp"
#include "tessera/device/impl/wait.hpp"
#include "tessera/device/proxy_wire.hpp"
#include "tessera/error.hpp"

namespace tessera::detail {

class ProxyHostProducer {
 public:
  // `ring`: this PE's ring (`pe`); `abort_word`: the job's abort word, or null.
  ProxyHostProducer(device::ProxyChannel* ring, int pe, Timeout timeout,
                    const std::uint64_t* abort_word)
      : ring_(ring) {
    watch_.my_pe = pe;
    watch_.timeout_ns = static_cast<std::uint64_t>(timeout.count()) * 1000000ull;
    watch_.abort_word = abort_word;
    watch_.proxy = ring;
  }

  // Hands `d` (made by an encode_proxy_* function) to the proxy and returns its ticket; waits
  // (bounded) while the ring is full. `what` names the operation in diagnostics.
  std::uint64_t push(const device::ProxyDescriptor& d, const char* what) const {
    return guard([&] { return device::detail::ring_push(ring_, watch_, d, what); });
  }

  // Waits for a kProxyCollect descriptor's result, frees its slot and returns the result.
  std::uint64_t collect(std::uint64_t ticket, const char* what) const {
    return guard([&] { return device::detail::ring_collect(ring_, watch_, ticket, what); });
  }

  // Waits until every ticket below `end` is complete.
  void wait_completed(std::uint64_t end, const char* what) const {
    guard([&] {
      device::detail::ring_wait_completed(ring_, watch_, end, what);
      return 0;
    });
  }

  // A put or get (`op`) of `bytes` between local `local` and heap offset `remote_offset` on
  // `pe`; returns once it completed. Collected, so the caller waits for its own ticket only, not
  // for other threads' operations.
  void copy(device::ProxyOp op, int pe, std::uint64_t remote_offset, void* local, std::size_t bytes,
            const char* what) const {
    device::ProxyDescriptor d = device::encode_proxy_rma(
        op, pe, remote_offset, reinterpret_cast<std::uintptr_t>(local), bytes);
    d.flags = device::kProxyCollect;
    collect(push(d, what), what);
  }

  const device::detail::WaitWatch& watch() const { return watch_; }

 private:
  template <class Body>
  auto guard(Body&& body) const -> decltype(body()) {
    try {
      return body();
    } catch (const device::Failure& f) {
      throw Error(error_code(f.code()), watch_.my_pe, f.what());
    }
  }

  device::ProxyChannel* ring_;
  device::detail::WaitWatch watch_;
};

}  // namespace tessera::detail
