// The producer side of the network proxy ring (wire format: proxy_wire.hpp). The one consumer is
// the PE's proxy thread. The ring_* functions need only the ring and what a bounded wait watches,
// so host code (src/transport/proxy_host_producer.hpp) pushes exactly what device code pushes,
// without a Context; the proxy_* forms are device code's. Each ring (a lane) has producers of one
// kind only: ctx.proxy, the device lane, takes device code's tickets; host calls push on the
// proxy's own host lane (issue 18 item 2). ring_push's fetch_add on `reserve` is therefore never
// raced by the other processor, which PCIe hosts without hostNativeAtomicSupported do not allow.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/device/context.hpp"
#include "tessera/device/failure.hpp"
#include "tessera/device/impl/wait.hpp"
#include "tessera/device/order.hpp"
#include "tessera/device/platform.hpp"
#include "tessera/device/proxy_wire.hpp"

namespace tessera::device::detail {

// The diagnostic of a producer that waited too long for the proxy (a slot, a result or
// completion); shared with the host's reading of a failure record (failure_record.hpp).
TESSERA_COLD TESSERA_HOST_DEVICE inline void describe_proxy_timeout(Message& m, int my_pe,
                                                                    std::uint64_t timeout_ns,
                                                                    const char* what,
                                                                    std::uint64_t seen,
                                                                    std::uint64_t value) {
  m << what << " on PE " << my_pe << " timed out after "
    << static_cast<std::uint64_t>(timeout_ns / 1000000)
    << " ms waiting for the network proxy (ticket state " << seen << ", awaited " << value << ")";
}

// Waits, bounded, until `*word >= value` (`==` when exact), watching for a proxy failure and for
// the job aborting; reports a timeout naming `what`.
TESSERA_HOST_DEVICE inline void ring_wait(const WaitWatch& w, const std::uint64_t* word,
                                          std::uint64_t value, bool exact, const char* what) {
  std::uint64_t seen = 0;
  bounded_wait(
      w, what,
      [&] {
        seen = platform::atomic_load(word, Sem::acquire, Scope::system);
        return exact ? seen == value : seen >= value;
      },
      [&] {
        Message m;
        describe_proxy_timeout(m, w.my_pe, w.timeout_ns, what, seen, value);
        platform::report_failure(FailureCode::timeout, m.c_str());
      });
}

// Hands `d` to the proxy of ring `ch` and returns its ticket. Waits (bounded) while the ring is
// full.
TESSERA_HOST_DEVICE inline std::uint64_t ring_push(ProxyChannel* ch, const WaitWatch& w,
                                                   const ProxyDescriptor& d, const char* what) {
  const std::uint64_t t =
      platform::atomic_fetch_add(&ch->reserve, std::uint64_t{1}, Sem::relaxed, Scope::system);
  ProxyDescriptor* slot = &ch->slots()[t % ch->n_slots];
  ring_wait(w, &slot->seq, proxy_slot_free(t), true, what);
  ProxyDescriptor body = d;
  body.seq = 0;
  // Every field but seq, then seq with release: the proxy acquires seq before reading the rest.
  platform::copy_bytes(reinterpret_cast<char*>(slot) + 8, reinterpret_cast<const char*>(&body) + 8,
                       sizeof(ProxyDescriptor) - 8);
  platform::atomic_store(&slot->seq, proxy_slot_published(t), Sem::release, Scope::system);
  return t;
}

// Waits until every ticket below `end` of ring `ch` is complete.
TESSERA_HOST_DEVICE inline void ring_wait_completed(ProxyChannel* ch, const WaitWatch& w,
                                                    std::uint64_t end, const char* what) {
  ring_wait(w, &ch->completed, end, false, what);
}

// Waits for a kProxyCollect descriptor's result, frees its slot and returns the result.
TESSERA_HOST_DEVICE inline std::uint64_t ring_collect(ProxyChannel* ch, const WaitWatch& w,
                                                      std::uint64_t ticket, const char* what) {
  ProxyDescriptor* slot = &ch->slots()[ticket % ch->n_slots];
  ring_wait(w, &slot->seq, proxy_slot_result(ticket), true, what);
  const std::uint64_t result = platform::atomic_load(&slot->value, Sem::relaxed, Scope::system);
  platform::atomic_store(&slot->seq, proxy_slot_next_lap(ticket, ch->n_slots), Sem::release,
                         Scope::system);
  return result;
}

// Every descriptor pushed on ring `ch` so far (by any thread of this PE) is complete on return.
TESSERA_HOST_DEVICE inline void ring_quiet(ProxyChannel* ch, const WaitWatch& w, const char* what) {
  const std::uint64_t end = platform::atomic_load(&ch->reserve, Sem::acquire, Scope::system);
  ring_wait_completed(ch, w, end, what);
}

// --- device code's forms, on ctx.proxy ---

// A Context over static data (kStaticDataContext) marks its descriptors kProxyStaticData, so the
// proxy resolves their offsets in the static data region instead of the heap.
TESSERA_HOST_DEVICE inline std::uint64_t proxy_push(const Context& ctx, const ProxyDescriptor& d,
                                                    const char* what) {
  if ((ctx.flags & kStaticDataContext) == 0) return ring_push(ctx.proxy, watch_of(ctx), d, what);
  ProxyDescriptor marked = d;
  marked.flags = static_cast<std::uint8_t>(marked.flags | kProxyStaticData);
  return ring_push(ctx.proxy, watch_of(ctx), marked, what);
}

TESSERA_HOST_DEVICE inline void proxy_wait_completed(const Context& ctx, std::uint64_t end,
                                                     const char* what) {
  ring_wait_completed(ctx.proxy, watch_of(ctx), end, what);
}

TESSERA_HOST_DEVICE inline std::uint64_t proxy_collect(const Context& ctx, std::uint64_t ticket,
                                                       const char* what) {
  return ring_collect(ctx.proxy, watch_of(ctx), ticket, what);
}

TESSERA_HOST_DEVICE inline void proxy_quiet(const Context& ctx, const char* what) {
  if (ctx.proxy == nullptr) return;
  ring_quiet(ctx.proxy, watch_of(ctx), what);
}

// A remote atomic through the proxy. Fetching forms wait for their result; the others are
// complete at quiet. Release semantics fence the atomic behind every earlier descriptor.
template <class T>
TESSERA_HOST_DEVICE T proxy_atomic(const Context& ctx, ProxyOp op, ProxyAmo amo, const T* dst,
                                   T value, T compare, int pe, Sem sem, const char* what) {
  const ProxyDescriptor d =
      encode_proxy_atomic<T>(op, amo, pe, ctx.heap_offset(dst), value, compare,
                             sem == Sem::release || sem == Sem::acq_rel);
  const std::uint64_t t = proxy_push(ctx, d, what);
  return op != ProxyOp::atomic ? proxy_value<T>(proxy_collect(ctx, t, what)) : T{};
}

}  // namespace tessera::device::detail
