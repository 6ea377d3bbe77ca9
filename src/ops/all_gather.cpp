// Host launcher of the all-gather: argument checks, per-buffer signal words and epochs, and the
// one-block kernel that runs the device building block on the stream.
#include "tessera/ops/all_gather.hpp"

#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "ops/all_gather_launch.hpp"
#include "ops/heap_fill.hpp"
#include "runtime/op_support.hpp"
#include "tessera/device/ops/all_gather.hpp"
#include "tessera/launch.hpp"

namespace tessera::ops {
namespace {

namespace td = tessera::device;

// The signal words and call count of one (recv offset, bytes_per_pe) pair. The blocks stay
// allocated until finalize, which frees the whole heap.
struct Pair {
  // AllGatherSignals::kWordsPerPe * n_pes signal words, then the DeviceEpoch of the calls: the
  // kernel numbers each call on the device, so a captured call replays as a new one.
  std::uint64_t* words = nullptr;
  std::uint8_t* staging = nullptr;  // 2 * n_pes * bytes, for one-shot calls of small contributions
};

// The pairs used so far on one Runtime: its op state (OpCache), gone at its finalize.
class Pairs {
 public:
  // The pair's state, or null when this is its first call.
  Pair* find(std::size_t offset, std::size_t bytes) {
    std::lock_guard lock(mu_);
    auto it = pairs_.find(Key{offset, bytes});
    return it == pairs_.end() ? nullptr : it->second.get();
  }

  Pair* insert(std::size_t offset, std::size_t bytes, std::unique_ptr<Pair> pair) {
    std::lock_guard lock(mu_);
    auto& slot = pairs_[Key{offset, bytes}];
    slot = std::move(pair);
    return slot.get();
  }

 private:
  struct Key {
    std::size_t offset;
    std::size_t bytes;
    auto operator<=>(const Key&) const = default;
  };
  std::mutex mu_;
  std::map<Key, std::unique_ptr<Pair>> pairs_;
};

[[noreturn]] void fail(int pe, const std::string& message) {
  throw Error(ErrorCode::invalid_argument, pe, "all_gather: " + message);
}

void check_arguments(Runtime& rt, const void* send, const void* recv, std::size_t bytes) {
  const int pe = rt.pe();
  const auto n = static_cast<std::size_t>(rt.n_pes());
  if (bytes == 0) fail(pe, "bytes_per_pe must be at least 1, got 0");
  if (send == nullptr) fail(pe, "send is null");
  if (recv == nullptr || !rt.in_heap(recv)) {
    fail(pe, "recv must point into the symmetric heap (allocate it with Runtime::malloc/alloc)");
  }
  const std::size_t left = detail::bytes_left_in_block(rt, recv);
  if (left == 0) fail(pe, "recv is not inside a live symmetric heap block (freed?)");
  if (bytes > left / n) {
    fail(pe, "recv too small: needs n_pes * bytes_per_pe = " + std::to_string(n) + " * " +
                 std::to_string(bytes) + " bytes, the heap block holds " + std::to_string(left) +
                 " bytes from recv");
  }
}

// First call on a pair: every PE must pass the same recv offset and bytes_per_pe.
void check_agreement(Runtime& rt, std::size_t offset, std::size_t bytes) {
  // First that every PE is making this call (and not another collective), then its arguments.
  detail::check_op_call(rt, "ops::all_gather (first call on its recv buffer)", "all_gather");
  struct Args {
    std::uint64_t offset, bytes;
  };
  std::vector<Args> all(static_cast<std::size_t>(rt.n_pes()));
  all[static_cast<std::size_t>(rt.pe())] = {offset, bytes};
  rt.bootstrap().allgather(all.data(), sizeof(Args));
  std::string disagreement;
  for (std::size_t p = 0; p < all.size(); ++p) {
    if (all[p].offset == offset && all[p].bytes == bytes) continue;
    disagreement += " PE " + std::to_string(p) + " passed recv heap offset " +
                    std::to_string(all[p].offset) + ", bytes_per_pe " +
                    std::to_string(all[p].bytes) + ";";
  }
  if (!disagreement.empty()) {
    fail(rt.pe(), "PEs disagree: this PE passed recv heap offset " + std::to_string(offset) +
                      ", bytes_per_pe " + std::to_string(bytes) + ";" + disagreement);
  }
}

AllGatherAlgo algo_from_env(int pe) {
  const char* text = std::getenv("TESSERA_ALLGATHER_ALGO");
  if (text == nullptr || *text == '\0') return AllGatherAlgo::automatic;
  const std::string value(text);
  if (value == "oneshot") return AllGatherAlgo::oneshot;
  if (value == "ring") return AllGatherAlgo::ring;
  if (value == "auto" || value == "automatic") return AllGatherAlgo::automatic;
  throw Error(ErrorCode::invalid_argument, pe,
              "TESSERA_ALLGATHER_ALGO must be oneshot, ring or auto, got '" + value + "'");
}

// Whether the one-shot of this buffer goes through a staging area (kAllGatherStagedMax). Not with
// two PEs: there the entry handshake the staging saves is one signal each way, overlapped, while
// the copy out of staging is a second pass over the bytes (2 PEs, 64 KiB per PE, measured under
// mpirun: staged 4.9 us a call, written straight into recv 2.4 us).
bool stages_one_shot(std::size_t bytes_per_pe, int n_pes) {
  return bytes_per_pe <= kAllGatherStagedMax && n_pes > 2;
}

struct AllGatherKernel {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, void* recv, const void* send,
                                      std::size_t bytes, td::ops::AllGatherSignals sigs,
                                      td::DeviceEpoch calls, bool ring, void* staging) const {
    const std::uint64_t call = calls.next(blk);
    if (ring) {
      td::ops::all_gather_ring(blk, ctx, recv, send, bytes, kAllGatherRingChunk, sigs, call);
    } else if (staging != nullptr) {
      td::ops::all_gather_staged(blk, ctx, recv, send, bytes, staging, sigs, call);
    } else {
      td::ops::all_gather_oneshot(blk, ctx, recv, send, bytes, sigs, call);
    }
  }
};

}  // namespace

