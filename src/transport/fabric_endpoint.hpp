// The libfabric endpoint wrapper (DESIGN §6): one RDM endpoint with FI_RMA | FI_ATOMIC, its CQ
// and AV, a registered segment (heap and control page, two regions) whose address, keys and
// base every PE learnt through the bootstrap, and the posting and completion calls the proxy engine
// (proxy_engine.cpp) and the raw-write benchmark (fabric_raw_write.cpp) make. This header says
// nothing of libfabric's types; fabric_endpoint.cpp is the only file that includes <rdma/*.h>.
// Internal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "tessera/bootstrap.hpp"
#include "tessera/device/proxy_wire.hpp"
#include "transport/heap_registration.hpp"
#include "transport/topology.hpp"

namespace tessera::detail {

// Room for the provider's per-operation context (libfabric's fi_context2), which the provider
// owns while the operation runs; completions hand its address back. Put it first in the record
// of an operation, so that address is the record's.
struct alignas(8) FabricOpContext {
  void* provider[8];
};

// A registration of local memory; closed on destruction.
class FabricRegion {
 public:
  explicit FabricRegion(void* mr) : mr_(mr) {}
  FabricRegion(const FabricRegion&) = delete;
  FabricRegion& operator=(const FabricRegion&) = delete;
  ~FabricRegion();
  // Its descriptor, for the local side of an operation.
  void* desc() const;

 private:
  void* mr_;
};

// What one read of the completion queue found.
struct FabricCompletions {
  enum Kind {
    done,         // `count` contexts were read
    none,         // nothing yet (or a blocking read's bound passed)
    wait_failed,  // the CQ's wait object does not work as hoped (`text`): poll instead
    op_failed,    // an operation failed: `failed_context`, `connection_lost`, `text`
    read_failed,  // the CQ could not be read (`text`)
  };
  Kind kind = none;
  int count = 0;
  void* failed_context = nullptr;
  bool connection_lost = false;  // the failure means the peer is gone or unreachable
  std::string text;
};

// Which registered segment of the target PE a remote offset is in: its heap segment (the heap
// and the control page, each its own registration: SegmentRegions), or its static data segment (the
// OpenSHMEM layer's static and global variables), which register_static_data adds after the
// endpoint is built.
enum class RemoteRegion { heap, static_data };

class FabricEndpoint {
 public:
  // Opens the endpoint on `provider` (empty: the best offered, nearest `placement`'s NICs),
  // registers the `regions` of this PE's segment (its heap at `segment`, and its control page at
  // `control` when `regions` has one) as `heap` says and exchanges addresses and keys.
  // Collective over `bootstrap`. Throws Error(transport) when no provider offers RDM + RMA +
  // atomics.
  FabricEndpoint(Bootstrap& bootstrap, int pe, int n_pes, const std::string& provider,
                 char* segment, char* control, const SegmentRegions& regions,
                 const Placement* placement, const HeapRegistration& heap = HeapRegistration{});
  FabricEndpoint(const FabricEndpoint&) = delete;
  FabricEndpoint& operator=(const FabricEndpoint&) = delete;
  ~FabricEndpoint();

  // Registers local [p, p + bytes) in host memory; `bind_ep` when the provider asks for
  // FI_MR_ENDPOINT (mr_endpoint()).
  std::unique_ptr<FabricRegion> register_region(void* p, std::size_t bytes, std::uint64_t key,
                                                bool bind_ep);
  // The same in the memory `where` names (fi_mr_regattr with FI_HMEM_CUDA/ROCR for GPU memory).
  std::unique_ptr<FabricRegion> register_region(void* p, std::size_t bytes, std::uint64_t key,
                                                bool bind_ep, const HeapRegistration& where);
  // The descriptor of local memory [p, p + bytes): the heap's or the static data's registration,
  // or null (no FI_MR_LOCAL, or outside both).
  void* local_desc(const void* p, std::size_t bytes) const;

  // Registers this PE's static data segment [p, p + bytes) (host memory) as the second remotely
  // accessible region and returns its key, which the other PEs pass to set_static_peer. Once.
  std::uint64_t register_static_data(void* p, std::size_t bytes);
  // PE `pe`'s static data region: its key and its base address.
  void set_static_peer(int pe, std::uint64_t key, std::uint64_t base);

  // --- posting: each returns 0, a value again(rc) answers true for (retry later), or an error
  // (error_text, connection_lost). Remote addresses are offsets in `region` (the heap unless
  // told) on `pe`.
  int write(FabricOpContext* context, const void* local, std::size_t bytes, void* desc, int pe,
            std::uint64_t remote_offset, RemoteRegion region = RemoteRegion::heap);
  int read(FabricOpContext* context, void* local, std::size_t bytes, void* desc, int pe,
           std::uint64_t remote_offset, RemoteRegion region = RemoteRegion::heap);
  int atomic(FabricOpContext* context, const void* operand, void* desc, int pe,
             std::uint64_t remote_offset, device::ProxyWord word, device::ProxyAmo amo,
             RemoteRegion region = RemoteRegion::heap);
  int fetch_atomic(FabricOpContext* context, const void* operand, void* result, void* desc, int pe,
                   std::uint64_t remote_offset, device::ProxyWord word, device::ProxyAmo amo,
                   RemoteRegion region = RemoteRegion::heap);
  int compare_atomic(FabricOpContext* context, const void* operand, const void* compare,
                     void* result, void* desc, int pe, std::uint64_t remote_offset,
                     device::ProxyWord word, RemoteRegion region = RemoteRegion::heap);
  static bool again(int rc);
  static std::string error_text(int rc);
  static bool connection_lost(int rc);

  // --- completions ---
  // Reads up to `max` (<= 32) completions into `contexts`; `block_ms` > 0 first waits up to that
  // long on the CQ's wait object (only when cq_waits()).
  FabricCompletions read_completions(void** contexts, int max, int block_ms);
  // One plain CQ read: 1 when a completion was read, else its status (again(rc), or an error).
  int read_one();
  // Throws Error(transport) naming `what` unless rc is 0.
  void check(int rc, const char* what) const;

  // True when the CQ has a wait object (a blocking read sleeps until the provider has work).
  bool cq_waits() const;
  bool mr_local() const;
  // FI_MR_HMEM: device-memory buffers need a registration and its descriptor (issue 18 item 3).
  bool mr_hmem() const;
  // The provider granted FI_HMEM (asked for when the heap is in GPU memory).
  bool hmem() const;
  bool mr_endpoint() const;
  bool delivery_complete() const;
  std::size_t max_msg() const;
  // "tcp;ofi_rxm", "shm", ...
  std::string provider() const;
  // The domain (NIC): "lo", "eth0", "mlx5_0", "shm".
  std::string nic() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::detail
