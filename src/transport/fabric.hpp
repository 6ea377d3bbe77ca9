// The libfabric transport (DESIGN §6): one RDM endpoint per PE with FI_RMA | FI_ATOMIC, the
// heap registered and its address, key and base exchanged through the bootstrap, and one proxy
// thread per PE that drains the PE's descriptor ring (device/tessera/device/proxy_wire.hpp) into
// fi_write / fi_read / fi_atomic calls and keeps polling the completion queue for the PE's whole
// life, so peers' operations on this PE's heap make progress on manual-progress providers.
// Internal. Made of: the endpoint wrapper (fabric_endpoint.hpp/.cpp, the only file that includes
// <rdma/*.h>), the proxy engine (proxy_engine.cpp: ring drain and operations) and the raw-write
// benchmark helper (fabric_raw_write.cpp).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "runtime/log.hpp"
#include "tessera/bootstrap.hpp"
#include "tessera/device/proxy_wire.hpp"
#include "transport/heap_registration.hpp"
#include "transport/topology.hpp"

namespace tessera::detail {

// What building the transport needs. Building it is collective over `bootstrap`.
struct FabricRequest {
  Bootstrap& bootstrap;
  int pe = 0;
  int n_pes = 1;
  // This PE's segment: the heap, a hole, the control area. The heap and the control words are
  // registered as two regions (SegmentRegions); the hole is in neither. Descriptors address both
  // by segment offset; in this process the control area lies at `control` (on the GPUs' IPC path
  // an allocation of its own, not segment + control_offset).
  char* segment = nullptr;
  std::size_t heap_bytes = 0;      // user heap: [0, heap_bytes)
  std::size_t control_offset = 0;  // control words peers reach: [control_offset, + control_bytes)
  std::size_t control_bytes = 0;
  char* control = nullptr;  // this PE's control page
  // Where the segment lives: GPU memory is registered with FI_HMEM (heap_registration.hpp).
  HeapMemory memory = HeapMemory::host;
  int device = -1;
  device::ProxyChannel* ring = nullptr;  // host address of this PE's ring (zeroed memory)
  std::size_t ring_bytes = 0;
  std::string provider;  // TESSERA_FABRIC_PROVIDER; empty = the best offered
  Placement placement;   // cores for the proxy thread, NICs to prefer
  Timeout timeout;
  Logger log;
};

class FabricTransport {
 public:
  virtual ~FabricTransport() = default;
  // "tcp;ofi_rxm", "shm", ...
  virtual std::string provider() const = 0;
  // The domain (NIC) the endpoint lives on: "lo", "eth0", "mlx5_0", "shm".
  virtual std::string nic() const = 0;
  // Waits (bounded) until every descriptor pushed so far completed; throws the proxy's failure.
  virtual void drain() = 0;
  // A host-side put or get (`op`) through the proxy: one descriptor for `bytes` between local
  // `local` and heap offset `remote_offset` on `pe`, pushed on this PE's ring; returns once it
  // completed (the data landed on `pe`, or is in `local`). Bounded by the job's timeout: throws
  // Error(timeout), or the proxy's failure (PeerLost naming the PE). The caller checked the
  // range against the heap; `bytes` > 0.
  virtual void remote_copy(device::ProxyOp op, int pe, std::uint64_t remote_offset, void* local,
                           std::size_t bytes) = 0;
  // Collective over `bootstrap`: registers this PE's static data segment [base, base + bytes)
  // (host memory; the OpenSHMEM layer's static and global variables) as a second region and
  // learns every PE's, so kProxyStaticData descriptors reach them. Every PE passes the same
  // `bytes` (the caller checked that the PEs' layouts agree). Throws Error(transport) when the
  // registration fails, Error(timeout) when the proxy thread does not take the request in time.
  virtual void register_static_data(Bootstrap& bootstrap, char* base, std::size_t bytes) = 0;
  // Stops the proxy thread. Call once no peer uses this PE's heap (after finalize's barrier).
  virtual void stop() noexcept = 0;
};

// True when this build has libfabric.
bool fabric_available();

// Opens the endpoint, registers the heap, exchanges addresses and starts the proxy thread.
// Throws Error(transport) when no provider offers RDM + RMA + atomics (listing what is offered).
std::unique_ptr<FabricTransport> make_fabric_transport(const FabricRequest& request);

// Microseconds of each of `rounds` fi_write calls of `bytes` from PE `from` to PE `to`, each
// waited for to completion, on a fresh endpoint of the same provider: the bench's limit.
// Collective over `bootstrap`; returns the times on `from`, an empty vector elsewhere.
std::vector<double> fabric_raw_write_times(Bootstrap& bootstrap, const std::string& provider,
                                           int from, int to, std::size_t bytes, int rounds,
                                           Timeout timeout);

}  // namespace tessera::detail
