// Signals: uint64_t words in the symmetric heap that tell a PE its data has arrived. A signal is
// updated with release at system scope after the data it guards, and waited for with acquire,
// so a PE that sees the new value also sees everything the signalling PE wrote before it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/device/context.hpp"
#include "tessera/device/group.hpp"
#include "tessera/device/impl/check.hpp"
#include "tessera/device/order.hpp"
#include "tessera/device/rma.hpp"
#include "tessera/device/tile.hpp"

namespace tessera::device {

// Puts `src` into symmetric `dst` on `pe`, then updates `sig` on `pe` (set to, or add, `value`)
// with release at system scope: a PE that reads the new signal with acquire sees the whole tile.
// On return `src` is reusable.
template <class G, class T>
TESSERA_KERNEL_CODE void put_signal(G g, const Context& ctx, Tile<T> dst,
                                    detail::identity_t<Tile<const T>> src, std::uint64_t* sig,
                                    std::uint64_t value, SignalOp op, int pe);

// put_signal that may return before `src` is reusable (complete after quiet()); the release
// guarantee is the same: the signal never becomes visible before the tile.
template <class G, class T>
TESSERA_KERNEL_CODE void put_signal_nbi(G g, const Context& ctx, Tile<T> dst,
                                        detail::identity_t<Tile<const T>> src, std::uint64_t* sig,
                                        std::uint64_t value, SignalOp op, int pe);

// put_signal of `count` contiguous elements: `src` (local) into symmetric `dst` on `pe`, then the
// signal, with the same release guarantee; no Tile needed.
template <class G, class T>
TESSERA_KERNEL_CODE void put_signal(G g, const Context& ctx, T* dst,
                                    detail::identity_t<const T*> src, std::size_t count,
                                    std::uint64_t* sig, std::uint64_t value, SignalOp op, int pe);
template <class G, class T>
TESSERA_KERNEL_CODE void put_signal_nbi(G g, const Context& ctx, T* dst,
                                        detail::identity_t<const T*> src, std::size_t count,
                                        std::uint64_t* sig, std::uint64_t value, SignalOp op,
                                        int pe);

// Updates symmetric `sig` on `pe` atomically (set or add `value`); with Sem::release every write
// the calling thread made before it is visible to a PE that acquires the new value.
TESSERA_KERNEL_CODE inline void signal(const Context& ctx, std::uint64_t* sig, std::uint64_t value,
                                       SignalOp op, int pe, Sem sem = Sem::release,
                                       Scope scope = Scope::system);

// Every wait takes its group first (Thread for one thread alone): all threads of `g` call it
// together and it returns in all of them with the same result. The group's first thread polls
// (wait_until_all shares its signals among the group's threads); with Sem::acquire the whole
// group then sees every write the signaller released.
// Every wait gives up after ctx.timeout_ns (0: never) with a timeout failure naming this PE, the
// signal's heap offset, the comparison and the value seen. Tests (test, test_any, test_some,
// test_all) never block: one thread calls them alone, so they take no group.

// Waits until local `sig` CMP `value` holds and returns the value that satisfied it.
template <class G>
TESSERA_KERNEL_CODE std::uint64_t wait_until(G g, const Context& ctx, const std::uint64_t* sig,
                                             Cmp cmp, std::uint64_t value, Sem sem = Sem::acquire);

// The index wait_until_any and test_any return when no signal qualifies.
inline constexpr std::size_t npos = ~std::size_t{0};

// Waits until some sigs[i] CMP value holds and returns that i (the lowest satisfied index seen in
// one sweep); acquire as wait_until.
template <class G>
TESSERA_KERNEL_CODE std::size_t wait_until_any(G g, const Context& ctx, const std::uint64_t* sigs,
                                               std::size_t n, Cmp cmp, std::uint64_t value,
                                               Sem sem = Sem::acquire);

// wait_until_any over the entries whose status[i] is 0 (a local array of n ints): the index it
// returns gets status 1, so repeated calls drain arrivals one by one without resetting any
// signal. Returns npos at once when every status is nonzero.
template <class G>
TESSERA_KERNEL_CODE std::size_t wait_until_any(G g, const Context& ctx, const std::uint64_t* sigs,
                                               std::size_t n, int* status, Cmp cmp,
                                               std::uint64_t value, Sem sem = Sem::acquire);

// Waits until at least one sigs[i] with status[i] == 0 satisfies CMP value, then writes every
// such i seen in that sweep to `indices` (local, room for n), sets their status to 1 and returns
// how many it wrote: a consumer drains several arrivals per call and never resets a signal.
// Returns 0 at once when n is 0 or every status is nonzero. acquire as wait_until.
template <class G>
TESSERA_KERNEL_CODE std::size_t wait_until_some(G g, const Context& ctx, const std::uint64_t* sigs,
                                                std::size_t n, int* status, std::size_t* indices,
                                                Cmp cmp, std::uint64_t value,
                                                Sem sem = Sem::acquire);

// Waits until sigs[i] CMP value holds for every i < n; acquire as wait_until (the timeout
// diagnostic names the first signal still unsatisfied). The group's threads share the signals.
template <class G>
TESSERA_KERNEL_CODE void wait_until_all(G g, const Context& ctx, const std::uint64_t* sigs,
                                        std::size_t n, Cmp cmp, std::uint64_t value,
                                        Sem sem = Sem::acquire);

// The ungrouped wait_until_any of earlier releases; one thread calls it.
[[deprecated(
    "pass the group first: wait_until_any(tessera::device::Thread{}, ctx, "
    "...)")]] TESSERA_KERNEL_CODE inline std::size_t
wait_until_any(const Context& ctx, const std::uint64_t* sigs, std::size_t n, Cmp cmp,
               std::uint64_t value, Sem sem = Sem::acquire);

// True when local `sig` CMP `value` holds now (one atomic load with `sem`; never waits).
TESSERA_KERNEL_CODE inline bool test(const Context& ctx, const std::uint64_t* sig, Cmp cmp,
                                     std::uint64_t value, Sem sem = Sem::acquire);

// The lowest i with sigs[i] CMP value now, or npos (one sweep; never waits).
TESSERA_KERNEL_CODE inline std::size_t test_any(const Context& ctx, const std::uint64_t* sigs,
                                                std::size_t n, Cmp cmp, std::uint64_t value,
                                                Sem sem = Sem::acquire);

// test_any over the entries whose status[i] is 0; the index it returns gets status 1.
TESSERA_KERNEL_CODE inline std::size_t test_any(const Context& ctx, const std::uint64_t* sigs,
                                                std::size_t n, int* status, Cmp cmp,
                                                std::uint64_t value, Sem sem = Sem::acquire);

// wait_until_some's sweep without the wait: writes to `indices` every i with status[i] == 0 whose
// signal satisfies CMP value now, sets their status to 1 and returns how many (0: none yet).
TESSERA_KERNEL_CODE inline std::size_t test_some(const Context& ctx, const std::uint64_t* sigs,
                                                 std::size_t n, int* status, std::size_t* indices,
                                                 Cmp cmp, std::uint64_t value,
                                                 Sem sem = Sem::acquire);

// True when sigs[i] CMP value holds now for every i < n (never waits).
TESSERA_KERNEL_CODE inline bool test_all(const Context& ctx, const std::uint64_t* sigs,
                                         std::size_t n, Cmp cmp, std::uint64_t value,
                                         Sem sem = Sem::acquire);

// The current value of local `sig`, read atomically; with acquire (the default) the caller sees
// every write released by the update that produced it.
TESSERA_KERNEL_CODE inline std::uint64_t signal_fetch(const std::uint64_t* sig,
                                                      Sem sem = Sem::acquire);

// Counts the calls of an operation that runs repeatedly over the same signals, so nothing is
// reset between calls: the n-th call signals with SignalOp::set to n (or adds 1 per sender) and
// waits for >= n (or >= n * senders). Keep one Epoch per call site on the host and pass
// next() to each launch. A launch that is captured into a Graph and replayed passes the same
// argument every replay: count in device memory instead, with DeviceEpoch.
struct Epoch {
  std::uint64_t count = 0;  // calls made so far

