// Memory-ordering vocabulary of the device API: semantics, scopes, comparisons, signal updates.
#pragma once

#include <cstdint>

#include "tessera/device/platform/macros.hpp"

namespace tessera::device {

// Ordering an operation imposes on the issuing thread's other memory accesses (C++ meaning).
enum class Sem : std::uint8_t { relaxed, acquire, release, acq_rel };

// Which threads the ordering is promised to: the block, the whole device (one GPU, or one PE's
// threads on the host backend), or the system (other PEs, other GPUs, the CPU). Anything that
// crosses PEs needs `system`.
enum class Scope : std::uint8_t { block, device, system };

// Comparison used by wait_until: `*sig CMP value`.
enum class Cmp : std::uint8_t { eq, ne, gt, ge, lt, le };

// How put_signal/signal update the signal word: overwrite, or atomic add.
enum class SignalOp : std::uint8_t { set, add };

// True when `seen CMP value` holds.
TESSERA_HOST_DEVICE constexpr bool compare(Cmp cmp, std::uint64_t seen, std::uint64_t value) {
  switch (cmp) {
    case Cmp::eq:
      return seen == value;
    case Cmp::ne:
      return seen != value;
    case Cmp::gt:
      return seen > value;
    case Cmp::ge:
      return seen >= value;
    case Cmp::lt:
      return seen < value;
    case Cmp::le:
      return seen <= value;
  }
  return false;
}

// The operator `cmp` stands for (">=", "==", ...), for diagnostics.
TESSERA_HOST_DEVICE constexpr const char* to_string(Cmp cmp) {
  switch (cmp) {
    case Cmp::eq:
      return "==";
    case Cmp::ne:
      return "!=";
    case Cmp::gt:
      return ">";
    case Cmp::ge:
      return ">=";
    case Cmp::lt:
      return "<";
    case Cmp::le:
      return "<=";
  }
  return "?";
}

}  // namespace tessera::device
