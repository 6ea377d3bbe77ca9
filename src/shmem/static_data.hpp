// Static and global symmetric data: the executable's writable data segment (.data and .bss, what
// follows RELRO) as symmetric memory. OpenSHMEM makes static and global variables symmetric; on
// the host backend shmem_init moves the segment onto a memfd, contents kept, at the same
// address (so the program's pointers stay valid), and maps the segment of every PE of the node
// next to their heaps. The shmem routines then reach static data through a second device Context
// whose "heap" is the data segment: translation is the same offset arithmetic as for the heap,
// because every PE runs the same executable. PEs that are not mapped (other nodes) are reached
// through the network proxy: every PE registers its segment with the transport as a second
// region, and this Context's descriptors carry kProxyStaticData. Limits (docs/shmem.md): the
// executable's segment only (not shared libraries'), and no other thread may write static data
// while shmem_init moves it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bootstrap/fd.hpp"
#include "heap/memfd.hpp"
#include "tessera/device/context.hpp"
#include "tessera/runtime.hpp"

namespace tessera::shmem {

// The executable's writable data as whole pages [begin, begin + bytes), and its distance from
// the executable's load address (the same on every PE that runs the same program).
struct DataSegment {
  char* begin = nullptr;
  std::size_t bytes = 0;
  std::uintptr_t load_offset = 0;
};

// Finds the segment from the executable's program headers: the one writable PT_LOAD, from the end
// of its RELRO part (which the loader made read-only) to its last page. An empty segment, and
// the reason in `why`, when the executable has none or several.
DataSegment find_data_segment(std::string& why);

class StaticData {
 public:
  StaticData() = default;
  StaticData(const StaticData&) = delete;
  StaticData& operator=(const StaticData&) = delete;

  // Before the runtime starts (no Tessera thread runs yet): moves this PE's data segment onto a
  // memfd at the same address, contents kept. When that cannot be done (or TESSERA_SHMEM_STATIC=0)
  // the segment stays as it was and why_not() says why. Ends the process only when the move
  // failed halfway (the segment's contents would be lost).
  void move_onto_shared_memory();

  // Collective, after the runtime started: checks that every PE has the same segment layout,
  // hands the memfds to the PEs whose heaps are mapped here (`heap`'s peer table) and maps
  // theirs, and registers the segment with the network proxy when the job runs one. Afterwards
  // context() addresses static data like `heap` addresses the heap. When any
  // PE could not move its segment, or the layouts differ, static data stays non-symmetric on
  // every PE, with why_not() naming the PE and the cause. Throws Error as the runtime does.
  void connect(Runtime& runtime, const device::Context& heap);

  // Unmaps the peers' segments (shmem_finalize, after the last barrier); this PE's own segment
  // stays on its memfd (the program's statics keep working), and a later shmem_init moves it
  // again.
  void disconnect() noexcept;

  bool enabled() const { return ctx_.peer_base != nullptr; }
  const std::string& why_not() const { return why_; }
  // The Context over static data: the heap's, with the data segments as heaps, no allocation
  // table and kStaticDataContext set. peer_base[pe] is null where pe's segment is not mapped;
  // proxy is the heap's when the segment is registered with the proxy, else null.
  const device::Context& context() const { return ctx_; }
  // True when [p, p + bytes) lies in this PE's (connected) data segment.
  bool holds(const void* p, std::size_t bytes) const { return enabled() && ctx_.in_heap(p, bytes); }
  // True when `pe`'s static data is reachable: mapped here, or through the network proxy.
  bool reaches(int pe) const { return ctx_.is_mapped(pe) || ctx_.via_proxy(pe); }
  // Offset of p in the segment (for diagnostics).
  std::size_t offset(const void* p) const { return ctx_.heap_offset(p); }

 private:
  DataSegment segment_;
  detail::Fd fd_;  // the memfd under this PE's segment, once moved
  std::vector<detail::Mapping> peers_;
  std::vector<char*> bases_;
  device::Context ctx_{};
  std::string why_ = "shmem_init has not run";
};

}  // namespace tessera::shmem
