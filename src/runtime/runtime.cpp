// The Runtime facade: the public calls, each checked and forwarded to the state behind it
// (runtime_impl.hpp). The transport queries are in transport/runtime_transport.cpp.
#include "tessera/runtime.hpp"

#include <exception>

#include "runtime/fault_report.hpp"
#include "runtime/runtime_access.hpp"
#include "runtime/runtime_impl.hpp"
#include "tessera/device/platform.hpp"
#include "transport/proxy_remote_copy.hpp"

namespace tessera {
namespace {

detail::RuntimeImpl& impl_of(const Runtime& rt) { return detail::RuntimeAccess::impl(rt); }

}  // namespace

Runtime::Runtime(std::shared_ptr<detail::RuntimeImpl> impl) : impl_(std::move(impl)) {}
Runtime::Runtime(Runtime&&) noexcept = default;
Runtime& Runtime::operator=(Runtime&& o) noexcept {
  if (this != &o) {
    if (impl_) {
      try {
        impl_->finalize();
      } catch (...) {  // a move-assignment cannot throw; the destructor path logs it
      }
    }
    impl_ = std::move(o.impl_);
  }
  return *this;
}
Runtime::~Runtime() {
  if (impl_) {
    try {
      impl_->finalize(std::uncaught_exceptions() == 0);
    } catch (const Error& e) {
      TESSERA_LOG(impl_->log_, warn, "finalize in ~Runtime failed: " << e.message());
    }
  }
}

Runtime Runtime::init(const Options& options) {
  return Runtime(std::make_shared<detail::RuntimeImpl>(options));
}

void Runtime::finalize() {
  if (!impl_) return;
  auto impl = std::move(impl_);
  impl->finalize();
}

int Runtime::pe() const { return impl_of(*this).pe_; }
int Runtime::n_pes() const { return impl_of(*this).n_pes_; }
int Runtime::node_pe() const { return impl_of(*this).node_pe_; }
int Runtime::node_size() const { return impl_of(*this).node_size_; }
int Runtime::node() const { return impl_of(*this).node_; }
Backend Runtime::backend() const { return impl_of(*this).backend_; }
const Options& Runtime::options() const { return impl_of(*this).options_; }
Bootstrap& Runtime::bootstrap() { return *impl_of(*this).bootstrap_; }

void Runtime::barrier() {
  // The bootstrap's own synchronisation orders memory in practice; the fences make the promise
  // independent of how a bootstrap is built.
  device::platform::fence(device::Sem::acq_rel, device::Scope::system);
  // Operations this PE handed to the network proxy complete before the barrier, too.
  auto& rt = impl_of(*this);
  if (rt.finalized_) rt.fail(ErrorCode::invalid_argument, "barrier after finalize");
  if (rt.fabric_) rt.drain_proxy("barrier");
  // Carries the call's kind and sequence number, so a PE that calls barrier while another calls
  // malloc (or finalize) is told so instead of pairing the wrong calls.
  rt.check_collective(detail::CollectiveKind::barrier, "barrier");
  device::platform::fence(device::Sem::acq_rel, device::Scope::system);
}

device::Context Runtime::device_context() const {
  const auto& rt = impl_of(*this);
  device::Context ctx{};
  ctx.my_pe = rt.pe_;
  ctx.n_pes = rt.n_pes_;
  ctx.peer_base = rt.segment_ ? rt.segment_->device_peer_table() : rt.peer_base_.data();
  ctx.heap_size = rt.options_.heap_size;
  // In the device clock's units (ExecutionBackend::device_clock_scale: HIP's wall-clock rate).
  ctx.timeout_ns = static_cast<std::uint64_t>(static_cast<double>(rt.options_.timeout.count()) *
                                              1e6 * rt.execution_->device_clock_scale());
  ctx.flags = rt.options_.checked ? device::kCheckedMode : 0u;
  ctx.control_page = rt.control_page_;
  ctx.proxy = rt.fabric_ ? static_cast<device::ProxyChannel*>(rt.proxy_ring_.device) : nullptr;
  ctx.allocations = rt.heap_->allocation_table();
  ctx.peer_control = rt.segment_ ? rt.segment_->device_control_table() : nullptr;
  ctx.control_offset = rt.control_offset_;
  return ctx;
}

Stream& Runtime::stream() const {
  auto& rt = impl_of(*this);
  if (!rt.stream_) rt.fail(ErrorCode::invalid_argument, "stream() after finalize");
  return *rt.stream_;
}

std::size_t Runtime::heap_size() const { return impl_of(*this).options_.heap_size; }

void* Runtime::malloc(std::size_t bytes, std::size_t align) {
  return impl_of(*this).malloc(bytes, align, detail::CollectiveKind::malloc);
}

void* Runtime::calloc(std::size_t count, std::size_t size, std::size_t align) {
  auto& rt = impl_of(*this);
  if (size != 0 && count > ~std::size_t{0} / size) {
    rt.fail(ErrorCode::invalid_argument,
            "calloc: " + std::to_string(count) + " x " + std::to_string(size) + " bytes overflows");
  }
  void* p = rt.malloc(count * size, align, detail::CollectiveKind::calloc);
  if (p != nullptr) rt.segment_->zero(p, count * size);
  barrier();  // no peer writes into the block before this PE has zeroed it
  return p;
}

void Runtime::free(void* ptr) { impl_of(*this).free(ptr); }

std::size_t Runtime::heap_free_bytes() const { return impl_of(*this).heap_->free_bytes(); }
std::size_t Runtime::heap_largest_free() const { return impl_of(*this).heap_->largest_free(); }

void* Runtime::heap_base() const { return impl_of(*this).base(); }

std::size_t Runtime::heap_offset(const void* ptr) const {
  auto& rt = impl_of(*this);
  rt.check_heap_range(ptr, 1, "heap_offset");
  return rt.heap_offset(ptr);
}

bool Runtime::in_heap(const void* ptr, std::size_t bytes) const {
  return impl_of(*this).in_heap(ptr, bytes);
}

void* Runtime::ptr(const void* local, int pe) const {
  auto& rt = impl_of(*this);
  rt.check_heap_range(local, 1, "ptr");
  if (pe < 0 || pe >= rt.n_pes_) {
    rt.fail(ErrorCode::invalid_argument,
            "ptr: PE " + std::to_string(pe) + " is outside [0, " + std::to_string(rt.n_pes_) + ")");
  }
  char* peer = rt.peer_base_[static_cast<std::size_t>(pe)];
  return peer == nullptr ? nullptr : peer + rt.heap_offset(local);
}

void Runtime::put(void* dst, const void* src, std::size_t bytes, int pe) {
  auto& rt = impl_of(*this);
  const detail::FaultScope scope(rt.pe_, "put (host call)");
  rt.check_allocation(dst, bytes, "put destination");
  if (detail::remote_copy_via_proxy(rt, device::ProxyOp::put, pe, rt.heap_offset(dst),
                                    const_cast<void*>(src), bytes)) {
    return;
  }
  char* remote = rt.peer_address(pe, rt.heap_offset(dst), "put");
  if (bytes > 0) rt.segment_->copy(remote, src, bytes);
}

void Runtime::get(void* dst, const void* src, std::size_t bytes, int pe) {
  auto& rt = impl_of(*this);
  const detail::FaultScope scope(rt.pe_, "get (host call)");
  rt.check_allocation(src, bytes, "get source");
  if (detail::remote_copy_via_proxy(rt, device::ProxyOp::get, pe, rt.heap_offset(src), dst,
                                    bytes)) {
    return;
  }
  const char* remote = rt.peer_address(pe, rt.heap_offset(src), "get");
  if (bytes > 0) rt.segment_->copy(dst, remote, bytes);
}

}  // namespace tessera
