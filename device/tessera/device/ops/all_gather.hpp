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
TESSERA_DEVICE void all_gather_oneshot(G g, const Context& ctx, void* recv, const void* send,
                                       std::size_t bytes, AllGatherSignals sigs,
                                       std::uint64_t call);

// One-shot through a staging area, for small contributions: the group puts `send` into slot
// my_pe of half (call % 2) of every peer's symmetric `staging` (2 * P * bytes) with a
// put_signal (arrived[my_pe] = call), then copies each peer's contribution from its own staging
// into its recv as it arrives. No PE ever writes another's recv, and no handshake is needed: a PE
// that finished call n - 1 knows every peer entered n - 1, so finished copying out call n - 2,
// the last user of this half. Latency: one hop plus a local copy of (P - 1) * bytes.
template <class G>
TESSERA_DEVICE void all_gather_staged(G g, const Context& ctx, void* recv, const void* send,
                                      std::size_t bytes, void* staging, AllGatherSignals sigs,
                                      std::uint64_t call);

// Ring: slots travel around the ring, each PE forwarding to its right neighbour what it received
// from its left, in chunks of `chunk_bytes` (0: one chunk per slot), so P - 1 transfers overlap
// along the ring. Each PE only writes to its right neighbour; every chunk carries a signal
// ring[slot] = (call - 1) * chunks + c + 1. Latency: P - 1 hops; each PE writes (P - 1) * bytes.
// Same buffers and guarantees as all_gather_oneshot.
template <class G>
TESSERA_DEVICE void all_gather_ring(G g, const Context& ctx, void* recv, const void* send,
                                    std::size_t bytes, std::size_t chunk_bytes,
                                    AllGatherSignals sigs, std::uint64_t call);

// ---------------------------------------------------------------------------------------------

namespace detail {

TESSERA_HOST_DEVICE inline Tile<std::uint8_t> byte_tile(void* p, std::size_t bytes) {
  return make_tile(static_cast<std::uint8_t*>(p), bytes);
}
TESSERA_HOST_DEVICE inline Tile<const std::uint8_t> byte_tile(const void* p, std::size_t bytes) {
  return make_tile(static_cast<const std::uint8_t*>(p), bytes);
}

// Copies this PE's own contribution into its slot (skipped when the caller gathers in place).
template <class G>
TESSERA_DEVICE void copy_own_slot(G g, const Context& ctx, std::uint8_t* slot, const void* send,
                                  std::size_t bytes) {
  if (static_cast<const void*>(slot) != send) {
    put(g, ctx, byte_tile(static_cast<void*>(slot), bytes), byte_tile(send, bytes), ctx.my_pe);
  }
}

}  // namespace detail

template <class G>
TESSERA_DEVICE void all_gather_oneshot(G g, const Context& ctx, void* recv, const void* send,
                                       std::size_t bytes, AllGatherSignals sigs,
                                       std::uint64_t call) {
  const int me = ctx.my_pe, n = ctx.n_pes;
  auto* out = static_cast<std::uint8_t*>(recv);
  const auto me_z = static_cast<std::size_t>(me);
  // Release: this PE's reads of recv from earlier calls happen before any peer's writes of this
  // call, which wait for this flag with acquire.
  if (g.rank() == 0) {
    for (int k = 1; k < n; ++k) signal(ctx, &sigs.ready[me], call, SignalOp::set, (me + k) % n);
  }
  detail::copy_own_slot(g, ctx, out + me_z * bytes, send, bytes);
  const auto mine = detail::byte_tile(send, bytes);
  const auto slot = detail::byte_tile(static_cast<void*>(out + me_z * bytes), bytes);
  if (g.size() == 1 && n <= 65) {
    // A single thread serves peers in the order they become ready (starting at its right
    // neighbour, so PEs do not all write to one peer at once): one late PE holds up no one else.
    std::uint64_t pending = n == 65 ? ~std::uint64_t{0} : (std::uint64_t{1} << (n - 1)) - 1;
    device::detail::SpinPacer pacer(ctx);
    for (std::uint32_t spins = 0; pending != 0;) {
      bool progressed = false;
      for (int k = 1; k < n; ++k) {
        const std::uint64_t bit = std::uint64_t{1} << (k - 1);
        const int peer = (me + k) % n;
        if ((pending & bit) == 0 || signal_fetch(&sigs.ready[peer]) < call) continue;
        put_signal(g, ctx, slot, mine, &sigs.arrived[me], call, SignalOp::set, peer);
        pending &= ~bit;
        progressed = true;
      }
      if (progressed || !pacer.pause_and_check(spins++)) continue;
      for (int k = 1; k < n; ++k) {
        const int peer = (me + k) % n;
        if ((pending & (std::uint64_t{1} << (k - 1))) == 0) continue;
        device::detail::report_wait_timeout(ctx, "all_gather_oneshot waiting for a peer to enter",
                                            &sigs.ready[peer], Cmp::ge, call,
                                            signal_fetch(&sigs.ready[peer]), peer);
      }
    }
  } else {
    for (int k = 1; k < n; ++k) {
      const int peer = (me + k) % n;
      device::detail::wait_from(g, ctx, &sigs.ready[peer], Cmp::ge, call, peer,
                                "all_gather_oneshot waiting for a peer to enter");
      put_signal(g, ctx, slot, mine, &sigs.arrived[me], call, SignalOp::set, peer);
    }
  }
  // This PE's own slot counts as arrived (a plain local update; no one else writes this word).
  if (g.rank() == 0) signal(ctx, &sigs.arrived[me], call, SignalOp::set, me, Sem::relaxed);
  g.sync();
  // arrived[p] is written by PE p: a timeout names the PE whose chunk never came.
  device::detail::wait_all_from_owners(g, ctx, sigs.arrived, static_cast<std::size_t>(n), Cmp::ge,
                                       call, "all_gather_oneshot waiting for a chunk");
}

