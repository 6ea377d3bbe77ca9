// The host branch of the platform layer: host compilers and the host pass of nvcc/hipcc. This is
// the host backend, so it is also what a .cu file's host code runs when its kernel is launched on
// a host-backend stream. Atomics are std::atomic_ref; a block runs one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "tessera/device/failure.hpp"
#include "tessera/device/order.hpp"
#include "tessera/device/platform/macros.hpp"

#if !TESSERA_DEVICE_COMPILE
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

namespace tessera::device::platform {

// On the host backend every scope is implemented at system scope: PEs are processes sharing
// memory, and std::atomic_ref on lock-free types is address-free, so it orders across them.
TESSERA_HOST_DEVICE constexpr std::memory_order to_std(Sem sem) {
  switch (sem) {
    case Sem::relaxed:
      return std::memory_order_relaxed;
    case Sem::acquire:
      return std::memory_order_acquire;
    case Sem::release:
      return std::memory_order_release;
    case Sem::acq_rel:
      return std::memory_order_acq_rel;
  }
  return std::memory_order_seq_cst;
}

// A load may not carry release semantics; acquire is the strongest it can have.
TESSERA_HOST_DEVICE constexpr std::memory_order load_order(Sem sem) {
  return (sem == Sem::acquire || sem == Sem::acq_rel) ? std::memory_order_acquire
                                                      : std::memory_order_relaxed;
}

// A store may not carry acquire semantics; release is the strongest it can have.
TESSERA_HOST_DEVICE constexpr std::memory_order store_order(Sem sem) {
  return (sem == Sem::release || sem == Sem::acq_rel) ? std::memory_order_release
                                                      : std::memory_order_relaxed;
}

template <class T>
TESSERA_HOST_DEVICE inline T atomic_load(const T* p, Sem sem, Scope) {
  return std::atomic_ref<T>(*const_cast<T*>(p)).load(load_order(sem));
}

template <class T>
TESSERA_HOST_DEVICE inline void atomic_store(T* p, T v, Sem sem, Scope) {
  std::atomic_ref<T>(*p).store(v, store_order(sem));
}

// atomic_fetch_add, _and, _or, _xor and atomic_exchange: std::atomic_ref's member of the same
// name.
#define TESSERA_HOST_RMW(op)                                            \
  template <class T>                                                    \
  TESSERA_HOST_DEVICE inline T atomic_##op(T* p, T v, Sem sem, Scope) { \
    return std::atomic_ref<T>(*p).op(v, to_std(sem));                   \
  }
TESSERA_HOST_RMW(fetch_add)
TESSERA_HOST_RMW(fetch_and)
TESSERA_HOST_RMW(fetch_or)
TESSERA_HOST_RMW(fetch_xor)
TESSERA_HOST_RMW(exchange)
#undef TESSERA_HOST_RMW

// Returns the value seen; the swap happened iff it equals `expected`.
template <class T>
TESSERA_HOST_DEVICE inline T atomic_compare_exchange(T* p, T expected, T desired, Sem sem, Scope) {
  std::atomic_ref<T>(*p).compare_exchange_strong(expected, desired, to_std(sem), load_order(sem));
  return expected;
}

// atomic_fetch_min and atomic_fetch_max, which std::atomic_ref lacks before C++26: a
// compare-exchange loop that stores `v` while it beats the word (`beats(v, seen)`: v < seen for
// min, v > seen for max) and returns the last value seen.
namespace detail {
template <class T, class Beats>
TESSERA_HOST_DEVICE inline T atomic_fetch_extreme(T* p, T v, Sem sem, Beats beats) {
  std::atomic_ref<T> ref(*p);
  T seen = ref.load(std::memory_order_relaxed);
  while (beats(v, seen) && !ref.compare_exchange_weak(seen, v, to_std(sem), load_order(sem))) {
  }
  return seen;
}
}  // namespace detail

template <class T>
TESSERA_HOST_DEVICE inline T atomic_fetch_min(T* p, T v, Sem sem, Scope) {
  return detail::atomic_fetch_extreme(p, v, sem, [](T a, T b) { return a < b; });
}

template <class T>
TESSERA_HOST_DEVICE inline T atomic_fetch_max(T* p, T v, Sem sem, Scope) {
  return detail::atomic_fetch_extreme(p, v, sem, [](T a, T b) { return a > b; });
}

// A fence of the given semantics; relaxed is a no-op.
TESSERA_HOST_DEVICE inline void fence(Sem sem, Scope) {
  if (sem != Sem::relaxed) std::atomic_thread_fence(to_std(sem));
}

