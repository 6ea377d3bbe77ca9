// The device half of the network proxy (DESIGN §4, §6): a call on a PE whose heap is not mapped
// here (another node, or TESSERA_P2P=0) becomes a 64-byte descriptor in a ring in host-visible
// memory, which this PE's proxy thread turns into libfabric operations. Producers are any
// threads of this PE; the one consumer is the proxy thread.
//
// Slot protocol (per slot, for ticket t in slot t % n_slots): seq == t: free for t; the producer
// fills it and publishes seq = t + 1 (release). The proxy completes it and stores either
// t + n_slots (free for the next lap) or, for a descriptor marked kCollect, t + 2 (result in
// `value`), after which the producer reads the result and frees the slot itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "tessera/device/context.hpp"
#include "tessera/device/failure.hpp"
#include "tessera/device/order.hpp"
#include "tessera/device/platform.hpp"

namespace tessera::device {

// What a descriptor asks for.
enum class ProxyOp : std::uint8_t {
  put = 1,             // write `bytes` from local address `local` to `remote_offset` on `pe`
  get = 2,             // read `bytes` at `remote_offset` on `pe` into local address `local`
  put_signal = 3,      // put, then (after its delivery) the signal update at `signal_offset`
  signal = 4,          // signal update alone: set or add `value` at `signal_offset`
  atomic = 5,          // atomic `amo` with operand `value`, no result
  fetch_atomic = 6,    // atomic `amo` with operand `value`; previous value returned in `value`
  compare_atomic = 7,  // compare `compare` and swap `value`; previous value returned in `value`
  fence = 8,           // later descriptors start only once every earlier one completed
};

// Atomic operations of ProxyOp::atomic / fetch_atomic.
enum class ProxyAmo : std::uint8_t { add, and_, or_, xor_, min, max, exchange, load, store };

// Word types of atomics: 32/64 bits, signed or not (min/max compare accordingly).
enum class ProxyWord : std::uint8_t { i32, u32, i64, u64 };

// Bits of ProxyDescriptor::flags.
enum ProxyFlags : std::uint8_t {
  kProxyCollect = 1u << 0,  // the issuer waits for this descriptor and frees its slot
  kProxyFenced = 1u << 1,   // starts only after every earlier descriptor completed (release)
};

struct alignas(64) ProxyDescriptor {
  std::uint64_t seq;  // slot state, see the file comment; written last (release)
  ProxyOp op;
  ProxyAmo amo;
  ProxyWord word;
  std::uint8_t flags;           // ProxyFlags
  std::int32_t pe;              // target PE
  std::uint64_t remote_offset;  // heap offset on `pe` (data, or the atomic word)
  std::uint64_t local;          // local address (put source, get destination)
  std::uint64_t bytes;          // put/get length
  std::uint64_t signal_offset;  // heap offset of the signal word on `pe` (put_signal, signal)
  std::uint64_t value;          // signal value / atomic operand; the result of fetching ops
  std::uint64_t compare;        // compare_atomic's expected value; signal op of put_signal
};
static_assert(sizeof(ProxyDescriptor) == 64, "a descriptor is one 64-byte line");
static_assert(std::is_trivially_copyable_v<ProxyDescriptor>);

// The ring's header, at the start of the proxy ring memory; descriptors follow it.
struct alignas(64) ProxyChannel {
  std::uint64_t reserve;  // tickets handed out to producers
  char pad0_[56];
  std::uint64_t completed;  // every ticket below this one is complete (written by the proxy)
  char pad1_[56];
  std::uint32_t failure;  // 0, or 1 + the FailureCode of a proxy failure (then `message`)
  std::uint32_t n_slots;  // descriptors in the ring
  char message[376];      // the proxy's failure, NUL-terminated

  static constexpr std::size_t kHeaderBytes = 512;