const char* to_string(AllGatherAlgo algo) noexcept {
  switch (algo) {
    case AllGatherAlgo::automatic:
      return "automatic";
    case AllGatherAlgo::oneshot:
      return "oneshot";
    case AllGatherAlgo::ring:
      return "ring";
  }
  return "?";
}

AllGatherAlgo resolve_all_gather_algo(std::size_t bytes_per_pe, AllGatherAlgo algo) {
  if (algo != AllGatherAlgo::automatic) return algo;
  algo = algo_from_env(-1);
  if (algo != AllGatherAlgo::automatic) return algo;
  return bytes_per_pe < kAllGatherRingThreshold ? AllGatherAlgo::oneshot : AllGatherAlgo::ring;
}

void all_gather(Runtime& rt, Stream& stream, const void* send, void* recv, std::size_t bytes_per_pe,
                AllGatherAlgo algo) {
  check_arguments(rt, send, recv, bytes_per_pe);
  const std::size_t offset = rt.heap_offset(recv);
  Pairs& pairs = detail::op_cache(rt).get<Pairs>();
  Pair* pair = pairs.find(offset, bytes_per_pe);
  if (pair == nullptr) {
    detail::refuse_capture(stream, "all_gather",
                           "is the first on its recv buffer (heap offset " +
                               std::to_string(offset) + ", bytes_per_pe " +
                               std::to_string(bytes_per_pe) +
                               "): it checks that every PE agrees and allocates the buffer's "
                               "signal words");
    check_agreement(rt, offset, bytes_per_pe);
    auto fresh = std::make_unique<Pair>();
    const std::size_t words =
        td::ops::AllGatherSignals::kWordsPerPe * static_cast<std::size_t>(rt.n_pes()) +
        td::DeviceEpoch::kWords;
    fresh->words = static_cast<std::uint64_t*>(rt.malloc(words * sizeof(std::uint64_t)));
    detail::zero_heap(rt, fresh->words, words * sizeof(std::uint64_t));
    if (stages_one_shot(bytes_per_pe, rt.n_pes())) {
      fresh->staging = static_cast<std::uint8_t*>(
          rt.malloc(2 * static_cast<std::size_t>(rt.n_pes()) * bytes_per_pe));
    }
    // No peer may signal into the words before every PE has zeroed its own.
    rt.barrier();
    pair = pairs.insert(offset, bytes_per_pe, std::move(fresh));
  }
  AllGatherAlgo chosen = algo;
  if (chosen == AllGatherAlgo::automatic) {
    chosen = algo_from_env(rt.pe());
    if (chosen == AllGatherAlgo::automatic) chosen = resolve_all_gather_algo(bytes_per_pe, algo);
  }
  const auto sigs = td::ops::AllGatherSignals::from_words(pair->words, rt.n_pes());
  const td::DeviceEpoch calls{pair->words + td::ops::AllGatherSignals::kWordsPerPe *
                                                static_cast<std::size_t>(rt.n_pes())};
  detail::launch_all_gather(rt, stream, recv, send, bytes_per_pe, sigs, calls,
                            chosen == AllGatherAlgo::ring, static_cast<void*>(pair->staging));
}

}  // namespace tessera::ops

namespace tessera::detail {

void launch_all_gather(Runtime& rt, Stream& stream, void* recv, const void* send, std::size_t bytes,
                       const device::ops::AllGatherSignals& sigs, device::DeviceEpoch calls,
                       bool ring, void* staging) {
  launch(stream, 1, ops::AllGatherKernel{}, rt.device_context(), recv, send, bytes, sigs, calls,
         ring, staging);
}

}  // namespace tessera::detail
