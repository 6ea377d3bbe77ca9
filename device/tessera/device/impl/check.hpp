// Argument checks shared by the device calls: PE range, mapped peers, heap bounds, scopes.
// Cheap checks (PE range, mapped peer, tile shape) always run, since skipping them would turn a
// mistake into a wild access; heap bounds and scopes run in checked mode (ctx.checked()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "tessera/device/context.hpp"
#include "tessera/device/failure.hpp"
#include "tessera/device/impl/wait.hpp"
#include "tessera/device/platform.hpp"
#include "tessera/device/proxy.hpp"
#include "tessera/device/tile.hpp"

namespace tessera::device::detail {

template <class T>
using identity_t = std::type_identity_t<T>;

// The diagnostics of a PE outside the job and of a PE whose heap is not mapped here, shared by
// the checks below and by the host's reading of a failure record (failure_record.hpp).
TESSERA_COLD TESSERA_HOST_DEVICE inline void describe_pe_out_of_range(Message& m, int my_pe,
                                                                      int n_pes, const char* what,
                                                                      int pe) {
  m << what << " on PE " << my_pe << ": target PE " << pe << " is outside [0, " << n_pes << ")";
}

// `proxy_running`: the network proxy reaches `pe` (put/get/signal/atomics go through it), but the
// call needs load/store access to its heap.
TESSERA_COLD TESSERA_HOST_DEVICE inline void describe_pe_not_mapped(Message& m, int my_pe,
                                                                    const char* what, int pe,
                                                                    bool proxy_running) {
  m << what << " on PE " << my_pe << ": PE " << pe
    << "'s heap is not mapped here (it is on another node); ";
  if (proxy_running) {
    m << what
      << " needs load/store access to it, which the network proxy does not give (put, get, "
         "signals and atomics reach it through the proxy)";
  } else {
    m << "reaching it needs the network transport (proxy), which is not running (Tessera built "
         "without libfabric, or TESSERA_FABRIC=off)";
  }
}

// The base of `pe`'s heap as mapped here; fails with invalid_argument for a PE outside the job
// and with transport for a PE whose heap is not mapped (another node).
TESSERA_HOST_DEVICE inline char* peer_heap(const Context& ctx, int pe, const char* what) {
  if (pe < 0 || pe >= ctx.n_pes) {
    Message m;
    describe_pe_out_of_range(m, ctx.my_pe, ctx.n_pes, what, pe);
    platform::report_failure(FailureCode::invalid_argument, m.c_str());
  }
  char* base = ctx.peer_base[pe];
  if (base == nullptr) {
    Message m;
    describe_pe_not_mapped(m, ctx.my_pe, what, pe, ctx.proxy != nullptr);
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

// The live allocation holding a heap offset, read from ctx.allocations (AllocationTable).
struct AllocationLookup {
  bool known = false;  // false: no table, or it kept changing while read
  bool found = false;  // a live block holds the offset
  std::uint64_t begin = 0, bytes = 0, index = 0;
};

// A binary search of the table's sorted entries, O(log n) loads however many blocks are live.
TESSERA_HOST_DEVICE inline AllocationLookup find_allocation(const Context& ctx,
                                                            std::uint64_t offset) {
  AllocationLookup out;
  const std::uint64_t* t = ctx.allocations;
  if (t == nullptr) return out;
  using Table = AllocationTable;
  for (std::uint32_t attempt = 0; attempt < 64; ++attempt) {
    const std::uint64_t v0 =
        platform::atomic_load(&t[Table::kVersion], Sem::acquire, Scope::system);
    if ((v0 & 1u) != 0) {
      platform::spin_pause(attempt);
      continue;
    }
    const std::uint64_t count =
        platform::atomic_load(&t[Table::kCount], Sem::relaxed, Scope::system);
    const auto* entries = reinterpret_cast<const std::uint64_t*>(static_cast<std::uintptr_t>(
        platform::atomic_load(&t[Table::kEntries], Sem::relaxed, Scope::system)));
    if (count != 0 && entries == nullptr) return out;
    auto word = [&](std::uint64_t entry, std::size_t field) {
      return platform::atomic_load(&entries[entry * Table::kWordsPerEntry + field], Sem::relaxed,
                                   Scope::system);
    };
    std::uint64_t lo = 0, hi = count;  // first entry starting after offset
    while (lo < hi) {
      const std::uint64_t mid = lo + (hi - lo) / 2;
      if (word(mid, 0) <= offset) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    AllocationLookup r;
    r.known = true;
    if (lo > 0) {
      r.begin = word(lo - 1, 0);
      r.bytes = word(lo - 1, 1);
      r.index = word(lo - 1, 2);
      r.found = offset - r.begin < r.bytes;
    }
    platform::fence(Sem::acquire, Scope::system);
    if (platform::atomic_load(&t[Table::kVersion], Sem::relaxed, Scope::system) == v0) return r;
  }
  return out;
}

// Appends " (allocation #i: offset b, n bytes)" or " (in no live allocation)" for a heap offset.
TESSERA_HOST_DEVICE inline void describe_allocation(Message& m, const Context& ctx,
                                                    std::uint64_t offset) {
  const AllocationLookup a = find_allocation(ctx, offset);
  if (!a.known) return;
  if (!a.found) {
    m << " (in no live allocation)";
    return;
  }
  m << " (allocation #" << a.index << ": offset " << a.begin << ", " << a.bytes << " bytes)";
}

// Marks the job as aborting on this PE and on every PE whose heap is mapped here, so their waits
// end with peer_lost naming this PE instead of running into their own timeouts. Peers reached
// only through the network learn of it from the bootstrap and the proxy when this PE leaves.
TESSERA_HOST_DEVICE inline void broadcast_abort(const Context& ctx) {
  if (ctx.control_page == nullptr) return;
  const std::uint64_t word = encode_abort(ctx.my_pe, AbortReason::failed);
  for (int pe = 0; pe < ctx.n_pes; ++pe) {
    std::uint64_t* remote = ctx.control_word(Context::kAbortWord, pe);
    if (remote == nullptr) continue;
    platform::atomic_compare_exchange(remote, std::uint64_t{0}, word, Sem::relaxed, Scope::system);
  }
}

// Why [p, p + bytes) fails check_in_heap: it runs past its allocation, lies in no live
// allocation, or is not inside the heap. Shared with the host's reading of a failure record.
TESSERA_COLD TESSERA_HOST_DEVICE inline void describe_outside_heap(Message& m, const Context& ctx,
                                                                   const void* p, std::size_t bytes,
                                                                   const char* what,
                                                                   const char* role) {
  m << what << " on PE " << ctx.my_pe << ": " << role << " [";
  const bool inside = ctx.in_heap(p, bytes == 0 ? 1 : bytes);
  const AllocationLookup a =
      inside ? find_allocation(ctx, static_cast<std::uint64_t>(ctx.heap_offset(p)))
             : AllocationLookup{};
  if (inside && a.known) {
    const auto offset = static_cast<std::uint64_t>(ctx.heap_offset(p));
    m << "heap offset " << offset << ", +" << static_cast<std::uint64_t>(bytes) << " bytes) ";
    if (a.found) {
      m << "runs past the end of its allocation #" << a.index << " [offset " << a.begin << ", +"
        << a.bytes << " bytes) by " << (offset + bytes - (a.begin + a.bytes)) << " bytes";
    } else {
      m << "is not inside any live allocation of the symmetric heap (freed, or never allocated)";
    }
    return;
  }
  auto addr = reinterpret_cast<std::uintptr_t>(p);
  auto base = reinterpret_cast<std::uintptr_t>(ctx.local_base());
  if (addr >= base && addr - base < ctx.heap_size) {
    m << "heap offset " << static_cast<std::uint64_t>(addr - base);
  } else {
    m << "address " << hex(p) << " (outside the heap)";
  }
  m << ", +" << static_cast<std::uint64_t>(bytes) << " bytes) is not inside the symmetric heap of "
    << static_cast<std::uint64_t>(ctx.heap_size) << " bytes";
}

// Checked mode: [p, p + bytes) must lie inside this PE's heap, and inside one live allocation
// (when the Context carries the allocation table).
TESSERA_HOST_DEVICE inline void check_in_heap(const Context& ctx, const void* p, std::size_t bytes,
                                              const char* what, const char* role) {
  if (!ctx.checked()) return;
  if (ctx.in_heap(p, bytes == 0 ? 1 : bytes)) {
    const auto offset = static_cast<std::uint64_t>(ctx.heap_offset(p));
    const AllocationLookup a = find_allocation(ctx, offset);
    if (!a.known || (a.found && bytes <= a.bytes - (offset - a.begin))) return;
  }
  Message m;
  describe_outside_heap(m, ctx, p, bytes, what, role);
  platform::report_failure(FailureCode::invalid_argument, m.c_str());
}

// Why `p` fails check_aligned: "<what> on PE n: <role> at address 0x... (heap offset o) is not
// aligned to `align` bytes ...". Shared with the host's reading of a failure record.
TESSERA_COLD TESSERA_HOST_DEVICE inline void describe_misaligned(Message& m, const Context& ctx,
                                                                 const void* p, std::size_t align,
                                                                 const char* what,
                                                                 const char* role) {
  m << what << " on PE " << ctx.my_pe << ": " << role << " at address " << hex(p);
  if (ctx.in_heap(p))
    m << " (heap offset " << static_cast<std::uint64_t>(ctx.heap_offset(p)) << ")";
  m << " is not aligned to " << static_cast<std::uint64_t>(align) << " bytes (it is "
    << static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p) % align)
    << " bytes past a multiple); a misaligned access is undefined on the host and faults on GPUs";
}

// Checked mode: `p` must be aligned to `align` bytes (a power of two): the element type's
// alignment for every typed pointer a call takes, the word's size for atomics and signals.
TESSERA_HOST_DEVICE inline void check_aligned(const Context& ctx, const void* p, std::size_t align,
                                              const char* what, const char* role) {
  if (!ctx.checked() || reinterpret_cast<std::uintptr_t>(p) % align == 0) return;
  Message m;
  describe_misaligned(m, ctx, p, align, what, role);
  platform::report_failure(FailureCode::invalid_argument, m.c_str());
}

// check_in_heap for a typed pointer, which must also be aligned for its type: what a tile, an
// atomic word or a signal points at. Atomics and signals take 4- and 8-byte types, whose
// alignment is their size on every target Tessera builds for.
template <class T>
TESSERA_HOST_DEVICE void check_in_heap(const Context& ctx, T* p, std::size_t bytes,
                                       const char* what, const char* role) {
  if (!ctx.checked()) return;
  if constexpr (!std::is_void_v<T>) check_aligned(ctx, p, alignof(T), what, role);
  check_in_heap(ctx, static_cast<const void*>(p), bytes, what, role);
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

// The same object on `pe` (Context::ptr), failing as peer_heap says when `pe` is outside the job
// or not mapped here. `p` must be a local heap address.
template <class T>
TESSERA_HOST_DEVICE T* translate(const Context& ctx, T* p, int pe, const char* what) {
  peer_heap(ctx, pe, what);
  return ctx.ptr(p, pe);
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
