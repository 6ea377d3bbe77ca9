// Bodies of ops/all_gather.hpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/device/impl/signal_funcs.hpp"
#include "tessera/device/ops/all_gather.hpp"
#include "tessera/device/rma.hpp"
#include "tessera/device/signal.hpp"

namespace tessera::device::ops {

namespace detail {

TESSERA_HOST_DEVICE inline Tile<std::uint8_t> byte_tile(void* p, std::size_t bytes) {
  return make_tile(static_cast<std::uint8_t*>(p), bytes);
}
TESSERA_HOST_DEVICE inline Tile<const std::uint8_t> byte_tile(const void* p, std::size_t bytes) {
  return make_tile(static_cast<const std::uint8_t*>(p), bytes);
}

// Copies this PE's own contribution into its slot (skipped when the caller gathers in place).
template <class G>
TESSERA_KERNEL_CODE void copy_own_slot(G g, const Context& ctx, std::uint8_t* slot,
                                       const void* send, std::size_t bytes) {
  if (static_cast<const void*>(slot) != send) {
    put(g, ctx, byte_tile(static_cast<void*>(slot), bytes), byte_tile(send, bytes), ctx.my_pe);
  }
}

}  // namespace detail

template <class G>
TESSERA_KERNEL_CODE void all_gather_oneshot(G g, const Context& ctx, void* recv, const void* send,
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
TESSERA_KERNEL_CODE void all_gather_staged(G g, const Context& ctx, void* recv, const void* send,
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
TESSERA_KERNEL_CODE void all_gather_ring(G g, const Context& ctx, void* recv, const void* send,
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
