#include "transport/descriptor.hpp"

namespace tessera::detail {
namespace {

using device::ProxyAmo;
using device::ProxyOp;

// True when [offset, offset + bytes) lies inside [begin, begin + size), without overflow.
bool inside(std::uint64_t offset, std::uint64_t bytes, std::uint64_t begin, std::uint64_t size) {
  return offset >= begin && bytes <= size && offset - begin <= size - bytes;
}

// Empty when [offset, offset + bytes) is in the heap, or (for words) in the control area; for a
// kProxyStaticData descriptor (`static_data`), when it is in the static data region.
std::string check_range(const char* role, std::uint64_t offset, std::uint64_t bytes,
                        bool control_ok, bool static_data, const ProxyBounds& b) {
  if (static_data) {
    if (inside(offset, bytes, 0, b.static_bytes)) return {};
    if (b.static_bytes == 0) {
      return std::string(role) + " in static data, but no static data region is registered";
    }
    return std::string(role) + " at static data offset " + std::to_string(offset) + " + " +
           std::to_string(bytes) + " bytes is outside the " + std::to_string(b.static_bytes) +
           "-byte static data region";
  }
  if (inside(offset, bytes, 0, b.heap_bytes)) return {};
  if (control_ok && inside(offset, bytes, b.control_offset, b.control_bytes)) return {};
  return std::string(role) + " at heap offset " + std::to_string(offset) + " + " +
         std::to_string(bytes) + " bytes is outside the " + std::to_string(b.heap_bytes) +
         "-byte heap";
}

}  // namespace

const char* to_string(device::ProxyOp op) {
  switch (op) {
    case ProxyOp::put:
      return "put";
    case ProxyOp::get:
      return "get";
    case ProxyOp::put_signal:
      return "put_signal";
    case ProxyOp::signal:
      return "signal";
    case ProxyOp::atomic:
      return "atomic";
    case ProxyOp::fetch_atomic:
      return "fetch_atomic";
    case ProxyOp::compare_atomic:
      return "compare_atomic";
    case ProxyOp::fence:
      return "fence";
  }
  return "unknown op";
}

std::size_t proxy_word_bytes(device::ProxyWord word) {
  switch (word) {
    case device::ProxyWord::i32:
    case device::ProxyWord::u32:
      return 4;
    case device::ProxyWord::i64:
    case device::ProxyWord::u64:
      return 8;
  }
  return 0;
}

std::string validate_descriptor(const device::ProxyDescriptor& d, const ProxyBounds& b) {
  const auto op_value = static_cast<unsigned>(d.op);
  if (op_value < static_cast<unsigned>(ProxyOp::put) ||
      op_value > static_cast<unsigned>(ProxyOp::fence)) {
    return "unknown descriptor op " + std::to_string(op_value);
  }
  const std::string what = std::string(to_string(d.op)) + " to PE " + std::to_string(d.pe);
  if (d.op == ProxyOp::fence) return {};
  if (d.pe < 0 || d.pe >= b.n_pes) {
    return what + ": PE is outside [0, " + std::to_string(b.n_pes) + ")";
  }
  const bool statics = (d.flags & device::kProxyStaticData) != 0;
  const std::string region = statics ? "static data" : "heap";
  std::string bad;
  switch (d.op) {
    case ProxyOp::put:
    case ProxyOp::get:
    case ProxyOp::put_signal:
      if (d.bytes == 0) return what + ": zero bytes";
      if (d.local == 0) return what + ": null local address";
      bad = check_range("data", d.remote_offset, d.bytes, false, statics, b);
      if (!bad.empty() || d.op != ProxyOp::put_signal) break;
      [[fallthrough]];
    case ProxyOp::signal:
      if (d.compare > 1) return what + ": unknown signal op " + std::to_string(d.compare);
      if (d.signal_offset % 8 != 0) {
        return what + ": signal at " + region + " offset " + std::to_string(d.signal_offset) +
               " is not 8-byte aligned";
      }
      bad = check_range("signal", d.signal_offset, 8, true, statics, b);
      break;
    case ProxyOp::atomic:
    case ProxyOp::fetch_atomic:
    case ProxyOp::compare_atomic: {
      const std::size_t width = proxy_word_bytes(d.word);
      if (width == 0) return what + ": unknown word type " + std::to_string(unsigned(d.word));
      if (static_cast<unsigned>(d.amo) > static_cast<unsigned>(ProxyAmo::store)) {
        return what + ": unknown atomic op " + std::to_string(unsigned(d.amo));
      }
      if (d.remote_offset % width != 0) {
        return what + ": atomic word at " + region + " offset " + std::to_string(d.remote_offset) +
               " is not " + std::to_string(width) + "-byte aligned";
      }
      bad = check_range("atomic word", d.remote_offset, width, true, statics, b);
      break;
    }
    case ProxyOp::fence:
      break;
  }
  return bad.empty() ? bad : what + ": " + bad;
}

}  // namespace tessera::detail
