// A GPU backend's heap: device memory per PE, shared with the PEs of the node. Written once for
// CUDA and HIP over gpu_runtime.hpp.
//
// Preferred path (every PE's device supports VMM with POSIX fd handles; CUDA only, vmm_heap.hpp):
// export the allocation as an fd, hand it to the node's peers over the Unix-socket exchange the
// host backend uses, and let each import and map it. Otherwise (always on HIP): the runtime's
// heap memory (gpu_names.hpp: cudaMalloc, HIP fine-grained) with IPC handles exchanged through a
// bootstrap allgather, as two allocations: the heap with the hole after it, and the control area
// on its own, so no offset from a heap base reaches a control word (peers find it through the
// control table). The choice is made for the whole job (every PE takes part in the same
// exchange).
//
// Several PEs may share one GPU as processes (a one-GPU machine runs its PEs on device
// node_pe % devices): VMM imports and IPC handles from another process on the same device are
// allowed. PEs that are threads of one process sharing a device are refused (gpu_checks.hpp). A
// peer this PE cannot reach by P2P with native atomics keeps a null base: the proxy path.
//
// Host copies and fills run on the segment's own stream and wait for it (gpu_runtime.hpp's
// GpuStream::copy_sync): complete on return, pageable memory included; not ordered after kernels
// queued on the PE's stream (the caller synchronizes that stream first when a copy must see them).
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpu/gpu_runtime.hpp"
#include "gpu/gpu_segment.hpp"
#include "gpu/vmm_heap.hpp"
#include "heap/fd_exchange.hpp"
#include "tessera/error.hpp"

