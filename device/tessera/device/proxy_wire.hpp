// The network proxy ring's wire format (DESIGN §4, §6): the layout of the ring in host-visible
// memory, the descriptor every producer writes and the proxy thread reads, the slot protocol's
// states, and the encoding of each operation into a descriptor. Producers (device code,
// impl/proxy_producer.hpp; host code, src/transport/proxy_host_producer.hpp) and the consumer
// (the proxy engine, src/transport/proxy_engine.cpp) agree through this header alone.
//
// Slot protocol (per slot, for ticket t in slot t % n_slots): seq == t: free for t; the producer
// fills it and publishes seq = t + 1 (release). The proxy completes it and stores either
// t + n_slots (free for the next lap) or, for a descriptor marked kProxyCollect, t + 2 (result
// in `value`), after which the producer reads the result and frees the slot itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

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
  // remote_offset and signal_offset are offsets in the executable's static data segment (the
  // OpenSHMEM layer's static and global variables), which the transport registers as a second
  // region, not in the heap. Set by proxy_push for a Context with kStaticDataContext.
  kProxyStaticData = 1u << 2,
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

// --- slot states of ticket t (see the file comment) ---

// The slot is free for ticket t (its producer may fill it).
TESSERA_HOST_DEVICE constexpr std::uint64_t proxy_slot_free(std::uint64_t t) { return t; }
// The producer published ticket t's descriptor.
TESSERA_HOST_DEVICE constexpr std::uint64_t proxy_slot_published(std::uint64_t t) { return t + 1; }
// The proxy completed collected ticket t; its result is in `value`.
TESSERA_HOST_DEVICE constexpr std::uint64_t proxy_slot_result(std::uint64_t t) { return t + 2; }
// Ticket t is done and the slot is free for the ticket one lap later.
TESSERA_HOST_DEVICE constexpr std::uint64_t proxy_slot_next_lap(std::uint64_t t,
                                                                std::uint32_t n_slots) {
  return t + n_slots;
}

// --- encoding ---

template <class T>
TESSERA_HOST_DEVICE constexpr ProxyWord proxy_word() {
  if constexpr (sizeof(T) == 4) {
    return std::is_signed_v<T> ? ProxyWord::i32 : ProxyWord::u32;
  } else {
    return std::is_signed_v<T> ? ProxyWord::i64 : ProxyWord::u64;
  }
}

// An atomic operand as the descriptor carries it (32-bit words zero-extended).
template <class T>
TESSERA_HOST_DEVICE constexpr std::uint64_t proxy_bits(T v) {
  if constexpr (sizeof(T) == 4) {
    return static_cast<std::uint32_t>(v);
  } else {
    return static_cast<std::uint64_t>(v);
  }
}

// A put or get of `bytes` between local address `local` and heap offset `remote_offset` on `pe`.
TESSERA_HOST_DEVICE constexpr ProxyDescriptor encode_proxy_rma(ProxyOp op, int pe,
                                                               std::uint64_t remote_offset,
                                                               std::uint64_t local,
                                                               std::uint64_t bytes) {
  ProxyDescriptor d{};
  d.op = op;
  d.pe = pe;
  d.remote_offset = remote_offset;
  d.local = local;
  d.bytes = bytes;
  return d;
}

// A put whose delivery is followed by `op` of `value` on the signal at `signal_offset`.
TESSERA_HOST_DEVICE constexpr ProxyDescriptor encode_proxy_put_signal(
    int pe, std::uint64_t remote_offset, std::uint64_t local, std::uint64_t bytes,
    std::uint64_t signal_offset, std::uint64_t value, SignalOp op) {
  ProxyDescriptor d = encode_proxy_rma(ProxyOp::put_signal, pe, remote_offset, local, bytes);
  d.signal_offset = signal_offset;
  d.value = value;
  d.compare = static_cast<std::uint64_t>(op);
  return d;
}

// A signal update alone; `fenced` (release) starts it only after every earlier descriptor.
TESSERA_HOST_DEVICE constexpr ProxyDescriptor encode_proxy_signal(int pe,
                                                                  std::uint64_t signal_offset,
                                                                  std::uint64_t value, SignalOp op,
                                                                  bool fenced) {
  ProxyDescriptor d{};
  d.op = ProxyOp::signal;
  d.pe = pe;
  d.signal_offset = signal_offset;
  d.value = value;
  d.compare = static_cast<std::uint64_t>(op);
  if (fenced) d.flags = kProxyFenced;
  return d;
}

// An atomic on the T-sized word at heap offset `remote_offset` on `pe` (`op`: atomic,
// fetch_atomic or compare_atomic). Fetching forms are collected: the issuer waits for the
// result. `fenced` (release) starts it only after every earlier descriptor.
template <class T>
TESSERA_HOST_DEVICE constexpr ProxyDescriptor encode_proxy_atomic(ProxyOp op, ProxyAmo amo, int pe,
                                                                  std::uint64_t remote_offset,
                                                                  T value, T compare, bool fenced) {
  ProxyDescriptor d{};
  d.op = op;
  d.amo = amo;
  d.word = proxy_word<T>();
  d.pe = pe;
  d.remote_offset = remote_offset;
  d.value = proxy_bits(value);
  d.compare = proxy_bits(compare);
  if (op != ProxyOp::atomic) d.flags |= kProxyCollect;
  if (fenced) d.flags |= kProxyFenced;
  return d;
}

// Orders: later descriptors of this PE start once every earlier one completed.
TESSERA_HOST_DEVICE constexpr ProxyDescriptor encode_proxy_fence(int my_pe) {
  ProxyDescriptor d{};
  d.op = ProxyOp::fence;
  d.pe = my_pe;
  return d;
}

// --- decoding ---

// True when `d` may start only once every earlier descriptor completed: fenced ones, and the
// operations whose result the issuer reads (a get or fetch must see earlier puts).
TESSERA_HOST_DEVICE constexpr bool proxy_waits_for_earlier(const ProxyDescriptor& d) {
  return (d.flags & kProxyFenced) != 0 || d.op == ProxyOp::fence || d.op == ProxyOp::get ||
         d.op == ProxyOp::fetch_atomic || d.op == ProxyOp::compare_atomic;
}

// The signal update a put_signal or signal descriptor asks for.
TESSERA_HOST_DEVICE constexpr SignalOp proxy_signal_op(const ProxyDescriptor& d) {
  return d.compare == static_cast<std::uint64_t>(SignalOp::add) ? SignalOp::add : SignalOp::set;
}

// A fetching atomic's previous value as the slot carries it back (32-bit words zero-extended).
TESSERA_HOST_DEVICE constexpr std::uint64_t proxy_result_bits(ProxyWord word, std::uint64_t raw) {
  return word == ProxyWord::i32 || word == ProxyWord::u32 ? raw & 0xffffffffu : raw;
}

// The T an atomic result's bits stand for.
template <class T>
TESSERA_HOST_DEVICE constexpr T proxy_value(std::uint64_t bits) {
  if constexpr (sizeof(T) == 4) {
    return static_cast<T>(static_cast<std::uint32_t>(bits));
  } else {
    return static_cast<T>(bits);
  }
}

}  // namespace tessera::device
