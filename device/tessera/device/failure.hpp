// How device code reports a failure. Device code never throws on a GPU: it calls
// platform::report_failure, which on the host backend throws Failure (caught by the launcher and
// turned into tessera::Error at Stream::synchronize) and on a GPU prints it and traps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>

#include "tessera/device/platform/macros.hpp"

namespace tessera::device {

// Kind of a device-side failure; the launcher maps each to the tessera::ErrorCode of that name.
enum class FailureCode : std::uint8_t {
  timeout,           // a bounded wait expired (ctx.timeout_ns)
  invalid_argument,  // bad PE, pointer outside the heap, shape mismatch, narrow remote scope
  transport,         // the target PE's heap is not mapped here (another node: needs the network)
  peer_lost,         // the network proxy lost its connection to a peer
};

// The exception report_failure throws on the host backend (host code only: GPU code traps
// instead). Holds its message in place so it can be built without allocating.
class Failure : public std::exception {
 public:
  static constexpr std::size_t kCapacity = 512;
  Failure(FailureCode code, const char* message) : code_(code) {
    std::size_t i = 0;
    for (; message != nullptr && message[i] != '\0' && i + 1 < kCapacity; ++i)
      message_[i] = message[i];
    message_[i] = '\0';
  }
  FailureCode code() const noexcept { return code_; }
  const char* what() const noexcept override { return message_; }

 private:
  FailureCode code_;
  char message_[kCapacity];
};

}  // namespace tessera::device

namespace tessera::device::detail {

// A value a Message prints in hexadecimal with a 0x prefix: addresses and bit patterns.
struct Hex {
  std::uint64_t value;
};

// An address as a Message prints it: 0x followed by hex digits.
TESSERA_HOST_DEVICE inline Hex hex(const void* p) {
  return Hex{static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p))};
}

// A fixed-capacity text builder for diagnostics: no allocation, usable in device code.
class Message {
 public:
  TESSERA_HOST_DEVICE Message() { text_[0] = '\0'; }
  TESSERA_COLD TESSERA_HOST_DEVICE Message& operator<<(const char* s) {
    while (s != nullptr && *s != '\0' && len_ + 1 < sizeof(text_)) text_[len_++] = *s++;
    text_[len_] = '\0';
    return *this;
  }
  TESSERA_COLD TESSERA_HOST_DEVICE Message& operator<<(std::uint64_t v) {
    char digits[21];
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    while (n > 0 && len_ + 1 < sizeof(text_)) text_[len_++] = digits[--n];
    text_[len_] = '\0';
    return *this;
  }
  TESSERA_COLD TESSERA_HOST_DEVICE Message& operator<<(std::int64_t v) {
    if (v < 0) {
      *this << "-";
      return *this << (~static_cast<std::uint64_t>(v) + 1);
    }
    return *this << static_cast<std::uint64_t>(v);
  }
  TESSERA_COLD TESSERA_HOST_DEVICE Message& operator<<(Hex h) {
    char digits[16];
    int n = 0;
    std::uint64_t v = h.value;
    do {
      const auto d = static_cast<unsigned>(v & 0xfu);
      digits[n++] = static_cast<char>(d < 10 ? '0' + d : 'a' + (d - 10));
      v >>= 4;
    } while (v != 0);
    *this << "0x";
    while (n > 0 && len_ + 1 < sizeof(text_)) text_[len_++] = digits[--n];
    text_[len_] = '\0';
    return *this;
  }
  TESSERA_COLD TESSERA_HOST_DEVICE Message& operator<<(int v) {
    return *this << static_cast<std::int64_t>(v);
  }
  TESSERA_COLD TESSERA_HOST_DEVICE Message& operator<<(unsigned v) {
    return *this << static_cast<std::uint64_t>(v);
  }
  TESSERA_HOST_DEVICE const char* c_str() const { return text_; }

 private:
  char text_[Failure::kCapacity];
  std::size_t len_ = 0;
};

}  // namespace tessera::device::detail
