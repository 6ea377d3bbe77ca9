// The Runtime: one per PE, no hidden global state. init is collective; the returned value owns
// the PE's heap, its peer mappings and its bootstrap, and finalizes on destruction.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "tessera/bootstrap.hpp"
#include "tessera/device/context.hpp"
#include "tessera/error.hpp"

namespace tessera {

enum class Backend { automatic, host, cuda, hip };
enum class BootstrapKind { automatic, single, threads, mpi, tcp };
enum class LogLevel { off, warn, info, trace };

const char* to_string(Backend backend) noexcept;
const char* to_string(BootstrapKind kind) noexcept;

// How to start a PE. Defaults match an unset environment; from_env() reads TESSERA_*.
struct Options {
  Backend backend = Backend::automatic;                     // TESSERA_BACKEND=host|cuda|hip
  BootstrapKind bootstrap_kind = BootstrapKind::automatic;  // TESSERA_BOOTSTRAP=mpi|tcp|single
  // A ready bootstrap (threads-mode tests, or one the application built); wins over the kind.
  std::shared_ptr<Bootstrap> bootstrap;
  std::size_t heap_size = std::size_t{1} << 30;  // TESSERA_HEAP_SIZE (K/M/G suffixes)
  LogLevel log_level = LogLevel::warn;           // TESSERA_DEBUG=WARN|INFO|TRACE
  std::string node_id;                           // TESSERA_NODE_ID; empty = hostname
  std::chrono::milliseconds timeout{60000};      // TESSERA_TIMEOUT seconds; 0 = forever
  bool checked = false;                          // TESSERA_CHECK=1

  // Reads the TESSERA_* variables; throws Error(invalid_argument) on a malformed value.
  static Options from_env();
};

// Parses "64M", "1G", "4096", "512k" into bytes; throws Error(invalid_argument).
std::size_t parse_size(const std::string& text);

namespace detail {
class RuntimeImpl;
}

template <class T>
class Symmetric;

class Runtime {
 public:
  // Collective over the bootstrap's ranks: forms the job, builds and maps the heaps.
  static Runtime init(const Options& options = Options::from_env());

  Runtime() = default;  // an empty (finalized) runtime
  Runtime(Runtime&&) noexcept;
  Runtime& operator=(Runtime&&) noexcept;
  ~Runtime();

  // Collective: frees the heap and the bootstrap. Safe to call twice; the destructor calls it.
  void finalize();
  bool valid() const noexcept { return impl_ != nullptr; }

  int pe() const;
  int n_pes() const;
  int node_pe() const;    // this PE's index among the PEs of its node
  int node_size() const;  // PEs on this PE's node
  int node() const;       // index of this PE's node (nodes numbered in order of first PE)
  Backend backend() const;
  const Options& options() const;
  Bootstrap& bootstrap();

  // Collective: returns once every PE has called it; all heap writes made before it by any PE
  // are visible to every PE after it.
  void barrier();

  // The value to pass to kernels.
  device::Context device_context() const;

  // --- symmetric heap (all collective; same call sequence => same offset on every PE) ---
  std::size_t heap_size() const;
  // `align` is a power of two; zero bytes returns null. Throws Error(out_of_memory) when the
  // heap cannot hold it, Error(invalid_argument) when PEs disagree on bytes or align.
  void* malloc(std::size_t bytes, std::size_t align = 64);
  void* calloc(std::size_t count, std::size_t size, std::size_t align = 64);
  // Throws Error(invalid_argument) on a pointer that is not a live heap block.
  void free(void* ptr);
  template <class T>
  Symmetric<T> alloc(std::size_t count, std::size_t align = 64);
  // Free bytes and largest free block of the heap.
  std::size_t heap_free_bytes() const;
  std::size_t heap_largest_free() const;

  // --- addressing ---
  // Start of this PE's heap.
  void* heap_base() const;
  // Offset of a pointer into this PE's heap; the same object has the same offset on every PE.
  std::size_t heap_offset(const void* ptr) const;
  // True when [ptr, ptr + bytes) lies in this PE's heap.
  bool in_heap(const void* ptr, std::size_t bytes = 1) const;
  // The address of `local` on `pe`, or null when pe's heap is not mapped here.
  void* ptr(const void* local, int pe) const;

  // --- host-side RMA (blocking copies through translated pointers) ---
  // Copies `bytes` from local `src` to the symmetric `dst` on `pe`; complete on return.
  void put(void* dst, const void* src, std::size_t bytes, int pe);
  // Copies `bytes` from the symmetric `src` on `pe` to local `dst`; complete on return.
  void get(void* dst, const void* src, std::size_t bytes, int pe);

  detail::RuntimeImpl& impl() const;

 private:
  explicit Runtime(std::shared_ptr<detail::RuntimeImpl> impl);
  std::shared_ptr<detail::RuntimeImpl> impl_;
  template <class T>
  friend class Symmetric;
};

}  // namespace tessera

#include "tessera/heap.hpp"

namespace tessera {
template <class T>
Symmetric<T> Runtime::alloc(std::size_t count, std::size_t align) {
  void* p = malloc(count * sizeof(T), align < alignof(T) ? alignof(T) : align);
  return Symmetric<T>(impl_, static_cast<T*>(p), count);
}
}  // namespace tessera
