// Runtime::check_device_failure: the host's side of the failure record (device/failure_record.hpp)
// that kernels which cannot throw leave in the control area.
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/failure_code.hpp"
#include "runtime/runtime_access.hpp"
#include "runtime/runtime_impl.hpp"
#include "tessera/device/device.hpp"
#include "tessera/device/impl/failure_record_funcs.hpp"
#include "tessera/runtime.hpp"

namespace tessera {

using device::FailureRecord;

void Runtime::check_device_failure() {
  auto& rt = detail::RuntimeAccess::impl(*this);
  if (rt.finalized_) rt.fail(ErrorCode::invalid_argument, "check_device_failure after finalize");
  device::Context ctx = device_context();
  std::uint64_t* record = ctx.failure_record();
  const bool host_memory = rt.backend_ == Backend::host;
  // GPU backends: the control area is device memory; the diagnostic is built from host copies of
  // the record, the barrier words and the allocation table, seen through a host Context.
  std::vector<std::uint64_t> copy(FailureRecord::kWords);
  if (host_memory) {
    for (std::size_t i = 0; i < copy.size(); ++i) {
      copy[i] = device::platform::atomic_load(
          &record[i], i == FailureRecord::kState ? device::Sem::acquire : device::Sem::relaxed,
          device::Scope::system);
    }
  } else {
    rt.segment_->copy(copy.data(), record, copy.size() * sizeof(std::uint64_t));
  }
  if (copy[FailureRecord::kState] != FailureRecord::kComplete) {
    const std::uint64_t word = rt.abort_word();
    if (word != 0 && device::abort_pe(word) != rt.pe_) {
      device::detail::Message m;
      device::detail::describe_abort(m, rt.pe_, "check_device_failure", word);
      throw Error(ErrorCode::peer_lost, rt.pe_, m.c_str());
    }
    return;
  }
  std::vector<std::uint64_t> control;
  std::vector<std::uint64_t> table;
  if (!host_memory) {
    control.resize(device::Context::kBarrierWordsBytes / sizeof(std::uint64_t));
    rt.segment_->copy(control.data(), ctx.control_page, device::Context::kBarrierWordsBytes);
    // The entries are in pinned host memory: the header is rebuilt to point at their host view.
    table = rt.heap_->host_table_header();
    ctx.peer_base = rt.peer_base_.data();
    ctx.proxy =
        ctx.proxy != nullptr ? static_cast<device::ProxyChannel*>(rt.proxy_ring_.host) : nullptr;
    ctx.control_page = control.data();
    ctx.allocations = table.data();
  }
  device::detail::Message m;
  device::FailureCode code = device::FailureCode::timeout;
  const bool known = device::detail::describe_failure_record(m, ctx, copy.data(), code);
  // Reported once: the record is free for the next failure.
  const std::vector<std::uint64_t> zeros(FailureRecord::kWords, 0);
  if (host_memory) {
    for (std::size_t i = FailureRecord::kWords; i-- > 0;) {
      device::platform::atomic_store(&record[i], std::uint64_t{0}, device::Sem::release,
                                     device::Scope::system);
    }
  } else {
    rt.segment_->copy(record, zeros.data(), zeros.size() * sizeof(std::uint64_t));
  }
  const int failed_pe = static_cast<int>(copy[FailureRecord::kPe]);
  throw Error(known ? detail::error_code(code) : ErrorCode::internal,
              failed_pe >= 0 && failed_pe < rt.n_pes_ ? failed_pe : rt.pe_, m.c_str());
}

}  // namespace tessera
