// libFuzzer target: the proxy's descriptor validation (src/transport/descriptor.hpp) on hostile
// descriptors and heap shapes.
//
// Input: 16 bytes of heap shape, then one 64-byte ProxyDescriptor as it would sit in the ring.
// validate_descriptor must never crash, and a descriptor it accepts must name a PE inside the
// job and only remote bytes inside the heap (or, for signals and atomics, the control words),
// aligned as the op needs; a kProxyStaticData descriptor, only bytes inside the static data
// region (no control words). Beyond the arithmetic check, every accepted range is touched in a
// simulated heap, control area and static data region of exactly the bounds' sizes, so
// AddressSanitizer reports any byte outside them.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "fuzz/fuzz_check.hpp"
#include "transport/descriptor.hpp"

namespace {

using tessera::detail::ProxyBounds;
using tessera::device::ProxyDescriptor;
using tessera::device::ProxyOp;

constexpr std::size_t kShapeBytes = 16;

std::uint64_t load_u64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// Small heaps (so they can be allocated) whose sizes and control placement vary freely.
ProxyBounds bounds_from(const std::uint8_t* p) {
  ProxyBounds b;
  b.n_pes = static_cast<int>(static_cast<std::int8_t>(p[0]));  // negative and zero too
  b.heap_bytes = load_u64(p + 1) % (64 * 1024 + 1);
  // The control words follow the heap, as in the runtime: usually close behind it, sometimes
  // anywhere up to the top of the 64-bit offset space (where offset + bytes overflows).
  const std::uint64_t room = UINT64_MAX - b.heap_bytes;
  const std::uint64_t gap = (p[10] & 1) != 0 ? load_u64(p + 8) % room : std::uint64_t{p[9]} * 8;
  b.control_offset = b.heap_bytes + gap;
  b.control_bytes = static_cast<std::size_t>(p[11]) * 8;
  // A static data region of up to 16 KiB, none (0) as often as not.
  b.static_bytes = (p[12] & 1) != 0 ? (std::size_t{p[13]} << 8 | p[14]) % (16 * 1024 + 1) : 0;
  return b;
}

// 128-bit sums cannot overflow, so this check does not share the validator's arithmetic.
__extension__ typedef unsigned __int128 Wide;

bool inside(Wide offset, Wide bytes, Wide begin, Wide size) {
  return offset >= begin && offset + bytes <= begin + size;
}

// A simulated remote PE: the heap, the control area and the static data region, each exactly as
// large as the bounds say.
struct RemoteMemory {
  std::vector<std::uint8_t> heap;
  std::vector<std::uint8_t> control;
  std::vector<std::uint8_t> statics;

  explicit RemoteMemory(const ProxyBounds& b)
      : heap(b.heap_bytes), control(b.control_bytes), statics(b.static_bytes) {}

  // Writes every byte of [offset, offset + bytes) of the heap (or control area), or of the
  // static data region for `static_data`, the way the NIC would; ASan catches a byte outside the
  // area the range starts in.
  void touch(const ProxyBounds& b, std::uint64_t offset, std::uint64_t bytes, bool control_ok,
             bool static_data) {
    std::uint8_t* at = nullptr;
    if (static_data) {
      TESSERA_FUZZ_CHECK(offset < b.static_bytes, "accepted static data offset %llu of %zu",
                         static_cast<unsigned long long>(offset), b.static_bytes);
      std::memset(statics.data() + offset, 0xA5, bytes);
      return;
    }
    if (offset < b.heap_bytes) {
      at = heap.data() + offset;
    } else if (control_ok && offset >= b.control_offset &&
               offset - b.control_offset < b.control_bytes) {
      at = control.data() + (offset - b.control_offset);
    }
    TESSERA_FUZZ_CHECK(at != nullptr, "accepted offset %llu is in neither heap nor control",
                       static_cast<unsigned long long>(offset));
    std::memset(at, 0xA5, bytes);
  }
};

void check_accepted(const ProxyDescriptor& d, const ProxyBounds& b) {
  if (d.op == ProxyOp::fence) return;
  TESSERA_FUZZ_CHECK(d.pe >= 0 && d.pe < b.n_pes, "accepted PE %d of %d", d.pe, b.n_pes);
  RemoteMemory remote(b);
  const bool statics = (d.flags & tessera::device::kProxyStaticData) != 0;
  // The region a remote range must lie in: the static data region for a static data descriptor,
  // else the heap (and, for words, the control area).
  const auto in_heap = [&](std::uint64_t offset, std::uint64_t bytes) {
    return inside(offset, bytes, 0, statics ? b.static_bytes : b.heap_bytes);
  };
  const auto in_control = [&](std::uint64_t offset, std::uint64_t bytes) {
    return !statics && inside(offset, bytes, b.control_offset, b.control_bytes);
  };
  const bool data = d.op == ProxyOp::put || d.op == ProxyOp::get || d.op == ProxyOp::put_signal;
  if (data) {
    TESSERA_FUZZ_CHECK(d.bytes > 0 && d.local != 0, "accepted %llu bytes from local %llu",
                       static_cast<unsigned long long>(d.bytes),
                       static_cast<unsigned long long>(d.local));
    TESSERA_FUZZ_CHECK(in_heap(d.remote_offset, d.bytes), "data at %llu + %llu outside its region",
                       static_cast<unsigned long long>(d.remote_offset),
                       static_cast<unsigned long long>(d.bytes));
    remote.touch(b, d.remote_offset, d.bytes, false, statics);
  }
  if (d.op == ProxyOp::put_signal || d.op == ProxyOp::signal) {
    TESSERA_FUZZ_CHECK(d.signal_offset % 8 == 0, "unaligned signal at %llu",
                       static_cast<unsigned long long>(d.signal_offset));
    TESSERA_FUZZ_CHECK(in_heap(d.signal_offset, 8) || in_control(d.signal_offset, 8),
                       "signal at %llu outside heap and control",
                       static_cast<unsigned long long>(d.signal_offset));
    remote.touch(b, d.signal_offset, 8, true, statics);
  }
  if (!data && d.op != ProxyOp::signal) {
    const std::size_t width = tessera::detail::proxy_word_bytes(d.word);
    TESSERA_FUZZ_CHECK(width == 4 || width == 8, "accepted word type %u",
                       static_cast<unsigned>(d.word));
    TESSERA_FUZZ_CHECK(d.remote_offset % width == 0, "unaligned atomic at %llu",
                       static_cast<unsigned long long>(d.remote_offset));
    TESSERA_FUZZ_CHECK(in_heap(d.remote_offset, width) || in_control(d.remote_offset, width),
                       "atomic at %llu outside heap and control",
                       static_cast<unsigned long long>(d.remote_offset));
    remote.touch(b, d.remote_offset, width, true, statics);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < kShapeBytes + sizeof(ProxyDescriptor)) return 0;
  const ProxyBounds bounds = bounds_from(data);
  ProxyDescriptor d;
  std::memcpy(&d, data + kShapeBytes, sizeof(d));
  const auto op = static_cast<unsigned>(d.op);
  const std::string refusal = tessera::detail::validate_descriptor(d, bounds);
  const bool known_op =
      op >= static_cast<unsigned>(ProxyOp::put) && op <= static_cast<unsigned>(ProxyOp::fence);
  if (!known_op) {
    TESSERA_FUZZ_CHECK(!refusal.empty(), "accepted unknown op %u", op);
    return 0;
  }
  if (refusal.empty()) check_accepted(d, bounds);
  return 0;
}
