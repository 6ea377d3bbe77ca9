// The VMM heap over the CUDA driver's cuMem calls (runtime/cuda_driver.hpp).
#include <utility>
#include <vector>

#include "gpu/vmm_heap.hpp"
#include "runtime/cuda_driver.hpp"
#include "tessera/error.hpp"

namespace tessera::detail::cuda {
namespace {

// One PE's segment as mapped in some process: its allocations (1 or 2) in one reservation laid
// out by vmm_layout.
struct Mapped {
  std::vector<VmmAllocation> allocations;
  VmmMapping mapping;

  // Maps `allocations` (the heap's, then the control area's when split) as `layout` says.
  void map(const VmmLayout& layout, int device, int pe, int owner_pe) {
    if (layout.split()) {
      mapping = VmmMapping(
          layout.reserved,
          {{&allocations[0], layout.lead}, {&allocations[1], layout.lead + layout.control_offset}},
          device, pe, owner_pe);
    } else {
      mapping = VmmMapping(allocations[0], device, pe, owner_pe);
    }
  }
  char* base(const VmmLayout& layout) const { return mapping.base() + layout.lead; }
  void reset() noexcept {
    mapping = VmmMapping();  // unmap before the handles go
    allocations.clear();
  }
};

class CudaVmmHeap final : public VmmHeap {
 public:
  CudaVmmHeap(const VmmLayout& layout, int device, int pe) : layout_(layout) {
    own_.allocations.push_back(VmmAllocation::create(layout_.heap_bytes, device, pe));
    if (layout_.split()) {
      own_.allocations.push_back(VmmAllocation::create(layout_.control_bytes, device, pe));
    }
    own_.map(layout_, device, pe, pe);
  }
  ~CudaVmmHeap() override {
    close_peers();
    own_.reset();
  }
  char* base() const override { return own_.base(layout_); }
  std::size_t bytes() const override { return layout_.segment_bytes(); }
  const VmmLayout& layout() const override { return layout_; }
  std::vector<Fd> export_fds() const override {
    std::vector<Fd> fds;
    for (const VmmAllocation& a : own_.allocations) fds.push_back(a.export_fd());
    return fds;
  }
  char* map_peer(const std::vector<int>& fds, int device, int pe, int owner_pe) override {
    if (fds.size() != own_.allocations.size()) {
      throw Error(ErrorCode::internal, pe,
                  "GPU heap: PE " + std::to_string(owner_pe) + " exported " +
                      std::to_string(fds.size()) + " allocations, this PE " +
                      std::to_string(own_.allocations.size()));
    }
    Mapped& peer = peers_.emplace_back();
    for (std::size_t i = 0; i < fds.size(); ++i) {
      peer.allocations.push_back(
          VmmAllocation::import_fd(fds[i], own_.allocations[i].bytes(), pe, owner_pe));
    }
    peer.map(layout_, device, pe, owner_pe);
    return peer.base(layout_);
  }
  void close_peers() noexcept override {
    for (Mapped& peer : peers_) peer.reset();
    peers_.clear();
  }

 private:
  VmmLayout layout_;
  Mapped own_;
  std::vector<Mapped> peers_;
};

}  // namespace

bool vmm_heap_supported(int device) { return vmm_supported(device); }

std::size_t vmm_heap_granularity(int device, int pe) { return vmm_granularity(device, pe); }

int vmm_gpudirect_rdma(int device) { return vmm_rdma_supported(device) ? 1 : 0; }

std::unique_ptr<VmmHeap> make_vmm_heap(const VmmLayout& layout, int device, int pe) {
  return std::make_unique<CudaVmmHeap>(layout, device, pe);
}

}  // namespace tessera::detail::cuda