namespace tessera::detail::TESSERA_GPU_NS {
namespace {

// What each PE tells the others about its heap.
struct SegmentInfo {
  unsigned char uuid[16];  // its device
  std::uint64_t pid;       // its process
  std::uint64_t base;      // its heap's address in its own process
  std::uint64_t bytes;     // its segment size
  std::uint32_t vmm;       // 1: its device supports the VMM path
  std::uint32_t split;     // 1: on the VMM path its control area can be an allocation of its own
  char ipc[64];            // IpcMemHandle_t of its heap (IPC path only)
  char ipc_control[64];    // IpcMemHandle_t of its control area (IPC path only)
};

class GpuHeapSegment final : public HeapSegment {
 public:
  GpuHeapSegment(const SegmentRequest& r, int device)
      : device_(device), pe_(r.pe), copies_(device, r.pe) {
    const auto n = static_cast<std::size_t>(r.n_pes);
    std::vector<SegmentInfo> infos(n);
    SegmentInfo& mine = infos[static_cast<std::size_t>(r.pe)];
    std::memset(&mine, 0, sizeof(mine));
    const Uuid uuid = device_uuid(device, r.pe);
    std::memcpy(mine.uuid, uuid.data(), uuid.size());
    mine.pid = static_cast<std::uint64_t>(::getpid());
    mine.vmm = vmm_heap_supported(device) ? 1 : 0;
    // Issue 17 item 1: the hole unmapped (the network transport registers the heap and the
    // control page as two regions, never the hole). The layout this PE's device allows; the job
    // splits only when every PE's does.
    VmmLayout layout;
    std::size_t granularity = 0;
    if (mine.vmm != 0) {
      granularity = vmm_heap_granularity(device, r.pe);
      layout = vmm_layout(r.bytes, r.hole_offset, r.hole_bytes, granularity);
      mine.split = layout.split() ? 1 : 0;
    }
    r.bootstrap.allgather(infos.data(), sizeof(SegmentInfo));
    refuse_shared_device_threads(r, infos);
    const bool use_vmm =
        std::all_of(infos.begin(), infos.end(), [](const SegmentInfo& i) { return i.vmm != 0; });
    const bool split = use_vmm && std::all_of(infos.begin(), infos.end(),
                                              [](const SegmentInfo& i) { return i.split != 0; });

    // This PE's memory, zeroed where it is mapped (the runtime's control area must start at zero).
    if (use_vmm) {
      if (layout.split() && !split) {
        layout = vmm_layout(r.bytes, 0, 0, granularity);
        layout.why_whole = "another PE's device cannot split it";
      }
      vmm_ = make_vmm_heap(layout, device, r.pe);
      bytes_ = vmm_->bytes();
      base_ = vmm_->base();
      copies_.zero_sync(base_, layout.heap_bytes);
      if (layout.split()) {
        copies_.zero_sync(base_ + layout.control_offset, layout.control_bytes);
        notes_.push_back("heap and control area are two allocations; the " +
                         std::to_string(r.hole_bytes) +
                         " bytes between them and a granule on either side are unmapped");
      } else {
        notes_.push_back("heap and control area share one allocation (" + layout.why_whole +
                         "): a tile that overruns the heap lands in the unused hole");
      }
    } else {
      bytes_ = r.bytes;
      memory_ = HeapMemory(r.control_offset(), device, r.pe);
      control_memory_ = HeapMemory(r.control_bytes(), device, r.pe);
      base_ = memory_.get();
      copies_.zero_sync(base_, r.control_offset());
      copies_.zero_sync(control_memory_.get(), r.control_bytes());
      notes_.push_back(
          "heap and control area are two allocations; an overrun of the heap by up to " +
          std::to_string(r.hole_bytes) + " bytes lands in the unused hole after it");
    }
    char* const control = vmm_ ? base_ + r.control_offset() : control_memory_.get();
    mine.base = reinterpret_cast<std::uintptr_t>(base_);
    mine.bytes = bytes_;

    // Share it: fds over Unix sockets (VMM), or IPC handles through the bootstrap.
    // fds[a][i]: allocation a of node PE r.node_pes[i].
    std::vector<std::vector<Fd>> fds;
    if (vmm_) {
      for (const Fd& fd : vmm_->export_fds()) {
        fds.push_back(exchange_node_fds(r.bootstrap, r.node_pes, fd.get(), r.timeout));
      }
    } else {
      const IpcHandle handle = memory_.ipc_handle();
      std::memcpy(mine.ipc, handle.data(), handle.size());
      const IpcHandle control_handle = control_memory_.ipc_handle();
      std::memcpy(mine.ipc_control, control_handle.data(), control_handle.size());
    }
    r.bootstrap.allgather(infos.data(), sizeof(SegmentInfo));

    peer_bases_.assign(n, nullptr);
    peer_bases_[static_cast<std::size_t>(r.pe)] = base_;
    peer_controls_.assign(n, nullptr);
    peer_controls_[static_cast<std::size_t>(r.pe)] = reinterpret_cast<std::uint64_t*>(control);
    for (std::size_t i = 0; i < r.node_pes.size(); ++i) {
      const int peer = r.node_pes[i];
      if (peer == r.pe) continue;
      const SegmentInfo& info = infos[static_cast<std::size_t>(peer)];
      if (info.bytes != bytes_) {
        throw Error(ErrorCode::internal, r.pe,
                    "GPU heap: PE " + std::to_string(peer) + "'s segment is " +
                        std::to_string(info.bytes) + " bytes, this PE's " + std::to_string(bytes_));
      }
      Uuid peer_uuid;
      std::memcpy(peer_uuid.data(), info.uuid, peer_uuid.size());
      const int peer_device = peer_uuid == uuid ? device : device_with_uuid(peer_uuid);
      if (peer_device < 0) continue;  // not visible here: the proxy path
      std::string note;
      if (!map_peer_over_link(can_access_peer(device, peer_device),
                              native_peer_atomics(device, peer_device), r.pe, peer, note)) {
        if (!note.empty()) notes_.push_back(note);
        continue;
      }
      char* base = nullptr;
      char* peer_control = nullptr;
      if (vmm_) {
        std::vector<int> peer_fds;
        for (const std::vector<Fd>& allocation : fds) peer_fds.push_back(allocation[i].get());
        base = vmm_->map_peer(peer_fds, device, r.pe, peer);
        peer_control = base + r.control_offset();
      } else if (info.pid != mine.pid) {
        IpcHandle handle;
        std::memcpy(handle.data(), info.ipc, handle.size());
        peer_ipc_.emplace_back(handle, device, r.pe, peer);
        base = peer_ipc_.back().get();
        std::memcpy(handle.data(), info.ipc_control, handle.size());
        peer_ipc_.emplace_back(handle, device, r.pe, peer);
        peer_control = peer_ipc_.back().get();
      }
      peer_bases_[static_cast<std::size_t>(peer)] = base;
      peer_controls_[static_cast<std::size_t>(peer)] =
          reinterpret_cast<std::uint64_t*>(peer_control);
    }

    // The base table kernels and host code read (gpu_runtime.hpp's PeerTable: device memory
    // where the device allows, else pinned host memory), one address for both: the n heap bases,
    // then the n control areas.
    table_ = PeerTable(2 * n * sizeof(char*), device, r.pe, copies_);
    publish_tables();
    notes_.push_back(table_.in_device_memory()
                         ? "peer table in device memory (managed, read-mostly)"
                         : "peer table in pinned host memory (no concurrent managed access)");
  }

