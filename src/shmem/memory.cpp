// Symmetric memory management: collective allocation from the runtime's heap. Every routine
// ends (shmem_free: starts) with the equivalent of shmem_barrier_all, as the specification asks,
// so no PE touches an object before every PE has it, or after any PE released it.
#include <algorithm>
#include <cstring>
#include <string>

#include "shmem/state.hpp"

namespace tessera::detail {
// The heap mapping's alignment on every PE (src/heap/memfd.hpp, whose other includes lie
// outside this library's include path).
std::size_t heap_mapping_alignment(std::size_t heap_bytes);
}  // namespace tessera::detail

namespace tessera::shmem {
namespace {

// The runtime's default alignment: what shmem_malloc promises.
constexpr std::size_t kMallocAlignment = 64;
// The largest alignment the heap offers: its mapping's alignment on every PE (heap/memfd.hpp).
std::size_t max_alignment(const State& s) {
  return detail::heap_mapping_alignment(s.runtime.options().heap_size);
}

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
      // The runtime's message says how much was asked and what is free (TESSERA_HEAP_SIZE).
      TESSERA_LOG(s.log, info, routine << " returns NULL: " << e.message());
    }
  });
  if (p != nullptr) {
    const std::lock_guard<std::mutex> lock(s.blocks_mutex);
    s.block_bytes[p] = bytes;
  } else if (bytes == 0) {
    TESSERA_LOG(s.log, info, routine << " returns NULL: size 0 was asked for");
  }
  barrier_all(s, routine);
  return out_of_memory ? nullptr : p;
}

// A NULL result decided before the heap is asked (an impossible size or alignment): logged,
// after the barrier every allocation ends with.
void* refuse(State& s, const char* routine, const std::string& why) {
  TESSERA_LOG(s.log, info, routine << " returns NULL: " << why);
  barrier_all(s, routine);
  return nullptr;
}

void release(State& s, const char* routine, void* ptr) {
  barrier_all(s, routine);
  if (ptr == nullptr) return;
  guarded(routine, [&] { s.runtime.free(ptr); });
  const std::lock_guard<std::mutex> lock(s.blocks_mutex);
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
    return tessera::shmem::refuse(
        s, "shmem_calloc",
        std::to_string(count) + " x " + std::to_string(size) + " bytes overflows size_t");
  }
  return tessera::shmem::allocate(s, "shmem_calloc", count * size, tessera::shmem::kMallocAlignment,
                                  true);
}

void* shmem_align(size_t alignment, size_t size) {
  State& s = state("shmem_align");
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    return tessera::shmem::refuse(
        s, "shmem_align", "alignment " + std::to_string(alignment) + " is not a power of two");
  }
  if (alignment > tessera::shmem::max_alignment(s)) {
    return tessera::shmem::refuse(
        s, "shmem_align",
        "alignment " + std::to_string(alignment) + " is above the " +
            std::to_string(tessera::shmem::max_alignment(s)) +
            " bytes the heap's mapping is aligned to (TESSERA_HEAP_SIZE sets it)");
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
  std::size_t old_bytes = 0;
  bool known = false;
  {
    const std::lock_guard<std::mutex> lock(s.blocks_mutex);
    auto it = s.block_bytes.find(ptr);
    known = it != s.block_bytes.end();
    if (known) old_bytes = it->second;
  }
  if (!known) {
    tessera::shmem::die("shmem_realloc",
                        "pointer is not a live block from shmem_malloc, shmem_calloc, shmem_align "
                        "or shmem_realloc");
  }
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