  TESSERA_HOST_DEVICE ProxyDescriptor* slots() {
    return reinterpret_cast<ProxyDescriptor*>(reinterpret_cast<char*>(this) + kHeaderBytes);
  }
  // Descriptors a ring of `bytes` holds.
  static constexpr std::uint32_t slots_for(std::size_t bytes) {
    return static_cast<std::uint32_t>((bytes - kHeaderBytes) / sizeof(ProxyDescriptor));
  }
};
static_assert(sizeof(ProxyChannel) == ProxyChannel::kHeaderBytes, "header is 512 bytes");

namespace detail {

// Fails with peer_lost when the job is aborting (ctx's abort word is set): some PE failed and
// left, or died. Polled by every bounded wait next to its clock.
TESSERA_HOST_DEVICE inline void check_abort(const Context& ctx, const char* what) {
  if (ctx.barrier_words == nullptr) return;
  const std::uint64_t word =
      platform::atomic_load(&ctx.barrier_words[Context::kAbortWord], Sem::relaxed, Scope::system);
  if (word == 0) return;
  Message m;
  m << what << " on PE " << ctx.my_pe << " gave up: PE " << abort_pe(word);
  if (abort_reason(word) == AbortReason::died) {
    m << " is lost (its process ended)";
  } else {
    m << " failed and aborted the job (its own message says why)";
  }
  platform::report_failure(FailureCode::peer_lost, m.c_str());
}

// Reports the proxy's failure to the calling device code, if there is one.
TESSERA_HOST_DEVICE inline void check_proxy(ProxyChannel* ch) {
  const std::uint32_t f = platform::atomic_load(&ch->failure, Sem::acquire, Scope::system);
  if (f != 0) platform::report_failure(static_cast<FailureCode>(f - 1), ch->message);
}

// Waits, bounded by ctx.timeout_ns, until `*word >= value` (`==` when exact), watching for a
// proxy failure and for the job aborting; reports a timeout naming `what`.
TESSERA_HOST_DEVICE inline void proxy_wait(const Context& ctx, const std::uint64_t* word,
                                           std::uint64_t value, bool exact, const char* what) {
  const std::uint64_t start = ctx.timeout_ns != 0 ? platform::clock_ns() : 0;
  for (std::uint32_t spins = 0;; ++spins) {
    const std::uint64_t seen = platform::atomic_load(word, Sem::acquire, Scope::system);
    if (exact ? seen == value : seen >= value) return;
    platform::spin_pause(spins);
    if ((spins & 255u) != 255u) continue;
    check_proxy(ctx.proxy);
    check_abort(ctx, what);
    if (ctx.timeout_ns != 0 && platform::clock_ns() - start > ctx.timeout_ns) {
      Message m;
      m << what << " on PE " << ctx.my_pe << " timed out after "
        << static_cast<std::uint64_t>(ctx.timeout_ns / 1000000)
        << " ms waiting for the network proxy (ticket state " << seen << ", awaited " << value
        << ")";
      platform::report_failure(FailureCode::timeout, m.c_str());
    }
  }
}

// Hands `d` to the proxy and returns its ticket. Waits (bounded) while the ring is full.
TESSERA_HOST_DEVICE inline std::uint64_t proxy_push(const Context& ctx, const ProxyDescriptor& d,
                                                    const char* what) {
  ProxyChannel* ch = ctx.proxy;
  const std::uint64_t t =
      platform::atomic_fetch_add(&ch->reserve, std::uint64_t{1}, Sem::relaxed, Scope::system);
  ProxyDescriptor* slot = &ch->slots()[t % ch->n_slots];
  proxy_wait(ctx, &slot->seq, t, true, what);
  ProxyDescriptor body = d;
  body.seq = 0;
  // Every field but seq, then seq with release: the proxy acquires seq before reading the rest.
  platform::copy_bytes(reinterpret_cast<char*>(slot) + 8, reinterpret_cast<const char*>(&body) + 8,
                       sizeof(ProxyDescriptor) - 8);
  platform::atomic_store(&slot->seq, t + 1, Sem::release, Scope::system);
  return t;
}

// Waits until every ticket below `end` is complete.
TESSERA_HOST_DEVICE inline void proxy_wait_completed(const Context& ctx, std::uint64_t end,
                                                     const char* what) {
  proxy_wait(ctx, &ctx.proxy->completed, end, false, what);
}

// Waits for a kProxyCollect descriptor's result, frees its slot and returns the result.
TESSERA_HOST_DEVICE inline std::uint64_t proxy_collect(const Context& ctx, std::uint64_t ticket,
                                                       const char* what) {
  ProxyChannel* ch = ctx.proxy;
  ProxyDescriptor* slot = &ch->slots()[ticket % ch->n_slots];
  proxy_wait(ctx, &slot->seq, ticket + 2, true, what);
  const std::uint64_t result = platform::atomic_load(&slot->value, Sem::relaxed, Scope::system);
  platform::atomic_store(&slot->seq, ticket + ch->n_slots, Sem::release, Scope::system);
  return result;
}

// Every descriptor pushed so far (by any thread of this PE) is complete on return.
TESSERA_HOST_DEVICE inline void proxy_quiet(const Context& ctx, const char* what) {
  if (ctx.proxy == nullptr) return;
  const std::uint64_t end = platform::atomic_load(&ctx.proxy->reserve, Sem::acquire, Scope::system);
  proxy_wait_completed(ctx, end, what);
}

template <class T>
TESSERA_HOST_DEVICE constexpr ProxyWord proxy_word() {
  if constexpr (sizeof(T) == 4) {
    return std::is_signed_v<T> ? ProxyWord::i32 : ProxyWord::u32;
  } else {
    return std::is_signed_v<T> ? ProxyWord::i64 : ProxyWord::u64;
  }
}

template <class T>
TESSERA_HOST_DEVICE std::uint64_t proxy_bits(T v) {
  if constexpr (sizeof(T) == 4) {
    return static_cast<std::uint32_t>(v);
  } else {
    return static_cast<std::uint64_t>(v);
  }
}

template <class T>
TESSERA_HOST_DEVICE T proxy_value(std::uint64_t bits) {
  if constexpr (sizeof(T) == 4) {
    return static_cast<T>(static_cast<std::uint32_t>(bits));
  } else {
    return static_cast<T>(bits);
  }
}

// A remote atomic through the proxy. Fetching forms wait for their result; the others are
// complete at quiet. Release semantics fence the atomic behind every earlier descriptor.
template <class T>
TESSERA_HOST_DEVICE T proxy_atomic(const Context& ctx, ProxyOp op, ProxyAmo amo, const T* dst,
                                   T value, T compare, int pe, Sem sem, const char* what) {
  ProxyDescriptor d{};
  d.op = op;
  d.amo = amo;
  d.word = proxy_word<T>();
  d.pe = pe;
  d.remote_offset = ctx.heap_offset(dst);
  d.value = proxy_bits(value);
  d.compare = proxy_bits(compare);
  const bool fetch = op != ProxyOp::atomic;
  if (fetch) d.flags |= kProxyCollect;
  if (sem == Sem::release || sem == Sem::acq_rel) d.flags |= kProxyFenced;
  const std::uint64_t t = proxy_push(ctx, d, what);
  return fetch ? proxy_value<T>(proxy_collect(ctx, t, what)) : T{};
}

}  // namespace detail
}  // namespace tessera::device
