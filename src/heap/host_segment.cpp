#include "heap/host_segment.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
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
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
  if (p == MAP_FAILED) {
    throw Error(ErrorCode::backend, pe,
                "cannot map the heap of PE " + std::to_string(owner_pe) + " (" +
                    std::to_string(bytes) + " bytes): " + std::strerror(errno));
  }
  return Mapping(static_cast<char*>(p), bytes);
}

}  // namespace tessera::detail
