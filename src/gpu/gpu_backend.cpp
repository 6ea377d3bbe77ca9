// A GPU backend (ExecutionBackend) written once over gpu_runtime.hpp: compiled with
// TESSERA_GPU_CUDA it is the cuda backend, with TESSERA_GPU_HIP the hip backend.
#include "gpu/gpu_backend.hpp"

#include <cstdlib>
#include <exception>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gpu/gpu_runtime.hpp"
#include "gpu/gpu_segment.hpp"
#include "gpu/vmm_heap.hpp"
#include "tessera/detail/gpu_kernel_record.hpp"
#include "tessera/detail/gpu_launch.hpp"
#include "tessera/error.hpp"

namespace tessera::detail::TESSERA_GPU_NS {
namespace {

class GpuBackend final : public ExecutionBackend {
 public:
  explicit GpuBackend(int devices) : devices_(devices) {}

  Backend kind() const override { return TESSERA_GPU_RUNTIME == 1 ? Backend::cuda : Backend::hip; }
  bool host_memory() const override { return false; }

  int select_device(int node_pe, int pe) override {
    device_ = node_pe % devices_;
    set_device(device_, pe);
    // Creates the device's primary context now, so a failure names the device here rather than
    // in the first allocation (and the driver calls of the VMM heap find a context).
    check(TESSERA_GPU(Free)(nullptr),
          std::string(TESSERA_GPU_NAME_STRING) + " Free(nullptr) (creating the context of device " +
              std::to_string(device_) + ")",
          pe);
#if defined(TESSERA_GPU_ATTR_WALL_CLOCK_KHZ)
    // platform/hip.hpp's clock_ns() counts s_memrealtime ticks as 10 ns (100 MHz, as on gfx90a
    // and gfx94x); a device whose wall clock runs at another rate gets its deadlines scaled.
    const int khz = device_attribute(TESSERA_GPU_ATTR_WALL_CLOCK_KHZ, device_, 0);
    if (khz > 0) clock_scale_ = static_cast<double>(khz) / 100000.0;
#endif
    return device_;
  }

  double device_clock_scale() const override { return clock_scale_; }

  std::unique_ptr<HeapSegment> make_heap_segment(const SegmentRequest& request) override {
    return TESSERA_GPU_NS::make_heap_segment(request, device_);
  }

  std::unique_ptr<Stream> make_stream(int pe) override {
    return std::make_unique<Stream>(pe, std::make_unique<GpuStream>(device_, pe));
  }

  ProxyRing make_proxy_ring(std::size_t bytes, int pe) override {
    auto memory = std::make_shared<PinnedMapped>(bytes, device_, pe);
    ProxyRing ring;
    ring.host = memory->host();
    ring.device = memory->device();
    ring.bytes = bytes;
    ring.owner = std::move(memory);
    return ring;
  }

 private:
  int devices_;
  int device_ = 0;
  double clock_scale_ = 1.0;
};

// How many blocks of each of this runtime's recorded kernels (gpu_kernel_record.hpp) fit at once
// on one multiprocessor of `device`, at the launch glue's block width; -1 where the query fails.
std::vector<GpuDeviceFacts::Kernel> kernel_residency(int device) {
  std::vector<GpuDeviceFacts::Kernel> out;
  const bool current = TESSERA_GPU(SetDevice)(device) == TESSERA_GPU(Success);
  for (const GpuKernelRecord& k : recorded_gpu_kernels(TESSERA_GPU_RUNTIME)) {
    int blocks = -1;
    if (!current || TESSERA_GPU(OccupancyMaxActiveBlocksPerMultiprocessor)(
                        &blocks, k.entry, kGpuBlockThreads, 0) != TESSERA_GPU(Success)) {
      blocks = -1;
    }
    out.push_back({kernel_display_name(k.type_name), blocks});
  }
  (void)TESSERA_GPU(GetLastError)();
  return out;
}

}  // namespace

std::unique_ptr<ExecutionBackend> make_backend(int devices) {
  return std::make_unique<GpuBackend>(devices);
}

GpuPreflight preflight() {
  GpuPreflight p;
  p.api = TESSERA_GPU_NAME_STRING;
  try {
    p.probe = probe();
    p.block_threads = kGpuBlockThreads;
    // An MPS control daemon listens on a pipe in CUDA_MPS_PIPE_DIRECTORY (default
    // /tmp/nvidia-mps); HIP has no MPS.
    const char* pipes = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
    std::error_code ec;
    p.mps =
        TESSERA_GPU_RUNTIME == 1 &&
        std::filesystem::exists(
            std::filesystem::path(pipes != nullptr ? pipes : "/tmp/nvidia-mps") / "control", ec);
    for (int d = 0; d < p.probe.devices; ++d) {
      GpuDeviceFacts f;
      f.ordinal = d;
      char name[256] = {};
      if (device_name(d, name, sizeof(name)) == TESSERA_GPU(Success)) f.name = name;
      f.mig = f.name.find("MIG") != std::string::npos;
      f.compute_mode = device_attribute(TESSERA_GPU_ATTR_COMPUTE_MODE, d, 0);
      f.cooperative_launch = device_attribute(TESSERA_GPU_ATTR_COOPERATIVE_LAUNCH, d, 0) != 0;
      f.host_native_atomics = device_attribute(TESSERA_GPU_ATTR_HOST_NATIVE_ATOMICS, d, 0) != 0;
      f.multiprocessors = device_attribute(TESSERA_GPU_ATTR_MULTIPROCESSORS, d, 0);
      f.vmm_posix_fd = vmm_heap_supported(d);
      f.vmm_gpudirect_rdma = vmm_gpudirect_rdma(d);
      f.kernels = kernel_residency(d);
#if defined(TESSERA_GPU_ATTR_GPUDIRECT_RDMA)
      f.gpudirect_rdma = device_attribute(TESSERA_GPU_ATTR_GPUDIRECT_RDMA, d, 0) != 0 ? 1 : 0;
#endif
      p.devices.push_back(f);
      for (int peer = 0; peer < p.probe.devices; ++peer) {
        if (peer == d) continue;
        p.pairs.push_back({d, peer, can_access_peer(d, peer), native_peer_atomics(d, peer)});
      }
    }
    (void)TESSERA_GPU(GetLastError)();
  } catch (const std::exception& e) {
    p.probe.devices = 0;
    p.probe.why_none = e.what();
  }
  return p;
}

}  // namespace tessera::detail::TESSERA_GPU_NS
