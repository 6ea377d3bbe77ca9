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
    : base_(std::exchange(o.base_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}

Mapping& Mapping::operator=(Mapping&& o) noexcept {
  if (this != &o) {
    if (base_ != nullptr) ::munmap(base_, bytes_);
    base_ = std::exchange(o.base_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

Mapping::~Mapping() {
  if (base_ != nullptr) ::munmap(base_, bytes_);
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

Mapping map_heap(int fd, std::size_t bytes, int pe, int owner_pe) {
  const auto fail = [&] {
    return Error(ErrorCode::backend, pe,
                 "cannot map the heap of PE " + std::to_string(owner_pe) + " (" +
                     std::to_string(bytes) + " bytes): " + std::strerror(errno));
  };
  // Reserve room for an aligned start, map the heap there, and give back the slack on both
  // sides: heap offsets aligned to kHeapAlignment then give addresses aligned the same way.
  const std::size_t span = bytes + kHeapAlignment;
  void* reserved =
      ::mmap(nullptr, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (reserved == MAP_FAILED) throw fail();
  const auto start = reinterpret_cast<std::uintptr_t>(reserved);
  const std::uintptr_t aligned = (start + kHeapAlignment - 1) & ~(kHeapAlignment - 1);
  void* p = ::mmap(reinterpret_cast<void*>(aligned), bytes, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_NORESERVE | MAP_FIXED, fd, 0);
  if (p == MAP_FAILED) {
    Error error = fail();
    ::munmap(reserved, span);
    throw error;
  }
  if (aligned > start) ::munmap(reserved, aligned - start);
  const std::uintptr_t end = aligned + bytes;
  if (start + span > end) ::munmap(reinterpret_cast<void*>(end), start + span - end);
  return Mapping(static_cast<char*>(p), bytes);
}

}  // namespace tessera::detail
