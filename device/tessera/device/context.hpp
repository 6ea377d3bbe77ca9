// Context: everything a kernel needs to address the symmetric heap of every PE. A plain struct,
// passed to kernels by value; it points at tables owned by the Runtime, so it stays valid until
// that Runtime is finalized.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "tessera/device/platform.hpp"

namespace tessera::device {

struct ProxyChannel;  // proxy_wire.hpp: the ring of descriptors for peers reached over the network

// Bits of Context::flags.
enum ContextFlags : std::uint32_t {
  kCheckedMode = 1u << 0,  // TESSERA_CHECK=1: validate PEs, pointers and scopes on every call
  // The "heap" of this Context is the executable's static data segment (the OpenSHMEM host
  // layer's second Context): its proxy descriptors carry kProxyStaticData (proxy_wire.hpp).
  kStaticDataContext = 1u << 1,
};

struct Context {
  int my_pe;                 // this PE's index in the world team
  int n_pes;                 // number of PEs in the world team
  char* const* peer_base;    // n_pes heap bases as mapped here; null where a peer is not mapped
  std::size_t heap_size;     // bytes of every PE's heap (the same on all)
  std::uint64_t timeout_ns;  // bound of every wait; 0 waits forever (TESSERA_TIMEOUT)
  std::uint32_t flags;       // ContextFlags
  // Counters of the device barrier, set up by Runtime::init in this PE's control area: memory
  // outside the heap and out of a tile's reach. On the host backend and the CUDA VMM path it
  // follows the heap kGuardBytes (2 MiB) past its end, that gap (and as much before the heap and
  // after the control area) inaccessible in every mapping, so a tile running off either end of a
  // heap faults instead of writing these words or a neighbouring mapping; on the GPUs' IPC path
  // (cudaMalloc, HIP) it is an allocation of its own. Peers reach it through peer_control, never
  // by heap arithmetic. Word kBarrierArrivals is bumped by every PE entering a barrier, word
  // kBarrierEntered counts the barriers this PE has entered. Never reset.
  std::uint64_t* control_page;
  // This PE's network proxy ring (proxy_wire.hpp), or null when no peer needs it: calls on a PE
  // whose peer_base is null go through it.
  ProxyChannel* proxy;
  // The allocator's live blocks as device code can read them (AllocationTable), kept current by
  // malloc and free; null in a Context made by hand. Diagnostics name a signal's allocation from
  // it, and checked mode bounds every pointer by its block.
  const std::uint64_t* allocations;
  // n_pes control pages (each PE's control_page) as mapped here; null where a peer's is not
  // mapped (its words are reached through the proxy). Set whenever control_page is.
  std::uint64_t* const* peer_control;
  // Where the network proxy addresses the control page: its offset in the segment offsets that
  // proxy descriptors carry (proxy_wire.hpp), the same on every PE.
  std::uint64_t control_offset;

  // Word indices into control_page (the first page of the control area, which peers may write).
  static constexpr std::size_t kBarrierArrivals = 0;
  static constexpr std::size_t kBarrierEntered = 8;  // its own cache line
  // Checked mode (barrier_funcs.hpp's one-group check): the tag of the group inside a world
  // barrier on this PE now (0 when none), then the launch of the last group that entered one
  // (kBarrierLastGroup is no longer written; kept so the layout stays). This PE's own words, in
  // kBarrierEntered's line.
  static constexpr std::size_t kBarrierOccupant = 9;
  static constexpr std::size_t kBarrierLastLaunch = 10;
  static constexpr std::size_t kBarrierLastGroup = 11;
  // Non-zero once the job is aborting: encode_abort(pe, reason). Every bounded wait polls it, so a
  // PE that failed, or died, ends the waits of its peers in well under the timeout.
  static constexpr std::size_t kAbortWord = 16;
  // Word kBarrierSeen + p: the number of barriers PE p has entered, written by p before it
  // arrives, so a barrier that times out can name the PEs that never came.
  static constexpr std::size_t kBarrierSeen = 24;
  static constexpr std::size_t kBarrierWordsBytes = 4096;
  // The failure record (failure_record.hpp) of this PE's kernels, in the control area's last
  // page (this PE's own memory, after the allocation table): word index from control_page.
  static constexpr std::size_t kFailureRecordWord = (4096 + 96 * 1024) / sizeof(std::uint64_t);
  static constexpr int kBarrierSeenPes =
      static_cast<int>(kBarrierWordsBytes / sizeof(std::uint64_t) - kBarrierSeen);

  TESSERA_HOST_DEVICE char* local_base() const { return peer_base[my_pe]; }
  TESSERA_HOST_DEVICE std::uint64_t* failure_record() const {
    return control_page != nullptr ? &control_page[kFailureRecordWord] : nullptr;
  }
  TESSERA_HOST_DEVICE bool checked() const { return (flags & kCheckedMode) != 0; }

