// Pieces the fused GEMM ops' bodies (ag_gemm, gemm_rs) share: the "done reading" handshake that
// lets a call overwrite a peer's buffers only once the peer has finished reading the previous
// call's data, and the delay hook tests use to provoke races.
#pragma once

#include <cstdint>

#include "tessera/device/atomic.hpp"
#include "tessera/device/context.hpp"
#include "tessera/device/order.hpp"
#include "tessera/device/platform.hpp"
#include "tessera/device/rma.hpp"
#include "tessera/device/signal.hpp"

namespace tessera::device::ops {

namespace detail {

// Test hook: spins (yielding) for `us` microseconds. 0 returns at once.
TESSERA_KERNEL_CODE inline void delay_us(std::uint32_t us) {
  if (us == 0) return;
  const std::uint64_t end = platform::clock_ns() + std::uint64_t{us} * 1000;
  for (std::uint32_t spins = 0; platform::clock_ns() < end; ++spins) platform::spin_pause(spins);
}

// Called once by every one of `readers` groups of this PE when it has finished reading call
// `epoch`'s inputs. The last of them (counted on the local word `readers_done`, which only grows:
// the n-th call ends at n * readers) sets consumed[my_pe] = epoch on every PE with release, so a
// PE that acquires it knows no group of this PE reads call `epoch`'s buffers any more; that one
// returns once its signals are complete (a quiet: one round trip through the proxy).
template <class G>
TESSERA_KERNEL_CODE void finish_reading(G g, const Context& ctx, std::uint64_t* readers_done,
                                        std::uint64_t* consumed, int readers, std::uint64_t epoch) {
  g.sync();
  if (g.rank() != 0) return;
  const std::uint64_t before =
      atomic_fetch_add<std::uint64_t>(ctx, readers_done, 1, ctx.my_pe, Sem::acq_rel);
  if (before + 1 != epoch * static_cast<std::uint64_t>(readers)) return;
  for (int pe = 0; pe < ctx.n_pes; ++pe) {
    signal(ctx, &consumed[ctx.my_pe], epoch, SignalOp::set, pe, Sem::release, Scope::system);
  }
  // Through the proxy these signals are still in flight here and nothing else in the call waits
  // for them, so the call must not end before they land: a caller may synchronize, destroy the
  // op and make another whose zeroed words take the freed block at once (malloc and free do not
  // drain the proxy); a late `epoch` would then land on that zero, e.g. in a tile flag the new op
  // takes for a peer's tile that has not arrived (seen: GemmRs fused_sequential followed by
  // producer_consumer across nodes, c summed with an empty slot).
  quiet(ctx);
}

}  // namespace detail
}  // namespace tessera::device::ops
