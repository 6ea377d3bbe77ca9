// Host-backend heap memory: an anonymous memfd per PE, mapped shared by every PE of its node.
// memfds have no name in any filesystem, so nothing is left behind when the processes end.
#pragma once

#include <cstddef>

#include "bootstrap/fd.hpp"

namespace tessera::detail {

// An owned mmap of `bytes` bytes; unmapped on destruction.
class Mapping {
 public:
  Mapping() = default;
  Mapping(char* base, std::size_t bytes) : base_(base), bytes_(bytes) {}
  Mapping(Mapping&& o) noexcept;
  Mapping& operator=(Mapping&& o) noexcept;
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping();

  char* base() const { return base_; }
  std::size_t bytes() const { return bytes_; }

 private:
  char* base_ = nullptr;
  std::size_t bytes_ = 0;
};

// Every heap mapping starts at a multiple of this, so a block whose heap offset is aligned to
// at most this much has an address aligned the same way (malloc rejects larger alignments).
inline constexpr std::size_t kHeapAlignment = std::size_t{2} << 20;

// Creates this PE's heap: a memfd of `bytes` (sparse; pages appear on first touch).
Fd create_heap_memfd(std::size_t bytes, int pe);

// Maps `bytes` of `fd` read/write and shared. Throws Error(backend) naming `pe` on failure.
Mapping map_heap(int fd, std::size_t bytes, int pe, int owner_pe);

}  // namespace tessera::detail
