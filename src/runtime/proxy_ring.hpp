// Memory for the ring through which device code hands operations on unreachable peers to this
// PE's network proxy thread (DESIGN §4, §6). Allocated at init so the ring exists before any
// kernel runs: pinned host memory mapped into the device (cudaHostAllocMapped) on the cuda
// backend, so a kernel writes descriptors with plain stores that the proxy thread polls; ordinary
// host memory on the host backend. Only device code pushes on this ring (the device lane); host
// calls use the proxy's separate host lane (src/transport/proxy_engine.cpp). Internal.
#pragma once

#include <cstddef>
#include <memory>

namespace tessera::detail {

struct ProxyRing {
  // 1024 descriptors of 64 bytes: enough to keep a NIC busy, small enough to pin cheaply.
  static constexpr std::size_t kBytes = std::size_t{64} << 10;

  void* host = nullptr;    // where the proxy thread reads it
  void* device = nullptr;  // where device code writes it (== host on the host backend)
  std::size_t bytes = 0;
  std::shared_ptr<void> owner;  // frees the memory
};

// Zeroed ordinary host memory.
ProxyRing make_host_proxy_ring(std::size_t bytes);

}  // namespace tessera::detail
