#include "runtime/abort_word.hpp"

#include <string>

#include "tessera/device/context.hpp"
#include "tessera/device/platform.hpp"
#include "tessera/error.hpp"

namespace tessera::detail {

namespace platform = device::platform;
using device::Scope;
using device::Sem;

std::uint64_t AbortWord::load() const {
  if (word_ == nullptr || segment_ == nullptr) return 0;
  if (host_memory_) return platform::atomic_load(word_, Sem::acquire, Scope::system);
  std::uint64_t value = 0;
  segment_->copy(&value, word_, sizeof(value));
  return value;
}

void AbortWord::check_not_aborting(int pe, const char* what) const {
  const std::uint64_t word = load();
  if (word == 0) return;
  const int culprit = device::abort_pe(word);
  throw Error(ErrorCode::peer_lost, pe,
              std::string(what) + ": the job is aborting: PE " + std::to_string(culprit) +
                  (device::abort_reason(word) == device::AbortReason::died
                       ? " is lost (its process ended)"
                       : " failed and aborted the job (its own message says why)"));
}

void AbortWord::mark_died(int pe) { mark(device::encode_abort(pe, device::AbortReason::died)); }

void AbortWord::mark_failed(int pe) { mark(device::encode_abort(pe, device::AbortReason::failed)); }

void AbortWord::mark(std::uint64_t value) {
  if (word_ == nullptr || segment_ == nullptr) return;
  if (host_memory_) {
    platform::atomic_compare_exchange(word_, std::uint64_t{0}, value, Sem::acq_rel, Scope::system);
  } else if (load() == 0) {
    segment_->copy(word_, &value, sizeof(value));
  }
}

}  // namespace tessera::detail
