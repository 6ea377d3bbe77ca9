#include "heap/memfd.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "tessera/error.hpp"

namespace tessera::detail {

Mapping::Mapping(Mapping&& o) noexcept
    : reserved_(std::exchange(o.reserved_, nullptr)),
      reserved_bytes_(std::exchange(o.reserved_bytes_, 0)),
      base_(std::exchange(o.base_, nullptr)),
      bytes_(std::exchange(o.bytes_, 0)) {}

Mapping& Mapping::operator=(Mapping&& o) noexcept {
  if (this != &o) {
    if (reserved_ != nullptr) ::munmap(reserved_, reserved_bytes_);
    reserved_ = std::exchange(o.reserved_, nullptr);
    reserved_bytes_ = std::exchange(o.reserved_bytes_, 0);
    base_ = std::exchange(o.base_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

Mapping::~Mapping() {
  // One munmap takes the heap mapping and its guards: they all lie in the reservation.
  if (reserved_ != nullptr) ::munmap(reserved_, reserved_bytes_);
}

Fd create_heap_memfd(std::size_t bytes, int pe) {
  const std::string name = "tessera-heap-pe" + std::to_string(pe);
  Fd fd(::memfd_create(name.c_str(), MFD_CLOEXEC));
  if (!fd.valid()) {
    throw Error(ErrorCode::backend, pe,
                std::string("memfd_create for the symmetric heap failed: ") + std::strerror(errno));
  }
  if (::ftruncate(fd.get(), static_cast<off_t>(bytes)) != 0) {
    throw Error(ErrorCode::out_of_memory, pe,
                "cannot size the symmetric heap to " + std::to_string(bytes) +
                    " bytes: " + std::strerror(errno));
  }
  return fd;
}

void make_inaccessible(char* p, std::size_t bytes, int pe) {
  if (bytes == 0) return;
  if (::mprotect(p, bytes, PROT_NONE) != 0) {
    throw Error(ErrorCode::backend, pe,
                "cannot make the guard of the heap inaccessible (" + std::to_string(bytes) +
                    " bytes): " + std::strerror(errno));
  }
}

std::size_t heap_mapping_alignment(std::size_t heap_bytes) {
  constexpr std::size_t kMost = std::size_t{1} << 30;
  std::size_t align = kHeapAlignment;
  while (align < kMost && align * 2 <= heap_bytes) align *= 2;
  return align;
}

Mapping map_heap(int fd, std::size_t bytes, std::size_t hole_offset, std::size_t hole_bytes, int pe,
                 int owner_pe) {
  const auto fail = [&] {
    return Error(ErrorCode::backend, pe,
                 "cannot map the heap of PE " + std::to_string(owner_pe) + " (" +
                     std::to_string(bytes) + " bytes): " + std::strerror(errno));
  };
  // Reserve inaccessible room for a guard, an aligned start, the heap and a guard; map the heap
  // over the middle and give back only the slack beyond the guards. Heap offsets aligned to
  // kHeapAlignment then give addresses aligned the same way, and whatever the kernel maps
  // next to the reservation later stays kGuardBytes away from the heap.
  // Aligned to heap_mapping_alignment: only address space is reserved for it.
  const std::size_t align = heap_mapping_alignment(bytes);
  const std::size_t span = kGuardBytes + bytes + align + kGuardBytes;
  void* reserved =
      ::mmap(nullptr, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (reserved == MAP_FAILED) throw fail();
  const auto start = reinterpret_cast<std::uintptr_t>(reserved);
  const std::uintptr_t aligned = (start + kGuardBytes + align - 1) & ~(align - 1);
  void* p = ::mmap(reinterpret_cast<void*>(aligned), bytes, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_NORESERVE | MAP_FIXED, fd, 0);
  if (p == MAP_FAILED || (hole_bytes > 0 && ::mprotect(static_cast<char*>(p) + hole_offset,
                                                       hole_bytes, PROT_NONE) != 0)) {
    Error error = fail();
    ::munmap(reserved, span);
    throw error;
  }
  const std::uintptr_t keep_begin = aligned - kGuardBytes;
  const std::uintptr_t keep_end = aligned + bytes + kGuardBytes;
  if (keep_begin > start) ::munmap(reserved, keep_begin - start);
  if (start + span > keep_end) ::munmap(reinterpret_cast<void*>(keep_end), start + span - keep_end);
  return Mapping(reinterpret_cast<char*>(keep_begin), keep_end - keep_begin, static_cast<char*>(p),
                 bytes);
}

}  // namespace tessera::detail
