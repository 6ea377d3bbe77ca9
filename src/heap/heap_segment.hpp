// The memory behind one PE's symmetric heap, and this PE's view of its node peers' heaps: one
// implementation per backend (memfd shared memory on the host backend, device memory on cuda),
// chosen at init. The runtime sees only this interface. Internal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/bootstrap.hpp"

namespace tessera::detail {

// What a backend needs to build the heap. Making a segment is collective over `bootstrap`.
struct SegmentRequest {
  Bootstrap& bootstrap;
  int pe;
  int n_pes;
  std::vector<int> node_pes;  // global ranks on this PE's node, ascending, this PE included
  std::size_t bytes;          // segment size (user heap + control area); a backend may round up
  Timeout timeout;
  // [hole_offset, hole_offset + hole_bytes) of the segment, between the heap and the control
  // area, is never used: a backend that can makes it inaccessible in every mapping (the host
  // backend does), so an overrunning tile faults before it reaches a control word.
  std::size_t hole_offset = 0;
  std::size_t hole_bytes = 0;

  // Where the control area starts: right after the hole, to the segment's end. A backend may
  // make it an allocation of its own (the GPUs' IPC path); peers then find it through
  // HeapSegment::peer_controls, never at this offset from a heap base.
  std::size_t control_offset() const { return hole_offset + hole_bytes; }
  std::size_t control_bytes() const { return bytes - control_offset(); }
};

class HeapSegment {
 public:
  virtual ~HeapSegment() = default;

  // Heap bases indexed by PE, as addresses valid in this process (device addresses on a GPU
  // backend); null where a peer's heap is not load/store reachable (another node, no P2P).
  const std::vector<char*>& peer_bases() const { return peer_bases_; }
  // The same table in memory this backend's device code can read: Context::peer_base.
  virtual char* const* device_peer_table() const = 0;
  // Control areas indexed by PE (SegmentRequest::control_offset and on), as addresses valid
  // here; null exactly where peer_bases() is. Context::control_page of each PE.
  const std::vector<std::uint64_t*>& peer_controls() const { return peer_controls_; }
  // The same table in memory this backend's device code can read: Context::peer_control.
  virtual std::uint64_t* const* device_control_table() const = 0;
  // Bytes of this PE's segment (>= the requested size).
  virtual std::size_t bytes() const = 0;
  // How the memory was made and shared, for logs: "memfd", "cuMem VMM", "cudaMalloc + IPC".
  virtual const char* kind() const = 0;
  // What the backend decided per peer that a user should know (a peer left to the proxy path
  // and why), for the init log.
  virtual const std::vector<std::string>& notes() const {
    static const std::vector<std::string> none;
    return none;
  }

  // Synchronous copies and fills of heap memory (own or a mapped peer's) from host code.
  virtual void copy(void* dst, const void* src, std::size_t bytes) = 0;
  virtual void zero(void* dst, std::size_t bytes) = 0;

  // Makes the request's hole inaccessible in this PE's own mapping too (peers' mappings have it
  // so from the start). Called once the network transport has registered the segment: a NIC's
  // registration pins the pages it covers, and inaccessible pages cannot be pinned. A backend
  // that cannot protect memory does nothing.
  virtual void seal_hole() {}

  // Teardown, in two steps so that no PE frees memory a peer still has open: close_peers()
  // unmaps (closes the imports of) the peers' heaps, every peer base but this PE's becoming
  // null; the runtime then waits for every PE to have closed (a barrier) and calls release(),
  // which frees this PE's heap (closing the peers first if that was not done). After a failure
  // with no collective goodbye, release() alone.
  virtual void close_peers() noexcept {}
  virtual void release() noexcept = 0;

 protected:
  std::vector<char*> peer_bases_;
  std::vector<std::uint64_t*> peer_controls_;
};

// The host backend: a memfd, mapped shared by every PE of the node (fds over SCM_RIGHTS). The
// memory starts zeroed.
std::unique_ptr<HeapSegment> make_host_heap_segment(const SegmentRequest& request);

}  // namespace tessera::detail
