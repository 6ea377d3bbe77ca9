// A GPU runtime without a VMM path the heap can use (HIP): every PE takes the IPC exchange.
#include "gpu/vmm_heap.hpp"
#include "tessera/error.hpp"

namespace tessera::detail::TESSERA_GPU_NS {
namespace {

[[noreturn]] void no_vmm_path(int pe) {
  throw Error(ErrorCode::internal, pe,
              std::string("the ") + TESSERA_GPU_NAME_STRING + " heap has no VMM path");
}

}  // namespace

bool vmm_heap_supported(int) { return false; }

std::size_t vmm_heap_granularity(int, int pe) { no_vmm_path(pe); }

int vmm_gpudirect_rdma(int) { return -1; }

std::unique_ptr<VmmHeap> make_vmm_heap(const VmmLayout&, int, int pe) { no_vmm_path(pe); }

}  // namespace tessera::detail::TESSERA_GPU_NS