template <class G>
TESSERA_DEVICE void all_gather_staged(G g, const Context& ctx, void* recv, const void* send,
                                      std::size_t bytes, void* staging, AllGatherSignals sigs,
                                      std::uint64_t call) {
  const int me = ctx.my_pe, n = ctx.n_pes;
  const auto n_z = static_cast<std::size_t>(n);
  auto* out = static_cast<std::uint8_t*>(recv);
  std::uint8_t* half = static_cast<std::uint8_t*>(staging) + (call % 2) * n_z * bytes;
  const auto mine = detail::byte_tile(send, bytes);
  const auto my_slot =
      detail::byte_tile(static_cast<void*>(half + static_cast<std::size_t>(me) * bytes), bytes);
  for (int k = 1; k < n; ++k) {
    put_signal(g, ctx, my_slot, mine, &sigs.arrived[me], call, SignalOp::set, (me + k) % n);
  }
  detail::copy_own_slot(g, ctx, out + static_cast<std::size_t>(me) * bytes, send, bytes);
  for (int k = 1; k < n; ++k) {
    const auto from = static_cast<std::size_t>((me + n - k) % n);  // left first: sent to it first
    device::detail::wait_from(g, ctx, &sigs.arrived[from], Cmp::ge, call, static_cast<int>(from),
                              "all_gather_staged waiting for a chunk");
    put(g, ctx, detail::byte_tile(static_cast<void*>(out + from * bytes), bytes),
        detail::byte_tile(static_cast<const void*>(half + from * bytes), bytes), me);
  }
}

template <class G>
TESSERA_DEVICE void all_gather_ring(G g, const Context& ctx, void* recv, const void* send,
                                    std::size_t bytes, std::size_t chunk_bytes,
                                    AllGatherSignals sigs, std::uint64_t call) {
  const int me = ctx.my_pe, n = ctx.n_pes;
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  auto* out = static_cast<std::uint8_t*>(recv);
  const std::size_t chunk = chunk_bytes == 0 || chunk_bytes > bytes ? bytes : chunk_bytes;
  const std::size_t chunks = chunk == 0 ? 1 : (bytes + chunk - 1) / chunk;
  const std::uint64_t first = (call - 1) * chunks;  // ring values of earlier calls are <= first
  // Only the left neighbour writes into this PE's recv.
  if (g.rank() == 0 && n > 1) signal(ctx, &sigs.ready[me], call, SignalOp::set, left);
  detail::copy_own_slot(g, ctx, out + static_cast<std::size_t>(me) * bytes, send, bytes);
  if (n > 1) {
    device::detail::wait_from(g, ctx, &sigs.ready[right], Cmp::ge, call, right,
                              "all_gather_ring waiting for the right neighbour to enter");
  }
  for (int step = 0; step + 1 < n; ++step) {
    const int slot = (me - step + n) % n;
    std::uint8_t* slot_base = out + static_cast<std::size_t>(slot) * bytes;
    // Step 0 sends from `send`, so it does not wait for the local copy's visibility.
    const std::uint8_t* from = step == 0 ? static_cast<const std::uint8_t*>(send) : slot_base;
    for (std::size_t c = 0; c < chunks; ++c) {
      const std::size_t begin = c * chunk;
      const std::size_t len = bytes - begin < chunk ? bytes - begin : chunk;
      const std::uint64_t value = first + c + 1;
      if (step > 0) {
        device::detail::wait_from(g, ctx, &sigs.ring[slot], Cmp::ge, value, left,
                                  "all_gather_ring waiting for a chunk from the left neighbour");
      }
      put_signal(g, ctx, detail::byte_tile(static_cast<void*>(slot_base + begin), len),
                 detail::byte_tile(from + begin, len), &sigs.ring[slot], value, SignalOp::set,
                 right);
    }
  }
  // Every slot but this PE's own (which no one sends here) must be complete; the last one to
  // arrive is slot me + 1, which this PE receives but does not forward.
  const std::uint64_t last = first + chunks;
  if (g.rank() == 0) signal(ctx, &sigs.ring[me], last, SignalOp::set, me, Sem::relaxed);
  g.sync();
  wait_until_all(g, ctx, sigs.ring, static_cast<std::size_t>(n), Cmp::ge, last);
}

}  // namespace tessera::device::ops
