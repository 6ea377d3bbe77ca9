// Argument checks shared by the device calls: PE range, mapped peers, heap bounds, scopes.
// Cheap checks (PE range, mapped peer, tile shape) always run, since skipping them would turn a
// mistake into a wild access; heap bounds and scopes run in checked mode (ctx.checked()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "tessera/device/context.hpp"
#include "tessera/device/failure.hpp"
#include "tessera/device/platform.hpp"
#include "tessera/device/proxy.hpp"
#include "tessera/device/tile.hpp"

namespace tessera::device::detail {

template <class T>
using identity_t = std::type_identity_t<T>;

// The base of `pe`'s heap as mapped here; fails with invalid_argument for a PE outside the job
// and with transport for a PE whose heap is not mapped (another node).
TESSERA_HOST_DEVICE inline char* peer_heap(const Context& ctx, int pe, const char* what) {
  if (pe < 0 || pe >= ctx.n_pes) {
    Message m;
    m << what << " on PE " << ctx.my_pe << ": target PE " << pe << " is outside [0, " << ctx.n_pes
      << ")";
    platform::report_failure(FailureCode::invalid_argument, m.c_str());
  }
  char* base = ctx.peer_base[pe];
  if (base == nullptr) {
    Message m;
    m << what << " on PE " << ctx.my_pe << ": PE " << pe
      << "'s heap is not mapped here (it is on another node); reaching it needs the network "
         "transport (proxy), which is not running (Tessera built without libfabric, or "
         "TESSERA_FABRIC=off)";
    platform::report_failure(FailureCode::transport, m.c_str());
  }
  return base;
}

// True when `pe` is reached through the network proxy; fails with invalid_argument for a PE
// outside the job.
TESSERA_HOST_DEVICE inline bool use_proxy(const Context& ctx, int pe, const char* what) {
  if (pe < 0 || pe >= ctx.n_pes) peer_heap(ctx, pe, what);
  return ctx.via_proxy(pe);
}

// Checked mode: [p, p + bytes) must lie inside this PE's heap. The device side does not know
// allocation sizes, so a tile that runs past the end of its own block but stays inside the heap
// is not caught here; the heap end is the bound.
TESSERA_HOST_DEVICE inline void check_in_heap(const Context& ctx, const void* p, std::size_t bytes,
                                              const char* what, const char* role) {
  if (!ctx.checked() || ctx.in_heap(p, bytes == 0 ? 1 : bytes)) return;
  Message m;
  m << what << " on PE " << ctx.my_pe << ": " << role << " [";
  auto a = reinterpret_cast<std::uintptr_t>(p);
  auto b = reinterpret_cast<std::uintptr_t>(ctx.local_base());
  if (a >= b && a - b < ctx.heap_size) {
    m << "heap offset " << static_cast<std::uint64_t>(a - b);
  } else {
    m << "address " << static_cast<std::uint64_t>(a) << " (outside the heap)";
  }
  m << ", +" << static_cast<std::uint64_t>(bytes) << " bytes) is not inside the symmetric heap of "
    << static_cast<std::uint64_t>(ctx.heap_size) << " bytes";
  platform::report_failure(FailureCode::invalid_argument, m.c_str());
}

// Checked mode: an atomic or signal on another PE must use Scope::system (a narrower scope does
// not order across PEs and hangs or corrupts on GPUs).
TESSERA_HOST_DEVICE inline void check_scope(const Context& ctx, Scope scope, int pe,
                                            const char* what) {
  if (!ctx.checked() || scope == Scope::system || pe == ctx.my_pe) return;
  Message m;
  m << what << " on PE " << ctx.my_pe << ": target PE " << pe << " is remote but the scope is "
    << (scope == Scope::block ? "block" : "device") << "; cross-PE operations need Scope::system";
  platform::report_failure(FailureCode::invalid_argument, m.c_str());
}

// The same object on `pe`: base[pe] + (p - base[me]). `p` must be a local heap address.
template <class T>
TESSERA_HOST_DEVICE T* translate(const Context& ctx, T* p, int pe, const char* what) {
  char* base = peer_heap(ctx, pe, what);
  auto offset = reinterpret_cast<const char*>(p) - ctx.local_base();
  return reinterpret_cast<T*>(base + offset);
}

// dst and src must have the same shape, and each ld >= cols.
template <class T>
TESSERA_HOST_DEVICE void check_shapes(const Context& ctx, const Tile<T>& dst,
                                      const Tile<const T>& src, const char* what) {
  const bool ld_ok = (dst.rows <= 1 || dst.ld >= dst.cols) && (src.rows <= 1 || src.ld >= src.cols);
  if (dst.rows == src.rows && dst.cols == src.cols && ld_ok) return;
  Message m;
  m << what << " on PE " << ctx.my_pe << ": destination tile is "
    << static_cast<std::uint64_t>(dst.rows) << "x" << static_cast<std::uint64_t>(dst.cols)
    << " (ld " << static_cast<std::uint64_t>(dst.ld) << ") but source tile is "
    << static_cast<std::uint64_t>(src.rows) << "x" << static_cast<std::uint64_t>(src.cols)
    << " (ld " << static_cast<std::uint64_t>(src.ld)
    << "); shapes must match and every ld must be >= cols";
  platform::report_failure(FailureCode::invalid_argument, m.c_str());
}

}  // namespace tessera::device::detail
