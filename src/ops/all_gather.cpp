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

#include "ops/heap_fill.hpp"
#include "runtime/runtime_impl.hpp"
#include "tessera/device/ops/all_gather.hpp"
#include "tessera/launch.hpp"

namespace tessera::ops {
namespace {

namespace td = tessera::device;

// The signal words and call counter of one (recv offset, bytes_per_pe) pair of one Runtime.
struct Pair {
  Symmetric<std::uint64_t> words;   // keeps the RuntimeImpl alive, so its address is not reused
  Symmetric<std::uint8_t> staging;  // 2 * n_pes * bytes, for one-shot calls of small contributions
  td::Epoch calls;
};

// Per-Runtime state of every pair used so far. Entries of finalized runtimes are dropped at the
// next call (their words went with the heap). Reachable from a static, never destroyed, so no
// RuntimeImpl is torn down during static destruction.
class PairRegistry {
 public:
  static PairRegistry& get() {
    static auto* registry = new PairRegistry();
    return *registry;
  }

  // The pair's state, or null when this is its first call.
  Pair* find(const detail::RuntimeImpl* rt, std::size_t offset, std::size_t bytes) {
    std::lock_guard lock(mu_);
    for (auto it = pairs_.begin(); it != pairs_.end();) {
      it = it->first.rt->finalized() ? pairs_.erase(it) : std::next(it);
    }
    auto it = pairs_.find(Key{rt, offset, bytes});
    return it == pairs_.end() ? nullptr : it->second.get();
  }

  Pair* insert(const detail::RuntimeImpl* rt, std::size_t offset, std::size_t bytes,
               std::unique_ptr<Pair> pair) {
    std::lock_guard lock(mu_);
    auto& slot = pairs_[Key{rt, offset, bytes}];
    slot = std::move(pair);
    return slot.get();
  }

 private:
  struct Key {
    const detail::RuntimeImpl* rt;
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

// Bytes of the live heap block containing `recv` from `recv` to its end (0: not in a block).
std::size_t bytes_left_in_block(Runtime& rt, const void* recv) {
  detail::RuntimeImpl& impl = rt.impl();
  const std::size_t offset = rt.heap_offset(recv);
  std::lock_guard lock(impl.alloc_mu_);
  const auto block = impl.allocator_.block_containing(offset);
  if (!block) return 0;
  return *block + impl.allocator_.block_size(*block) - offset;
}

void check_arguments(Runtime& rt, const void* send, const void* recv, std::size_t bytes) {
  const int pe = rt.pe();
  const auto n = static_cast<std::size_t>(rt.n_pes());
  if (bytes == 0) fail(pe, "bytes_per_pe must be at least 1, got 0");
  if (send == nullptr) fail(pe, "send is null");
  if (recv == nullptr || !rt.in_heap(recv)) {
    fail(pe, "recv must point into the symmetric heap (allocate it with Runtime::malloc/alloc)");
  }
  const std::size_t left = bytes_left_in_block(rt, recv);
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
  rt.impl().check_collective(detail::CollectiveKind::all_gather_setup, "all_gather");
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

struct AllGatherKernel {
  TESSERA_DEVICE void operator()(td::Block blk, td::Context ctx, void* recv, const void* send,
                                 std::size_t bytes, td::ops::AllGatherSignals sigs,
                                 std::uint64_t call, bool ring, void* staging) const {
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
  detail::RuntimeImpl* impl = &rt.impl();
  const std::size_t offset = rt.heap_offset(recv);
  PairRegistry& registry = PairRegistry::get();
  Pair* pair = registry.find(impl, offset, bytes_per_pe);
  if (pair == nullptr) {
    check_agreement(rt, offset, bytes_per_pe);
    auto fresh = std::make_unique<Pair>();
    const std::size_t words =
        td::ops::AllGatherSignals::kWordsPerPe * static_cast<std::size_t>(rt.n_pes());
    fresh->words = rt.alloc<std::uint64_t>(words);
    detail::zero_heap(rt, fresh->words.get(), words * sizeof(std::uint64_t));
    if (bytes_per_pe <= kAllGatherStagedMax) {
      fresh->staging =
          rt.alloc<std::uint8_t>(2 * static_cast<std::size_t>(rt.n_pes()) * bytes_per_pe);
    }
    // No peer may signal into the words before every PE has zeroed its own.
    rt.barrier();
    pair = registry.insert(impl, offset, bytes_per_pe, std::move(fresh));
  }
  AllGatherAlgo chosen = algo;
  if (chosen == AllGatherAlgo::automatic) {
    chosen = algo_from_env(rt.pe());
    if (chosen == AllGatherAlgo::automatic) chosen = resolve_all_gather_algo(bytes_per_pe, algo);
  }
  const auto sigs = td::ops::AllGatherSignals::from_words(pair->words.get(), rt.n_pes());
  launch(stream, 1, AllGatherKernel{}, rt.device_context(), recv, send, bytes_per_pe, sigs,
         pair->calls.next(), chosen == AllGatherAlgo::ring,
         static_cast<void*>(pair->staging.get()));
}

}  // namespace tessera::ops
