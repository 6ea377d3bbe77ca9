// Issue 19 item 5: where a benchmark's timed calls spend their time on the host backend, from the
// probes of a build with -DTESSERA_PROFILE_SPLIT=ON (device/tessera/device/platform/host.hpp).
// Around each timed call a SplitTally reads the process's totals; the row then carries, as means
// per timed call on this PE:
//   split_call_us     the call as timed (enqueue to synchronize's return);
//   split_blocks      kernel blocks run;
//   split_kernel_us   the kernels' run: each launch's blocks side by side, launches one after
//                     the other (a block of g adds 1/g of its time);
//   split_copy_us     bulk copies inside them (platform::copy_bytes);
//   split_wait_us     their spinning waits (signals, barriers, grid syncs);
//   split_rest_us     the rest of the kernels: reductions, signals, address arithmetic;
//   split_handoff_us  call - kernel: the host call, the launch, the stream hand-off and
//                     synchronize (with several blocks: also their imbalance).
// Without the probes it adds no field. Only where the kernels run in this process: the host
// backend.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "report.hpp"
#include "tessera/device/platform.hpp"

namespace tessera::bench {

class SplitTally {
 public:
  // Before a timed call.
  void begin() {
    if constexpr (kOn) before_ = now();
  }
  // After it, with its time.
  void end(double call_us) {
    if constexpr (kOn) {
      const Totals after = now();
      for (int p = 0; p < kParts; ++p) {
        sum_.ns[p] += after.ns[p] - before_.ns[p];
        sum_.count[p] += after.count[p] - before_.count[p];
      }
      call_us_ += call_us;
      ++calls_;
    }
  }
  // The split_* fields, when the build has the probes and a call was timed.
  void add_fields(std::vector<Field>& extra) const {
    if (!kOn || calls_ == 0) return;
    const double calls = static_cast<double>(calls_);
    // Per call. The probes' times are exclusive and a block adds its share of its launch's
    // wall time (host.hpp), so the kernel's own part is the rest.
    const auto per_call = [&](Part part) {
      return static_cast<double>(sum_.ns[static_cast<int>(part)]) / 1e3 / calls;
    };
    const double call = call_us_ / calls;
    const double rest = per_call(Part::kernel), c = per_call(Part::copy), w = per_call(Part::wait);
    const double kernel = rest + c + w;
    extra.push_back({"split_call_us", call});
    extra.push_back(
        {"split_blocks", static_cast<double>(sum_.count[static_cast<int>(Part::kernel)]) / calls});
    extra.push_back({"split_kernel_us", kernel});
    extra.push_back({"split_copy_us", c});
    extra.push_back({"split_wait_us", w});
    extra.push_back({"split_rest_us", rest});
    extra.push_back({"split_handoff_us", call - kernel});
  }

 private:
  using Part = device::platform::SplitPart;
  static constexpr bool kOn = device::platform::kSplitProbes;
  static constexpr int kParts = device::platform::kSplitParts;
  struct Totals {
    std::uint64_t ns[kParts] = {};
    std::uint64_t count[kParts] = {};
  };
  static Totals now() {
    Totals t;
    for (int p = 0; p < kParts; ++p) {
      t.ns[p] = device::platform::split_totals.ns[p].load(std::memory_order_relaxed);
      t.count[p] = device::platform::split_totals.count[p].load(std::memory_order_relaxed);
    }
    return t;
  }
  Totals before_, sum_;
  double call_us_ = 0;
  std::uint64_t calls_ = 0;
};

}  // namespace tessera::bench
