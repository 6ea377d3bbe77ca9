// All-gather building blocks: every PE contributes `bytes` and every PE ends with all P
// contributions, PE p's at offset p * bytes of a symmetric `recv` buffer. Called by exactly one
// group per PE (any group type, e.g. the Block of a one-block kernel, or one block of a larger
// kernel while the others compute); every PE makes the same sequence of calls on the same buffer.
//
// Signals are epochs: the n-th call on a buffer passes `call = n` (1, 2, ...) and nothing is reset
// between calls. The direct algorithms (one-shot, ring) first tell the PEs that write into this
// PE's `recv` that it has entered call n (so they never overwrite data this PE may still be
// reading from call n - 1), then push; the staged one-shot never writes another PE's recv. Calls
// on one set of signals may switch algorithm from call to call (all PEs alike), as long as the
// ring always uses the same bytes and chunk_bytes.
//
// What becomes visible when (every algorithm):
//  - on return, this PE's recv holds every PE's contribution of call n, and `send` is reusable;
//  - no PE writes into this PE's recv for call n + 1 before this PE has entered call n + 1, so
//    recv stays intact between the return of call n and the entry of call n + 1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "tessera/device/context.hpp"
#include "tessera/device/group.hpp"
#include "tessera/device/impl/signal_funcs.hpp"
#include "tessera/device/rma.hpp"
#include "tessera/device/signal.hpp"
#include "tessera/device/tile.hpp"

namespace tessera::device::ops {

// The signal words of one all-gather buffer: three arrays of n_pes uint64_t in the symmetric heap,
// zero before the first call, never reset. `ready[q]` on PE p is the last call PE q has entered
// (set by q); `arrived[q]` (one-shot) is the last call whose contribution from q is in p's recv;
// `ring[s]` (ring) counts the chunks of slot s received by p over all calls.
struct AllGatherSignals {
  std::uint64_t* ready = nullptr;
  std::uint64_t* arrived = nullptr;
  std::uint64_t* ring = nullptr;

  // Words one buffer needs: kWordsPerPe * n_pes.
  static constexpr std::size_t kWordsPerPe = 3;
  // The three arrays carved out of `words` (kWordsPerPe * n_pes symmetric words).
  TESSERA_HOST_DEVICE static AllGatherSignals from_words(std::uint64_t* words, int n_pes) {
    const auto n = static_cast<std::size_t>(n_pes);
    return AllGatherSignals{words, words + n, words + 2 * n};
  }
};

static_assert(std::is_trivially_copyable_v<AllGatherSignals>, "passed to kernels by value");

// One-shot push: the group puts `send` into slot my_pe of every peer's `recv` with one put_signal
// per peer (signal arrived[my_pe] = call, release), then waits for P - 1 signals >= call. Latency:
// one hop; each PE writes (P - 1) * bytes. `recv` is symmetric (P * bytes); `send` is local and
// may be recv + my_pe * bytes (in place). Bounded by ctx.timeout_ns like every wait.
template <class G>
TESSERA_KERNEL_CODE void all_gather_oneshot(G g, const Context& ctx, void* recv, const void* send,
                                            std::size_t bytes, AllGatherSignals sigs,
                                            std::uint64_t call);

// One-shot through a staging area, for small contributions: the group puts `send` into slot
// my_pe of half (call % 2) of every peer's symmetric `staging` (2 * P * bytes) with a
// put_signal (arrived[my_pe] = call), then copies each peer's contribution from its own staging
// into its recv as it arrives. No PE ever writes another's recv, and no handshake is needed: a PE
// that finished call n - 1 knows every peer entered n - 1, so finished copying out call n - 2,
// the last user of this half. Latency: one hop plus a local copy of (P - 1) * bytes.
template <class G>
TESSERA_KERNEL_CODE void all_gather_staged(G g, const Context& ctx, void* recv, const void* send,
                                           std::size_t bytes, void* staging, AllGatherSignals sigs,
                                           std::uint64_t call);

// Ring: slots travel around the ring, each PE forwarding to its right neighbour what it received
// from its left, in chunks of `chunk_bytes` (0: one chunk per slot), so P - 1 transfers overlap
// along the ring. Each PE only writes to its right neighbour; every chunk carries a signal
// ring[slot] = (call - 1) * chunks + c + 1. Latency: P - 1 hops; each PE writes (P - 1) * bytes.
// Same buffers and guarantees as all_gather_oneshot.
template <class G>
TESSERA_KERNEL_CODE void all_gather_ring(G g, const Context& ctx, void* recv, const void* send,
                                         std::size_t bytes, std::size_t chunk_bytes,
                                         AllGatherSignals sigs, std::uint64_t call);

}  // namespace tessera::device::ops

#include "tessera/device/ops/impl/all_gather_funcs.hpp"
