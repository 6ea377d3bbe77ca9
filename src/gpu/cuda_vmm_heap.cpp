// The VMM heap over the CUDA driver's cuMem calls (runtime/cuda_driver.hpp).
#include <utility>
#include <vector>

#include "gpu/vmm_heap.hpp"
#include "runtime/cuda_driver.hpp"

namespace tessera::detail::cuda {
namespace {

class CudaVmmHeap final : public VmmHeap {
 public:
  CudaVmmHeap(std::size_t bytes, int device, int pe) {
    const std::size_t g = vmm_granularity(device, pe);
    allocation_ = VmmAllocation::create((bytes + g - 1) / g * g, device, pe);
    mapping_ = VmmMapping(allocation_, device, pe, pe);
  }
  ~CudaVmmHeap() override {
    close_peers();
    mapping_ = VmmMapping();  // unmap before the handle goes
    allocation_ = VmmAllocation();
  }
  char* base() const override { return mapping_.base(); }
  std::size_t bytes() const override { return allocation_.bytes(); }
  Fd export_fd() const override { return allocation_.export_fd(); }
  char* map_peer(int fd, std::size_t bytes, int device, int pe, int owner_pe) override {
    VmmAllocation imported = VmmAllocation::import_fd(fd, bytes, pe, owner_pe);
    peer_mappings_.emplace_back(imported, device, pe, owner_pe);
    peer_allocations_.push_back(std::move(imported));
    return peer_mappings_.back().base();
  }
  void close_peers() noexcept override {
    peer_mappings_.clear();  // unmap before the imported handles go
    peer_allocations_.clear();
  }

 private:
  VmmAllocation allocation_;
  VmmMapping mapping_;
  std::vector<VmmAllocation> peer_allocations_;
  std::vector<VmmMapping> peer_mappings_;
};

}  // namespace

bool vmm_heap_supported(int device) { return vmm_supported(device); }

int vmm_gpudirect_rdma(int device) { return vmm_rdma_supported(device) ? 1 : 0; }

std::unique_ptr<VmmHeap> make_vmm_heap(std::size_t bytes, int device, int pe) {
  return std::make_unique<CudaVmmHeap>(bytes, device, pe);
}

}  // namespace tessera::detail::cuda
