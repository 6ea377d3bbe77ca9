// The cuda backend's heap: device memory per PE, shared with the PEs of the node.
//
// Preferred path (every PE's device supports VMM with POSIX fd handles): cuMemCreate, export
// the allocation as an fd, hand it to the node's peers over the same Unix-socket exchange the
// host backend uses, and let each peer import it, reserve a range, map it and grant its own
// device read/write access. Fallback: cudaMalloc, with cudaIpcGetMemHandle handles exchanged
// through a bootstrap allgather and opened with cudaIpcOpenMemHandle. The choice is made for the
// whole job (every PE must take part in the same exchange).
//
// Several PEs may share one GPU (a one-GPU machine runs its PEs as processes on device
// node_pe % devices): both VMM imports and IPC handles from another process on the same device
// are allowed. PEs that are threads of one process and share a device use each other's pointers
// directly. A peer whose device this PE cannot reach (no P2P) keeps a null base: the proxy path.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "heap/fd_exchange.hpp"
#include "heap/heap_segment.hpp"
#include "runtime/cuda_backend.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/cuda_runtime.hpp"
#include "tessera/error.hpp"

namespace tessera::detail::cuda {
namespace {

// What each PE tells the others about its heap.
struct SegmentInfo {
  unsigned char uuid[16];  // its device
  std::uint64_t pid;       // its process (threads of one process share pointers)
  std::uint64_t base;      // its heap's address in its own process
  std::uint64_t bytes;     // its segment size
  std::uint32_t vmm;       // 1: its device supports VMM with POSIX fds
  std::uint32_t reserved;
  char ipc[64];  // cudaIpcMemHandle_t (fallback path only)
};

class CudaHeapSegment final : public HeapSegment {
 public:
  CudaHeapSegment(const SegmentRequest& r, int device) : device_(device), pe_(r.pe) {
    const auto n = static_cast<std::size_t>(r.n_pes);
    std::vector<SegmentInfo> infos(n);
    SegmentInfo& mine = infos[static_cast<std::size_t>(r.pe)];
    std::memset(&mine, 0, sizeof(mine));
    const Uuid uuid = device_uuid(device, r.pe);
    std::memcpy(mine.uuid, uuid.data(), uuid.size());
    mine.pid = static_cast<std::uint64_t>(::getpid());
    mine.vmm = vmm_supported(device) ? 1 : 0;
    r.bootstrap.allgather(infos.data(), sizeof(SegmentInfo));
    use_vmm_ =
        std::all_of(infos.begin(), infos.end(), [](const SegmentInfo& i) { return i.vmm != 0; });

    // This PE's memory, zeroed (the runtime's control area must start at zero).
    if (use_vmm_) {
      const std::size_t g = vmm_granularity(device, r.pe);
      bytes_ = (r.bytes + g - 1) / g * g;
      allocation_ = VmmAllocation::create(bytes_, device, r.pe);
      own_mapping_ = VmmMapping(allocation_, device, r.pe, r.pe);
      base_ = own_mapping_.base();
    } else {
      bytes_ = r.bytes;
      memory_ = DeviceMemory(bytes_, device, r.pe);
      base_ = memory_.get();
    }
    cuda::zero(base_, bytes_, device, r.pe);
    mine.base = reinterpret_cast<std::uintptr_t>(base_);
    mine.bytes = bytes_;

    // Share it: fds over Unix sockets (VMM), or IPC handles through the bootstrap.
    std::vector<Fd> fds;
    if (use_vmm_) {
      Fd fd = allocation_.export_fd();
      fds = exchange_node_fds(r.bootstrap, r.node_pes, fd.get(), r.timeout);
    } else {
      const IpcHandle handle = memory_.ipc_handle();
      std::memcpy(mine.ipc, handle.data(), handle.size());
    }
    r.bootstrap.allgather(infos.data(), sizeof(SegmentInfo));

    peer_bases_.assign(n, nullptr);
    peer_bases_[static_cast<std::size_t>(r.pe)] = base_;
    for (std::size_t i = 0; i < r.node_pes.size(); ++i) {
      const int peer = r.node_pes[i];
      if (peer == r.pe) continue;
      const SegmentInfo& info = infos[static_cast<std::size_t>(peer)];
      Uuid peer_uuid;
      std::memcpy(peer_uuid.data(), info.uuid, peer_uuid.size());
      const int peer_device = peer_uuid == uuid ? device : device_with_uuid(peer_uuid);
      if (peer_device < 0 || !can_access_peer(device, peer_device)) continue;  // proxy path
      char* base = nullptr;
      if (info.pid == mine.pid && peer_device == device) {
        base = reinterpret_cast<char*>(static_cast<std::uintptr_t>(info.base));
      } else if (use_vmm_) {
        VmmAllocation imported = VmmAllocation::import_fd(fds[i].get(), info.bytes, r.pe, peer);
        peer_mappings_.emplace_back(imported, device, r.pe, peer);
        base = peer_mappings_.back().base();
        peer_allocations_.push_back(std::move(imported));
      } else if (info.pid != mine.pid) {
        IpcHandle handle;
        std::memcpy(handle.data(), info.ipc, handle.size());
        peer_ipc_.emplace_back(handle, device, r.pe, peer);
        base = peer_ipc_.back().get();
      }
      peer_bases_[static_cast<std::size_t>(peer)] = base;
    }

    // Kernels read the base table: pinned host memory mapped into the device. On every platform
    // with unified addressing (all that CUDA 12 supports) its device address is its host address,
    // so host code reading Context::peer_base works too.
    table_ = PinnedMapped(n * sizeof(char*), device, r.pe);
    if (table_.device() != table_.host()) {
      throw Error(ErrorCode::backend, r.pe,
                  "pinned host memory has different host and device addresses (no unified "
                  "addressing); the cuda backend needs it");
    }
    std::memcpy(table_.host(), peer_bases_.data(), n * sizeof(char*));
  }

  ~CudaHeapSegment() override { release(); }

  char* const* device_peer_table() const override {
    return static_cast<char* const*>(table_.device());
  }
  std::size_t bytes() const override { return bytes_; }
  const char* kind() const override { return use_vmm_ ? "cuMem VMM" : "cudaMalloc + IPC"; }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    cuda::copy(dst, src, bytes, device_, pe_);
  }
  void zero(void* dst, std::size_t bytes) override { cuda::zero(dst, bytes, device_, pe_); }

  void release() noexcept override {
    std::fill(peer_bases_.begin(), peer_bases_.end(), nullptr);
    if (table_.host() != nullptr) {
      std::memset(table_.host(), 0, peer_bases_.size() * sizeof(char*));
    }
    peer_mappings_.clear();  // unmap before the imported handles go
    peer_allocations_.clear();
    peer_ipc_.clear();
    own_mapping_ = VmmMapping();
    allocation_ = VmmAllocation();
    memory_ = DeviceMemory();
    base_ = nullptr;
  }

 private:
  int device_;
  int pe_;
  bool use_vmm_ = false;
  std::size_t bytes_ = 0;
  char* base_ = nullptr;
  VmmAllocation allocation_;  // VMM path
  VmmMapping own_mapping_;
  DeviceMemory memory_;  // fallback path
  std::vector<VmmAllocation> peer_allocations_;
  std::vector<VmmMapping> peer_mappings_;
  std::vector<IpcMapping> peer_ipc_;
  PinnedMapped table_;
};

}  // namespace

std::unique_ptr<HeapSegment> make_heap_segment(const SegmentRequest& request, int device) {
  return std::make_unique<CudaHeapSegment>(request, device);
}

}  // namespace tessera::detail::cuda