  ~GpuHeapSegment() override {
    close_peers();
    release();
  }

  char* const* device_peer_table() const override {
    return static_cast<char* const*>(table_.get());
  }
  std::uint64_t* const* device_control_table() const override {
    return table_.get() == nullptr
               ? nullptr
               : static_cast<std::uint64_t* const*>(table_.get()) + peer_bases_.size();
  }
  std::size_t bytes() const override { return bytes_; }
  const char* kind() const override {
    return vmm_                       ? "cuMem VMM"
           : TESSERA_GPU_RUNTIME == 1 ? "cudaMalloc + IPC"
                                      : "hipExtMallocWithFlags(fine-grained) + IPC";
  }
  const std::vector<std::string>& notes() const override { return notes_; }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    copies_.copy_sync(dst, src, bytes);
  }
  void zero(void* dst, std::size_t bytes) override { copies_.zero_sync(dst, bytes); }

  void close_peers() noexcept override {
    for (std::size_t p = 0; p < peer_bases_.size(); ++p) {
      if (static_cast<int>(p) == pe_) continue;
      peer_bases_[p] = nullptr;
      peer_controls_[p] = nullptr;
    }
    publish_tables();
    if (vmm_) vmm_->close_peers();
    peer_ipc_.clear();
  }

  void release() noexcept override {
    close_peers();
    std::fill(peer_bases_.begin(), peer_bases_.end(), nullptr);
    std::fill(peer_controls_.begin(), peer_controls_.end(), nullptr);
    publish_tables();
    vmm_.reset();
    memory_ = HeapMemory();
    control_memory_ = HeapMemory();
    base_ = nullptr;
  }

 private:
  // Copies peer_bases_ and peer_controls_ into the table device code reads.
  void publish_tables() noexcept {
    if (table_.get() == nullptr) return;
    auto* words = static_cast<void**>(table_.get());
    std::memcpy(words, peer_bases_.data(), peer_bases_.size() * sizeof(char*));
    std::memcpy(words + peer_bases_.size(), peer_controls_.data(),
                peer_controls_.size() * sizeof(std::uint64_t*));
  }

  void refuse_shared_device_threads(const SegmentRequest& r,
                                    const std::vector<SegmentInfo>& infos) const {
    std::vector<PeDevice> node;
    for (const int peer : r.node_pes) {
      const SegmentInfo& info = infos[static_cast<std::size_t>(peer)];
      PeDevice d;
      d.pe = peer;
      d.pid = info.pid;
      std::memcpy(d.uuid.data(), info.uuid, d.uuid.size());
      node.push_back(d);
    }
    const std::string problem = same_process_device_sharing(node);
    if (!problem.empty()) throw Error(ErrorCode::backend, r.pe, problem);
  }

  int device_;
  int pe_;
  GpuStream copies_;  // host copies and fills (not the PE's stream)
  std::size_t bytes_ = 0;
  char* base_ = nullptr;
  std::unique_ptr<VmmHeap> vmm_;  // VMM path
  HeapMemory memory_;             // IPC path: the heap and the hole
  HeapMemory control_memory_;     // IPC path: the control area
  std::vector<IpcMapping> peer_ipc_;
  PeerTable table_;
  std::vector<std::string> notes_;
};

}  // namespace

std::unique_ptr<HeapSegment> make_heap_segment(const SegmentRequest& request, int device) {
  return std::make_unique<GpuHeapSegment>(request, device);
}

}  // namespace tessera::detail::TESSERA_GPU_NS
