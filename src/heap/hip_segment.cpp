// The hip backend's heap: fine-grained device memory per PE, shared with the PEs of the node.
//
// Fine-grained (hipExtMallocWithFlags(hipDeviceMallocFinegrained)) because coarse-grained memory
// is coherent only at kernel boundaries: system-scope atomics and signals from a peer GPU or the
// proxy thread would not be seen during a kernel. Each PE exports its allocation with
// hipIpcGetMemHandle; the handles travel in a bootstrap allgather, and each node-local peer in
// another process opens them with hipIpcOpenMemHandle. PEs that are threads of one process and
// share a device use each other's pointers directly. A peer whose device this PE cannot reach
// (no P2P over xGMI/PCIe) keeps a null base: the proxy path. Several PEs may share one GPU (a
// one-GPU machine runs its PEs as processes on device node_pe % devices).
//
// Only the wrappers of runtime/hip_runtime.hpp are used here; no HIP header is included.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "heap/heap_segment.hpp"
#include "runtime/hip_backend.hpp"
#include "runtime/hip_runtime.hpp"
#include "tessera/error.hpp"

namespace tessera::detail::hip {
namespace {

// What each PE tells the others about its heap.
struct SegmentInfo {
  unsigned char uuid[16];  // its device
  std::uint64_t pid;       // its process (threads of one process share pointers)
  std::uint64_t base;      // its heap's address in its own process
  std::uint64_t bytes;     // its segment size
  char ipc[64];            // hipIpcMemHandle_t
};

class HipHeapSegment final : public HeapSegment {
 public:
  HipHeapSegment(const SegmentRequest& r, int device) : device_(device), pe_(r.pe) {
    const auto n = static_cast<std::size_t>(r.n_pes);
    std::vector<SegmentInfo> infos(n);
    SegmentInfo& mine = infos[static_cast<std::size_t>(r.pe)];
    std::memset(&mine, 0, sizeof(mine));
    const Uuid uuid = device_uuid(device, r.pe);
    std::memcpy(mine.uuid, uuid.data(), uuid.size());
    mine.pid = static_cast<std::uint64_t>(::getpid());

    // This PE's memory, zeroed (the runtime's control area must start at zero).
    bytes_ = r.bytes;
    memory_ = FineGrainedMemory(bytes_, device, r.pe);
    base_ = memory_.get();
    hip::zero(base_, bytes_, device, r.pe);
    mine.base = reinterpret_cast<std::uintptr_t>(base_);
    mine.bytes = bytes_;
    const IpcHandle handle = memory_.ipc_handle();
    std::memcpy(mine.ipc, handle.data(), handle.size());
    r.bootstrap.allgather(infos.data(), sizeof(SegmentInfo));

    peer_bases_.assign(n, nullptr);
    peer_bases_[static_cast<std::size_t>(r.pe)] = base_;
    for (const int peer : r.node_pes) {
      if (peer == r.pe) continue;
      const SegmentInfo& info = infos[static_cast<std::size_t>(peer)];
      if (info.bytes != bytes_) {
        throw Error(ErrorCode::internal, r.pe,
                    "hip heap: PE " + std::to_string(peer) + "'s segment is " +
                        std::to_string(info.bytes) + " bytes, this PE's " + std::to_string(bytes_));
      }
      Uuid peer_uuid;
      std::memcpy(peer_uuid.data(), info.uuid, peer_uuid.size());
      const int peer_device = peer_uuid == uuid ? device : device_with_uuid(peer_uuid);
      if (peer_device < 0 || !can_access_peer(device, peer_device)) continue;  // proxy path
      char* base = nullptr;
      if (info.pid == mine.pid) {
        // Another thread of this process (HIP refuses to open its own process's IPC handles):
        // on the same device its pointer is valid here; on another device it stays unmapped.
        if (peer_device == device)
          base = reinterpret_cast<char*>(static_cast<std::uintptr_t>(info.base));
      } else {
        IpcHandle peer_handle;
        std::memcpy(peer_handle.data(), info.ipc, peer_handle.size());
        peer_ipc_.emplace_back(peer_handle, device, r.pe, peer);
        base = peer_ipc_.back().get();
      }
      peer_bases_[static_cast<std::size_t>(peer)] = base;
    }

    // Kernels read the base table from pinned host memory mapped into the device. ROCm gives it
    // the same address on both sides (unified addressing), so host code reading
    // Context::peer_base works too.
    table_ = PinnedMapped(n * sizeof(char*), device, r.pe);
    if (table_.device() != table_.host()) {
      throw Error(ErrorCode::backend, r.pe,
                  "pinned host memory has different host and device addresses (no unified "
                  "addressing); the hip backend needs it");
    }
    std::memcpy(table_.host(), peer_bases_.data(), n * sizeof(char*));
  }

  ~HipHeapSegment() override { release(); }

  char* const* device_peer_table() const override {
    return static_cast<char* const*>(table_.device());
  }
  std::size_t bytes() const override { return bytes_; }
  const char* kind() const override { return "hipExtMallocWithFlags(fine-grained) + IPC"; }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    hip::copy(dst, src, bytes, device_, pe_);
  }
  void zero(void* dst, std::size_t bytes) override { hip::zero(dst, bytes, device_, pe_); }

  void release() noexcept override {
    std::fill(peer_bases_.begin(), peer_bases_.end(), nullptr);
    if (table_.host() != nullptr) {
      std::memset(table_.host(), 0, peer_bases_.size() * sizeof(char*));
    }
    peer_ipc_.clear();  // close the peers' memory before freeing this PE's
    memory_ = FineGrainedMemory();
    base_ = nullptr;
  }

 private:
  int device_;
  int pe_;
  std::size_t bytes_ = 0;
  char* base_ = nullptr;
  FineGrainedMemory memory_;
  std::vector<IpcMapping> peer_ipc_;
  PinnedMapped table_;
};

}  // namespace

std::unique_ptr<HeapSegment> make_heap_segment(const SegmentRequest& request, int device) {
  return std::make_unique<HipHeapSegment>(request, device);
}

}  // namespace tessera::detail::hip