// A sequentially consistent fence (mfence on x86-64, dmb ish on AArch64): also orders earlier
// stores before later loads, which an acq_rel fence does not (the store-buffering pattern).
TESSERA_HOST_DEVICE inline void fence_sc(Scope) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

// Monotonic nanoseconds, for bounded waits.
TESSERA_HOST_DEVICE inline std::uint64_t clock_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

// Called on every turn of a spin-wait. `spins` counts turns so far. PEs x blocks outnumber
// cores on the host backend, so after a short burst of pure spinning the waiter yields its
// core; pure spinning would cost a scheduler slice (milliseconds) per hand-off. A wait still
// unmet after 4096 turns (milliseconds) sleeps 20 us a turn: sched_yield hands the core only to
// threads on the same run queue, so processes of a job that outnumber the cores would otherwise
// spin past each other (4 litmus PEs on 2 cores: 83 s with yields alone, 12 s with the sleeps).
TESSERA_HOST_DEVICE inline void spin_pause(std::uint32_t spins) {
  if (spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  } else if (spins < 4096) {
    std::this_thread::yield();
  } else {
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

// --- the time split (issue 19 item 5) ---

// Where a host-backend kernel's time goes. A build with -DTESSERA_PROFILE_SPLIT=ON adds up, per
// process, the time its kernels' blocks ran (kernel), spent in bulk copies (copy) and in spinning
// waits (wait: every SpinPacer's life, from a wait's first look to its return), and how many of
// each there were; tessera-bench reads the totals around each timed call (benchmarks/split.hpp).
// Each part's time is exclusive (a copy inside a wait, as in all_gather's serving loop, or inside
// a kernel counts as copy only), and a block of a grid of g blocks adds 1/g of its times (its
// share of the launch's wall time, the blocks running side by side), so kernel + copy + wait is
// the time the launches took. Otherwise a probe is an empty object and costs nothing.
enum class SplitPart : int { kernel, copy, wait };
inline constexpr int kSplitParts = 3;
struct SplitTotals {
  std::atomic<std::uint64_t> ns[kSplitParts];
  std::atomic<std::uint64_t> count[kSplitParts];
};
inline SplitTotals split_totals{};  // stays zero without the probes
#if defined(TESSERA_PROFILE_SPLIT)
inline constexpr bool kSplitProbes = true;
class SplitProbe {
 public:
  // `grid`: for a kernel block, its launch's block count (0 keeps the thread's current one).
  explicit SplitProbe(SplitPart part, int grid = 0)
      : part_(static_cast<int>(part)), outer_(innermost_), outer_grid_(grid_), start_(clock_ns()) {
    innermost_ = this;
    if (grid > 0) grid_ = static_cast<std::uint64_t>(grid);
  }
  ~SplitProbe() {
    const std::uint64_t elapsed = clock_ns() - start_;
    split_totals.ns[part_].fetch_add((elapsed - inner_ns_) / grid_, std::memory_order_relaxed);
    split_totals.count[part_].fetch_add(1, std::memory_order_relaxed);
    if (outer_ != nullptr) outer_->inner_ns_ += elapsed;
    innermost_ = outer_;
    grid_ = outer_grid_;
  }
  SplitProbe(const SplitProbe&) = delete;
  SplitProbe& operator=(const SplitProbe&) = delete;

 private:
  static inline thread_local SplitProbe* innermost_ = nullptr;  // this thread's open probe
  static inline thread_local std::uint64_t grid_ = 1;           // its block's launch's blocks
  int part_;
  SplitProbe* outer_;
  std::uint64_t outer_grid_;
  std::uint64_t start_;
  std::uint64_t inner_ns_ = 0;  // the probes opened inside this one
};
#else
inline constexpr bool kSplitProbes = false;
struct SplitProbe {
  TESSERA_HOST_DEVICE explicit SplitProbe(SplitPart, int = 0) {}
};
#endif

// --- failures ---

// Ends the calling device code with a diagnostic. Host: throws Failure, which the launcher
// turns into tessera::Error at Stream::synchronize (or which propagates to a host caller).
[[noreturn]] TESSERA_HOST_DEVICE inline void report_failure(FailureCode code, const char* message) {
  throw Failure(code, message);
}

// --- execution: the host backend runs one thread per block, so a warp has one lane ---

TESSERA_HOST_DEVICE inline constexpr int warp_size() { return 1; }
TESSERA_HOST_DEVICE inline int lane_id() { return 0; }
TESSERA_HOST_DEVICE inline int block_threads() { return 1; }
TESSERA_HOST_DEVICE inline int thread_in_block() { return 0; }
TESSERA_HOST_DEVICE inline void warp_sync() {}
TESSERA_HOST_DEVICE inline void block_sync() {}

// --- group broadcast (the waits return one result in every thread of their group) ---

// The value lane 0 holds, in every lane of the warp (and a warp_sync); one lane here.
TESSERA_HOST_DEVICE inline std::uint64_t warp_broadcast(std::uint64_t v) { return v; }
// The value thread 0 holds, in every thread of the block (and a block_sync); one thread here.
TESSERA_HOST_DEVICE inline std::uint64_t block_broadcast(std::uint64_t v) { return v; }

// --- bulk copies (the caller splits work among a group's threads) ---

// Copies `bytes` between non-overlapping ranges with the widest accesses the target offers.
// Host: memcpy, which vectorises and, for large copies, ends its non-temporal stores with a
// store fence, so a later release store orders after every byte.
TESSERA_HOST_DEVICE inline void copy_bytes(void* dst, const void* src, std::size_t bytes) {
  const SplitProbe probe(SplitPart::copy);
  if (bytes != 0) std::memcpy(dst, src, bytes);
}

// Copies one element of 1, 2, 4 or 8 bytes as a single relaxed atomic access, so that a flag
// written by a one-element put can be polled with an atomic load without a data race.
template <std::size_t kBytes>
TESSERA_HOST_DEVICE inline void copy_word_relaxed(void* dst, const void* src) {
  using Word = std::conditional_t<
      kBytes == 1, std::uint8_t,
      std::conditional_t<kBytes == 2, std::uint16_t,
                         std::conditional_t<kBytes == 4, std::uint32_t, std::uint64_t>>>;
  static_assert(sizeof(Word) == kBytes, "copy_word_relaxed takes 1, 2, 4 or 8 bytes");
  Word w;
  std::memcpy(&w, src, kBytes);
  std::atomic_ref<Word>(*static_cast<Word*>(dst)).store(w, std::memory_order_relaxed);
}

// --- capabilities ---

// True where atomic_fetch_add works on float: std::atomic_ref<float>::fetch_add (a compare-exchange
// loop where the CPU has no float add).
inline constexpr bool kFloatAtomicAdd = true;

// --- where the caller runs, and grid-wide sync (H-team block: barrier.hpp's one-group check,
// grid.hpp's grid_sync) ---

// The launch a host-backend block thread runs: set by the executor (src/launch/block_pool.cpp)
// around each block, read only by that thread. `grid_arrivals` is one word shared by the blocks
// of the launch (zero at its start); `grid_syncs` counts this block's grid_syncs so far.
struct HostLaunchSite {
  std::uint64_t launch = 0;
  int block = 0;
  std::uint64_t* grid_arrivals = nullptr;
  std::uint64_t grid_syncs = 0;
};
inline thread_local HostLaunchSite host_launch_site;

// A number naming the launch the caller runs in (unique in the process, never 0), or 0 where it
// is not known (outside a launch).
TESSERA_HOST_DEVICE inline std::uint64_t launch_id() { return host_launch_site.launch; }
// The index of the caller's block in its grid (0 outside a launch).
TESSERA_HOST_DEVICE inline int block_index() { return host_launch_site.block; }
// The grid-sync words of the caller's launch: the arrival counter shared by its blocks (null
// outside a launch) and this block's count of grid syncs, or nulls where the target syncs a grid
// natively (kNativeGridSync).
struct GridSyncWords {
  std::uint64_t* arrivals;
  std::uint64_t* done;
};
TESSERA_HOST_DEVICE inline GridSyncWords grid_sync_words() {
  return {host_launch_site.grid_arrivals, &host_launch_site.grid_syncs};
}
// False: the host backend syncs a grid through grid_sync_words.
inline constexpr bool kNativeGridSync = false;
TESSERA_HOST_DEVICE inline void grid_sync_native() {}
// Float and double adds (device atomic_add / atomic_fetch_add) are std::atomic_ref's
// compare-exchange loop on the value's bits; across PE processes that needs lock-free, so
// address-free, atomics of those sizes.
static_assert(std::atomic_ref<float>::is_always_lock_free &&
                  std::atomic_ref<double>::is_always_lock_free,
              "float atomics across PE processes need lock-free atomics");

}  // namespace tessera::device::platform

#endif  // !TESSERA_DEVICE_COMPILE
