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
#include "tessera/stream.hpp"

namespace tessera {

enum class Backend { automatic, host, cuda, hip };
enum class BootstrapKind { automatic, single, threads, mpi, tcp };
enum class LogLevel { off, warn, info, trace };
// Whether cross-node peers are reached through the libfabric proxy (TESSERA_FABRIC). automatic:
// yes, unless the job is a threads-bootstrap job (PEs inside one test process, which stand in
// for one machine).
enum class FabricMode { automatic, on, off };
// How this PE reaches a peer's heap, chosen at init: itself, load/store through a mapping (same
// node), the network proxy (another node, or TESSERA_P2P=0), or not at all (another node and no
// network transport).
enum class Transport { self, mapped, proxy, unreachable };

const char* to_string(Backend backend) noexcept;
const char* to_string(BootstrapKind kind) noexcept;
const char* to_string(Transport transport) noexcept;

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
  bool p2p = true;  // TESSERA_P2P=0: map no peer heap; every other PE goes through the proxy
  FabricMode fabric = FabricMode::automatic;  // TESSERA_FABRIC=auto|on|off
  std::string fabric_provider;  // TESSERA_FABRIC_PROVIDER ("tcp;ofi_rxm", "shm"); empty = best

  // Reads the TESSERA_* variables; throws Error(invalid_argument) on a malformed value.
  static Options from_env();
};

// True when Runtime::init could use `backend` in this process: host always; cuda when this build
// has the CUDA backend and a device is visible; automatic always. Never throws.
bool backend_available(Backend backend) noexcept;

// Parses "64M", "1G", "4096", "512k" into bytes; throws Error(invalid_argument).
std::size_t parse_size(const std::string& text);

namespace detail {
class RuntimeImpl;
struct RuntimeAccess;
}  // namespace detail

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

  // --- transport ---
  // How this PE reaches `pe`; throws Error(invalid_argument) for a PE outside the job.
  Transport transport(int pe) const;
  // The libfabric provider and NIC of the proxy ("tcp;ofi_rxm", "lo"); empty when no proxy runs.
  std::string fabric_provider() const;
  std::string fabric_nic() const;
  // The cores the proxy thread is bound to ("0-15"; empty when unknown) and their NUMA node (-1
  // when unknown), from hwloc.
  std::string proxy_cpuset() const;
  int numa_node() const;

  // Collective: returns once every PE has called it; all heap writes made before it by any PE
  // are visible to every PE after it.
  void barrier();

  // The value to pass to kernels.
  device::Context device_context() const;
  // For kernels that cannot throw (Triton kernels, tessera.triton): when one left a failure in
  // this PE's failure record (device/failure_record.hpp), throws the Error the C++ device API
  // raises for that failure, with the same message, and clears the record; throws
  // Error(peer_lost) when another PE has aborted the job. Returns when neither.
  void check_device_failure();
  // This PE's default stream: kernels launched on it run in order; valid until finalize, which
  // waits for its work.
  Stream& stream() const;

  // --- symmetric heap (all collective; same call sequence => same offset on every PE) ---
  std::size_t heap_size() const;
  // `align` is a power of two; zero bytes returns null. Throws Error(out_of_memory) when the
  // heap cannot hold it, Error(invalid_argument) when PEs disagree on bytes or align.
  void* malloc(std::size_t bytes, std::size_t align = 64);
  void* calloc(std::size_t count, std::size_t size, std::size_t align = 64);
  // Throws Error(invalid_argument) on a pointer that is not a live heap block. Every PE's
  // operations through the network proxy issued before its free (a put_nbi or signal a kernel
  // left in flight) have completed when free returns, so a block allocated again never receives
  // a late write from them.
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

  // --- host-side RMA (blocking copies through translated pointers; to a PE on another node,
  // one descriptor through this PE's network proxy, waited for within TESSERA_TIMEOUT: throws
  // Error(timeout), or Error(peer_lost) naming a PE whose endpoint is gone) ---
  // Copies `bytes` from local `src` to the symmetric `dst` on `pe`; complete on return.
  void put(void* dst, const void* src, std::size_t bytes, int pe);
  // Copies `bytes` from the symmetric `src` on `pe` to local `dst`; complete on return.
  void get(void* dst, const void* src, std::size_t bytes, int pe);

 private:
  explicit Runtime(std::shared_ptr<detail::RuntimeImpl> impl);
  std::shared_ptr<detail::RuntimeImpl> impl_;
  template <class T>
  friend class Symmetric;
  // The library's own code reaches the state through it (src/runtime/runtime_access.hpp).
  friend struct detail::RuntimeAccess;
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
