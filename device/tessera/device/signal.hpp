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

// Updates symmetric `sig` on `pe` atomically (set or add `value`); with Sem::release every write
// the calling thread made before it is visible to a PE that acquires the new value.
TESSERA_KERNEL_CODE inline void signal(const Context& ctx, std::uint64_t* sig, std::uint64_t value,
                                       SignalOp op, int pe, Sem sem = Sem::release,
                                       Scope scope = Scope::system);

// Returns in every thread of `g` once local `sig` CMP `value` holds; with Sem::acquire the group
// then sees every write the signaller released. Gives up after ctx.timeout_ns (0: never) with a
// timeout failure naming this PE, the signal's heap offset, the comparison and the value seen.
template <class G>
TESSERA_KERNEL_CODE void wait_until(G g, const Context& ctx, const std::uint64_t* sig, Cmp cmp,
                                    std::uint64_t value, Sem sem = Sem::acquire);

// Called by one thread: waits until some sigs[i] CMP value holds and returns that i (the lowest
// satisfied index seen in one sweep); acquire as wait_until; bounded the same way.
TESSERA_KERNEL_CODE inline std::size_t wait_until_any(const Context& ctx, const std::uint64_t* sigs,
                                                      std::size_t n, Cmp cmp, std::uint64_t value,
                                                      Sem sem = Sem::acquire);

// Returns in every thread of `g` once sigs[i] CMP value holds for every i < n; acquire as
// wait_until; bounded the same way (the diagnostic names the first signal still unsatisfied).
template <class G>
TESSERA_KERNEL_CODE void wait_until_all(G g, const Context& ctx, const std::uint64_t* sigs,
                                        std::size_t n, Cmp cmp, std::uint64_t value,
                                        Sem sem = Sem::acquire);

// The current value of local `sig`, read atomically; with acquire (the default) the caller sees
// every write released by the update that produced it.
TESSERA_KERNEL_CODE inline std::uint64_t signal_fetch(const std::uint64_t* sig,
                                                      Sem sem = Sem::acquire);

// Counts the calls of an operation that runs repeatedly over the same signals, so nothing is
// reset between calls: the n-th call signals with SignalOp::set to n (or adds 1 per sender) and
// waits for >= n (or >= n * senders). Keep one Epoch per call site on the host and pass
// next() to each launch.
struct Epoch {
  std::uint64_t count = 0;  // calls made so far

  // Advances to the next call and returns its number (1 for the first call).
  TESSERA_HOST_DEVICE std::uint64_t next() { return ++count; }
  // The number of the latest call (0 before the first).
  TESSERA_HOST_DEVICE std::uint64_t current() const { return count; }
};

static_assert(std::is_trivially_copyable_v<Epoch>, "Epoch values are passed to kernels");

}  // namespace tessera::device

#include "tessera/device/impl/signal_funcs.hpp"
