// The Runtime's side of the network transport: which peers go through the proxy, starting it at
// init, and the Runtime's transport queries.
#include <string>

#include "runtime/raw_write_times.hpp"
#include "runtime/runtime_access.hpp"
#include "runtime/runtime_impl.hpp"
#include "tessera/device/proxy_wire.hpp"
#include "transport/fabric.hpp"
#include "transport/proxy_remote_copy.hpp"
#include "transport/topology.hpp"

namespace tessera {

const char* to_string(Transport transport) noexcept {
  switch (transport) {
    case Transport::self:
      return "self";
    case Transport::mapped:
      return "mapped";
    case Transport::proxy:
      return "proxy";
    case Transport::unreachable:
      return "unreachable";
  }
  return "?";
}

namespace detail {

bool RuntimeImpl::network_transport_wanted() const {
  // Every PE decides alike from what all know: the job needs the network when some PE cannot
  // map some other PE (several nodes, or TESSERA_P2P=0).
  const bool needed = n_pes_ > 1 && (!options_.p2p || node_names_.size() > 1);
  const bool threads_job = std::string(bootstrap_->name()) == "threads";
  const bool wanted = options_.fabric == FabricMode::on ||
                      (options_.fabric == FabricMode::automatic && !threads_job);
  return needed && wanted;
}

void RuntimeImpl::start_transport() {
  placement_ = place_pe(node_pe_);
  if (network_transport_wanted()) {
    if (!fabric_available()) {
      TESSERA_LOG(log_, warn,
                  "PEs on other nodes are unreachable: this build has no libfabric, so there is "
                  "no network transport");
    } else {
      // A HIP heap is ROCm memory (FI_HMEM_ROCR), never host memory (issue 18 item 3).
      const HeapMemory heap_memory = backend_ == Backend::cuda  ? HeapMemory::cuda
                                     : backend_ == Backend::hip ? HeapMemory::rocr
                                                                : HeapMemory::host;
      FabricRequest request{*bootstrap_,
                            pe_,
                            n_pes_,
                            base(),
                            options_.heap_size,
                            control_offset_,
                            device::Context::kBarrierWordsBytes,
                            reinterpret_cast<char*>(control_page_),
                            heap_memory,
                            device_,
                            static_cast<device::ProxyChannel*>(proxy_ring_.host),
                            proxy_ring_.bytes,
                            options_.fabric_provider,
                            placement_,
                            options_.timeout,
                            log_};
      fabric_ = make_fabric_transport(request);
    }
  }
  transports_.assign(static_cast<std::size_t>(n_pes_), Transport::unreachable);
  for (int p = 0; p < n_pes_; ++p) {
    auto& t = transports_[static_cast<std::size_t>(p)];
    if (p == pe_) {
      t = Transport::self;
    } else if (peer_base_[static_cast<std::size_t>(p)] != nullptr) {
      t = Transport::mapped;
    } else if (fabric_) {
      t = Transport::proxy;
    }
  }
}

bool remote_copy_via_proxy(RuntimeImpl& rt, device::ProxyOp op, int pe, std::size_t remote_offset,
                           void* local, std::size_t bytes) {
  if (rt.finalized() || !rt.fabric_ || pe < 0 || pe >= rt.n_pes_ ||
      rt.transports_[static_cast<std::size_t>(pe)] != Transport::proxy) {
    return false;
  }
  if (bytes > 0) rt.fabric_->remote_copy(op, pe, remote_offset, local, bytes);
  return true;
}

bool register_static_data_with_proxy(Runtime& runtime, char* base, std::size_t bytes) {
  auto& rt = RuntimeAccess::impl(runtime);
  if (!rt.fabric_) return false;
  rt.fabric_->register_static_data(*rt.bootstrap_, base, bytes);
  return true;
}

std::vector<double> fabric_raw_write_times(Runtime& runtime, int from, int to, std::size_t bytes,
                                           int rounds) {
  auto& rt = RuntimeAccess::impl(runtime);
  const std::string provider = rt.fabric_ ? rt.fabric_->provider() : rt.options_.fabric_provider;
  return fabric_raw_write_times(*rt.bootstrap_, provider, from, to, bytes, rounds,
                                rt.options_.timeout);
}

}  // namespace detail

Transport Runtime::transport(int pe) const {
  const auto& rt = detail::RuntimeAccess::impl(*this);
  if (pe < 0 || pe >= rt.n_pes_) {
    rt.fail(ErrorCode::invalid_argument, "transport: PE " + std::to_string(pe) +
                                             " is outside [0, " + std::to_string(rt.n_pes_) + ")");
  }
  return rt.transports_[static_cast<std::size_t>(pe)];
}

std::string Runtime::fabric_provider() const {
  const auto& rt = detail::RuntimeAccess::impl(*this);
  return rt.fabric_ ? rt.fabric_->provider() : std::string();
}

std::string Runtime::fabric_nic() const {
  const auto& rt = detail::RuntimeAccess::impl(*this);
  return rt.fabric_ ? rt.fabric_->nic() : std::string();
}

std::string Runtime::proxy_cpuset() const {
  return detail::RuntimeAccess::impl(*this).placement_.cpuset;
}

int Runtime::numa_node() const { return detail::RuntimeAccess::impl(*this).placement_.numa_node; }

}  // namespace tessera