  // Advances to the next call and returns its number (1 for the first call).
  TESSERA_HOST_DEVICE std::uint64_t next() { return ++count; }
  // Skips ahead by `n` calls (an operation that uses n epochs per call) and returns the number
  // of the last of them.
  TESSERA_HOST_DEVICE std::uint64_t advance(std::uint64_t n) { return count += n; }
  // The number of the latest call (0 before the first).
  TESSERA_HOST_DEVICE std::uint64_t current() const { return count; }
};

static_assert(std::is_trivially_copyable_v<Epoch>, "Epoch values are passed to kernels");

// Epoch's count kept in device memory, advanced by the kernel that uses it: a launch captured
// once into a Graph and replayed takes a new epoch on every replay, with no host-side reset
// (docs/graphs.md). `words` are kWords words of this PE's memory (the symmetric heap or any
// memory its kernels write), zero before the first call, used by one operation, whose calls are
// ordered (one stream). Pass the DeviceEpoch by value to the kernel; the kernel calls one of:
struct DeviceEpoch {
  static constexpr std::size_t kWords = 2;  // the count, and the grid form's arrivals
  std::uint64_t* words = nullptr;

  // For a launch in which one group uses the epoch: every thread of `g` gets the number of the
  // call's last epoch (1 for the first call of n = 1), the count having advanced by `n`.
  template <class G>
  TESSERA_KERNEL_CODE std::uint64_t next(G g, std::uint64_t n = 1) const;
  // For a grid of blocks that all use the epoch: every thread of every block calls it once and
  // gets the same number, the count having advanced by `n` once all blocks have read it. No
  // block waits for another.
  TESSERA_KERNEL_CODE std::uint64_t next_in_grid(Block blk, std::uint64_t n = 1) const;
};

static_assert(std::is_trivially_copyable_v<DeviceEpoch>, "passed to kernels by value");

}  // namespace tessera::device

#include "tessera/device/impl/signal_funcs.hpp"