  // True when [p, p + bytes) lies inside this PE's heap.
  TESSERA_HOST_DEVICE bool in_heap(const void* p, std::size_t bytes = 1) const {
    auto a = reinterpret_cast<std::uintptr_t>(p);
    auto b = reinterpret_cast<std::uintptr_t>(local_base());
    return a >= b && bytes <= heap_size && a - b <= heap_size - bytes;
  }

  // Offset of a local heap pointer from the start of the heap (same on every PE).
  TESSERA_HOST_DEVICE std::size_t heap_offset(const void* p) const {
    return static_cast<std::size_t>(static_cast<const char*>(p) - local_base());
  }

  // True when `pe`'s heap is reached through the network proxy (not mapped, proxy running).
  TESSERA_HOST_DEVICE bool via_proxy(int pe) const {
    return pe >= 0 && pe < n_pes && peer_base[pe] == nullptr && proxy != nullptr;
  }

  // True when `pe`'s heap is load/store reachable from here (self, or mapped).
  TESSERA_HOST_DEVICE bool is_mapped(int pe) const {
    return pe >= 0 && pe < n_pes && peer_base[pe] != nullptr;
  }

  // Word `index` of `pe`'s control page as mapped here; null where it is not mapped (or the
  // Context has no control page). `pe` must be in [0, n_pes).
  TESSERA_HOST_DEVICE std::uint64_t* control_word(std::size_t index, int pe) const {
    std::uint64_t* page = peer_control != nullptr ? peer_control[pe] : nullptr;
    return page != nullptr ? page + index : nullptr;
  }
  // The segment offset a proxy descriptor names for word `index` of a PE's control page.
  TESSERA_HOST_DEVICE std::uint64_t control_wire_offset(std::size_t index) const {
    return control_offset + index * sizeof(std::uint64_t);
  }

  // The address on `pe` of the object at `local` in this PE's heap: base[pe] + (local -
  // base[me]). Null when `pe`'s heap is not mapped here (another node: use the proxy). The one
  // pointer translation of heap objects: checked calls (detail::translate) use it too.
  template <class T>
  TESSERA_HOST_DEVICE T* ptr(T* local, int pe) const {
    char* base = peer_base[pe];
    if (base == nullptr) return nullptr;
    auto offset = reinterpret_cast<const char*>(local) - local_base();
    return reinterpret_cast<T*>(base + offset);
  }
};

static_assert(std::is_trivially_copyable_v<Context>, "Context is passed to kernels by value");

// Why a job is aborting, as kept in the control area's abort word.
enum class AbortReason : std::uint32_t {
  failed = 1,  // the PE hit a failure (a wait timed out) and left the job
  died = 2,    // the PE's process ended without leaving the job (seen by a peer's watch)
};

TESSERA_HOST_DEVICE constexpr std::uint64_t encode_abort(int pe, AbortReason reason) {
  return (static_cast<std::uint64_t>(reason) << 32) | static_cast<std::uint32_t>(pe + 1);
}
TESSERA_HOST_DEVICE constexpr int abort_pe(std::uint64_t word) {
  return static_cast<int>(word & 0xffffffffu) - 1;
}
TESSERA_HOST_DEVICE constexpr AbortReason abort_reason(std::uint64_t word) {
  return static_cast<AbortReason>(word >> 32);
}

// The allocator's live blocks as device code reads them. The header sits in the control area's
// pages after the first (this PE's own memory: peers never write it); the entries in a separate
// array that host code writes and device code reads (ordinary memory on the host backend, pinned
// host memory mapped into the device on GPUs), replaced by one twice as large whenever the live
// blocks outgrow it, so there is no cap on the allocations checked mode bounds. A seqlock:
// `version` is odd while the host rewrites the table, and readers that see it odd or changed
// retry or give up; replaced arrays stay valid until finalize, so a reader never follows a
// dangling address. Entry i is three words: block start offset, usable bytes, and the
// allocation's index (the how-many-th malloc/calloc made it, counting from 0 over the Runtime's
// life), sorted by start offset.
struct AllocationTable {
  static constexpr std::size_t kVersion = 0;
  static constexpr std::size_t kCount = 1;    // live entries
  static constexpr std::size_t kEntries = 2;  // the entry array's address as device code sees it
  static constexpr std::size_t kHeaderWords = 3;
  static constexpr std::size_t kWordsPerEntry = 3;
  // Bytes the control area keeps for the table (only the header's words are used).
  static constexpr std::size_t kBytes = 96 * 1024;
};
static_assert(Context::kFailureRecordWord * sizeof(std::uint64_t) == 4096 + AllocationTable::kBytes,
              "the failure record's page follows the allocation table");
// Bytes of the control area: the page peers write, the allocation table, the failure record's
// page.
inline constexpr std::size_t kControlAreaBytes = 4096 + AllocationTable::kBytes + 4096;

}  // namespace tessera::device
