// Host-backend heap memory: an anonymous memfd per PE, mapped shared by every PE of its node.
// memfds have no name in any filesystem, so nothing is left behind when the processes end.
#pragma once

#include <cstddef>

#include "bootstrap/fd.hpp"

namespace tessera::detail {

// An owned mmap of `bytes` bytes at `base`, inside an owned reservation of address space
// [reserved, reserved + reserved_bytes) (the guard pages around it); all unmapped on destruction.
class Mapping {
 public:
  Mapping() = default;
  Mapping(char* reserved, std::size_t reserved_bytes, char* base, std::size_t bytes)
      : reserved_(reserved), reserved_bytes_(reserved_bytes), base_(base), bytes_(bytes) {}
  Mapping(Mapping&& o) noexcept;
  Mapping& operator=(Mapping&& o) noexcept;
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping();

  char* base() const { return base_; }
  std::size_t bytes() const { return bytes_; }

 private:
  char* reserved_ = nullptr;
  std::size_t reserved_bytes_ = 0;
  char* base_ = nullptr;
  std::size_t bytes_ = 0;
};

// Every heap mapping starts at a multiple of this, so a block whose heap offset is aligned to
// at most this much has an address aligned the same way (malloc rejects larger alignments).
inline constexpr std::size_t kHeapAlignment = std::size_t{2} << 20;

// (issue 20: shmem_align) The alignment of a heap mapping of a heap of
// `heap_bytes`: the largest power of two not above it, within [kHeapAlignment, 1 GiB]. Every PE
// of a job has the same heap size, so all map their heaps aligned alike, and a block whose heap
// offset is aligned to at most this much has an address aligned the same way on every PE.
std::size_t heap_mapping_alignment(std::size_t heap_bytes);

// Inaccessible (PROT_NONE) address space kept right before and right after every heap mapping, so
// a tile that runs off either end of a heap faults at once instead of writing whatever mapping
// happens to be next. Address space only: no memory backs it.
inline constexpr std::size_t kGuardBytes = kHeapAlignment;

// Makes [p, p + bytes) of a mapping inaccessible (PROT_NONE). Throws Error(backend) naming `pe`.
void make_inaccessible(char* p, std::size_t bytes, int pe);

// Creates this PE's heap: a memfd of `bytes` (sparse; pages appear on first touch).
Fd create_heap_memfd(std::size_t bytes, int pe);

// Maps `bytes` of `fd` read/write and shared, at a heap_mapping_alignment(bytes)-aligned address
// (at least kHeapAlignment) between two
// kGuardBytes guards, with [hole_offset, hole_offset + hole_bytes) of it inaccessible too (the
// guard between the heap and the control area). Throws Error(backend) naming `pe` on failure.
Mapping map_heap(int fd, std::size_t bytes, std::size_t hole_offset, std::size_t hole_bytes, int pe,
                 int owner_pe);

}  // namespace tessera::detail
