// Symmetric memory management: collective allocation from the runtime's heap. Every routine
// ends (shmem_free: starts) with the equivalent of shmem_barrier_all, as the specification asks,
// so no PE touches an object before every PE has it, or after any PE released it.
#include <algorithm>
#include <cstring>

#include "shmem/state.hpp"

namespace tessera::shmem {
namespace {

// The runtime's default alignment: what shmem_malloc promises.
constexpr std::size_t kMallocAlignment = 64;
// The largest alignment the runtime's heap offers (its segments are 2 MiB aligned).
constexpr std::size_t kMaxAlignment = std::size_t{2} << 20;

// Collective allocation; NULL when the heap cannot hold it (on every PE alike, since the
// allocator is deterministic). Any other failure (PEs disagreeing on the arguments) ends the job.
void* allocate(State& s, const char* routine, std::size_t bytes, std::size_t align, bool zero) {
  void* p = nullptr;
  bool out_of_memory = false;
  guarded(routine, [&] {
    try {
      p = zero ? s.runtime.calloc(bytes, 1, align) : s.runtime.malloc(bytes, align);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::out_of_memory) throw;
      out_of_memory = true;
    }
  });
  if (p != nullptr) s.block_bytes[p] = bytes;
  barrier_all(s, routine);
  return out_of_memory ? nullptr : p;
}

void release(State& s, const char* routine, void* ptr) {
  barrier_all(s, routine);
  if (ptr == nullptr) return;
  guarded(routine, [&] { s.runtime.free(ptr); });
  s.block_bytes.erase(ptr);
}

}  // namespace
}  // namespace tessera::shmem

using tessera::shmem::state;
using tessera::shmem::State;

extern "C" {

void* shmem_malloc(size_t size) {
  State& s = state("shmem_malloc");
  return tessera::shmem::allocate(s, "shmem_malloc", size, tessera::shmem::kMallocAlignment, false);
}

void* shmem_malloc_with_hints(size_t size, long hints) {
  (void)hints;
  State& s = state("shmem_malloc_with_hints");
  return tessera::shmem::allocate(s, "shmem_malloc_with_hints", size,
                                  tessera::shmem::kMallocAlignment, false);
}

void* shmem_calloc(size_t count, size_t size) {
  State& s = state("shmem_calloc");
  if (size != 0 && count > ~size_t{0} / size) {
    tessera::shmem::barrier_all(s, "shmem_calloc");
    return nullptr;
  }
  return tessera::shmem::allocate(s, "shmem_calloc", count * size, tessera::shmem::kMallocAlignment,
                                  true);
}

void* shmem_align(size_t alignment, size_t size) {
  State& s = state("shmem_align");
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 ||
      alignment > tessera::shmem::kMaxAlignment) {
    tessera::shmem::barrier_all(s, "shmem_align");
    return nullptr;
  }
  return tessera::shmem::allocate(s, "shmem_align", size,
                                  std::max(alignment, tessera::shmem::kMallocAlignment), false);
}

void* shmem_realloc(void* ptr, size_t size) {
  State& s = state("shmem_realloc");
  if (ptr == nullptr) {
    return tessera::shmem::allocate(s, "shmem_realloc", size, tessera::shmem::kMallocAlignment,
                                    false);
  }
  auto it = s.block_bytes.find(ptr);
  if (it == s.block_bytes.end()) {
    tessera::shmem::die("shmem_realloc",
                        "pointer is not a live block from shmem_malloc, shmem_calloc, shmem_align "
                        "or shmem_realloc");
  }
  const std::size_t old_bytes = it->second;
  if (size == 0) {
    tessera::shmem::release(s, "shmem_realloc", ptr);
    return nullptr;
  }
  void* fresh =
      tessera::shmem::allocate(s, "shmem_realloc", size, tessera::shmem::kMallocAlignment, false);
  if (fresh == nullptr) return nullptr;  // the old block stays valid, as with realloc(3)
  std::memcpy(fresh, ptr, std::min(old_bytes, size));
  tessera::shmem::release(s, "shmem_realloc", ptr);
  return fresh;
}

void shmem_free(void* ptr) {
  State& s = state("shmem_free");
  tessera::shmem::release(s, "shmem_free", ptr);
}

}  // extern "C"
