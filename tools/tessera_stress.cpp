// tessera-stress: a soak test of the device API across every PE of a job. For a bounded time
// each PE picks random operations on random PEs (itself included):
//   put_signal  a tile of random length into the target's inbox slot for this PE, then sets the
//               slot's signal to the tile's sequence number; the tile carries its sequence
//               number, source, length and a checksum, and every word is a function of them, so
//               a torn or misplaced tile is detected. A sender waits (without blocking) for the
//               receiver's acknowledgement before it reuses a slot.
//   fetch_add   a random amount on a random counter of the target; each PE tallies what it
//               added and checks that the values it sees on one counter only grow.
//   get         a random range of the target's pattern block, checked word by word.
// Between operations a PE checks the inbox slots whose signal moved and acknowledges them. At
// the end every PE verifies exact totals: each counter equals the sum of what all PEs added to
// it, and every tile sent to it arrived intact. PE 0 prints the operation counts and rate.
//
//   tessera-stress [--seconds S] [--np N] [--tile-words W] [--seed X]
//   --np N      N PEs as threads of this process (threads bootstrap); without it the PEs come
//               from the launcher: tessera-run -np 4 tessera-stress, mpirun -np 4 tessera-stress
// Exits non-zero on any error, on every PE.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tessera/device.hpp"
#include "tessera/tessera.hpp"

namespace {

namespace td = tessera::device;
using Clock = std::chrono::steady_clock;

struct Config {
  double seconds = 10.0;
  int threads_pes = 0;  // > 0: a threads job of this many PEs
  std::size_t tile_words = 512;
  std::uint64_t seed = 1;
};

constexpr std::size_t kCounters = 64;
constexpr std::size_t kPatternWords = 4096;
constexpr std::size_t kMaxGetWords = 256;
constexpr std::size_t kSignalStride = 8;  // one signal per 64-byte line
constexpr std::size_t kTileHeaderWords = 2;

std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

// Word i of PE pe's pattern block.
std::uint64_t pattern_word(int pe, std::size_t i) {
  return mix((static_cast<std::uint64_t>(pe) << 40) ^ i ^ 0x5041545445524eULL);
}

// Word i (past the header) of the tile with this sequence number from `source` to `target`.
std::uint64_t tile_word(int source, int target, std::uint64_t seq, std::size_t i) {
  return mix((static_cast<std::uint64_t>(source) << 48) ^
             (static_cast<std::uint64_t>(target) << 32) ^ (seq << 12) ^ i);
}

std::uint64_t checksum(const std::uint64_t* words, std::size_t n) {
  std::uint64_t sum = 0x7465737365726121ULL;
  for (std::size_t i = 0; i < n; ++i) sum = mix(sum ^ words[i]);
  return sum;
}

// Tile layout: [seq, source << 32 | length, data..., checksum of the words before it].
void fill_tile(std::uint64_t* t, int source, int target, std::uint64_t seq, std::size_t length) {
  t[0] = seq;
  t[1] = (static_cast<std::uint64_t>(source) << 32) | length;
  for (std::size_t i = kTileHeaderWords; i + 1 < length; ++i)
    t[i] = tile_word(source, target, seq, i);
  t[length - 1] = checksum(t, length - 1);
}

// Empty when the tile at t is the one `source` sent to `target` with sequence number `seq`.
std::string check_tile(const std::uint64_t* t, int source, int target, std::uint64_t seq,
                       std::size_t max_words) {
  const std::uint64_t length = t[1] & 0xffffffffULL;
  const auto from = static_cast<std::int64_t>(t[1] >> 32);
  if (t[0] != seq)
    return "sequence " + std::to_string(t[0]) + ", signal said " + std::to_string(seq);
  if (from != source) return "source " + std::to_string(from);
  if (length <= kTileHeaderWords || length > max_words) return "length " + std::to_string(length);
  if (t[length - 1] != checksum(t, length - 1)) {
    for (std::size_t i = kTileHeaderWords; i + 1 < length; ++i) {
      if (t[i] != tile_word(source, target, seq, i)) {
        return "torn tile: checksum mismatch, first bad word " + std::to_string(i) + " of " +
               std::to_string(length);
      }
    }
    return "torn tile: checksum word mismatch";
  }
  for (std::size_t i = kTileHeaderWords; i + 1 < length; ++i) {
    if (t[i] != tile_word(source, target, seq, i)) return "word " + std::to_string(i) + " differs";
  }
  return {};
}

struct Counts {
  std::uint64_t put_signals = 0;
  std::uint64_t fetch_adds = 0;
  std::uint64_t gets = 0;
  std::uint64_t tiles_checked = 0;
  std::uint64_t errors = 0;
  double seconds = 0;
};

class StressPe {
 public:
  StressPe(tessera::Runtime& rt, const Config& config)
      : rt_(rt),
        config_(config),
        ctx_(rt.device_context()),
        me_(rt.pe()),
        n_(static_cast<std::size_t>(rt.n_pes())),
        rng_(mix(config.seed) ^ mix(static_cast<std::uint64_t>(rt.pe()) + 1)),
        counters_(rt.alloc<std::uint64_t>(kCounters)),
        inbox_(rt.alloc<std::uint64_t>(n_ * config.tile_words)),
        inbox_signals_(rt.alloc<std::uint64_t>(n_ * kSignalStride)),
        acks_(rt.alloc<std::uint64_t>(n_ * kSignalStride)),
        pattern_(rt.alloc<std::uint64_t>(kPatternWords)),
        staging_(rt.alloc<std::uint64_t>(std::max(config.tile_words, kMaxGetWords))),
        sent_(n_, 0),
        consumed_(n_, 0),
        added_(n_ * kCounters, 0),
        seen_(n_ * kCounters, 0) {
    std::fill(counters_.begin(), counters_.end(), 0);
    std::fill(inbox_.begin(), inbox_.end(), 0);
    std::fill(inbox_signals_.begin(), inbox_signals_.end(), 0);
    std::fill(acks_.begin(), acks_.end(), 0);
    for (std::size_t i = 0; i < kPatternWords; ++i) pattern_[i] = pattern_word(me_, i);
    rt_.barrier();
  }

  Counts run() {
    const auto start = Clock::now();
    const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(config_.seconds));
    for (std::uint64_t step = 0;; ++step) {
      if ((step & 63) == 0 && Clock::now() >= deadline) break;
      const int target = static_cast<int>(rng_() % n_);
      switch (rng_() % 4) {
        case 0:
          put_signal(target);
          break;
        case 1:
          fetch_add(target);
          break;
        case 2:
          get(target);
          break;
        default:
          poll_inbox(true);
          break;
      }
    }
    td::quiet(ctx_);
    counts_.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    rt_.barrier();
    // Every put_signal is complete and visible: the last tile of each sender may still wait.
    poll_inbox(false);
    verify_totals();
    return counts_;
  }

 private:
  std::uint64_t* signal_slot(tessera::Symmetric<std::uint64_t>& words, std::size_t pe) {
    return &words[pe * kSignalStride];
  }

  void error(const std::string& what) {
    ++counts_.errors;
    if (counts_.errors <= 10) std::fprintf(stderr, "tessera-stress PE %d: %s\n", me_, what.c_str());
  }

  void put_signal(int target) {
    const auto t = static_cast<std::size_t>(target);
    // The slot on `target` is free once it acknowledged the last tile sent there.
    if (td::signal_fetch(signal_slot(acks_, t)) != sent_[t]) return;
    const std::uint64_t seq = sent_[t] + 1;
    const std::size_t length =
        kTileHeaderWords + 2 + rng_() % (config_.tile_words - kTileHeaderWords - 1);
    fill_tile(staging_.get(), me_, target, seq, length);
    std::uint64_t* slot = &inbox_[static_cast<std::size_t>(me_) * config_.tile_words];
    td::put_signal(td::Thread{}, ctx_, td::Tile<std::uint64_t>(slot, 1, length),
                   td::Tile<const std::uint64_t>(staging_.get(), 1, length),
                   signal_slot(inbox_signals_, static_cast<std::size_t>(me_)), seq,
                   td::SignalOp::set, target);
    sent_[t] = seq;
    ++counts_.put_signals;
  }

  void fetch_add(int target) {
    const auto t = static_cast<std::size_t>(target);
    const std::size_t c = rng_() % kCounters;
    const std::uint64_t amount = 1 + rng_() % 1000;
    const std::uint64_t before = td::atomic_fetch_add(ctx_, &counters_[c], amount, target);
    std::uint64_t& seen = seen_[t * kCounters + c];
    if (before < seen) {
      error("counter " + std::to_string(c) + " on PE " + std::to_string(target) +
            " went back from " + std::to_string(seen) + " to " + std::to_string(before));
    }
    seen = before + amount;
    added_[t * kCounters + c] += amount;
    ++counts_.fetch_adds;
  }

  void get(int target) {
    const std::size_t words = 1 + rng_() % kMaxGetWords;
    const std::size_t offset = rng_() % (kPatternWords - words + 1);
    td::get(td::Thread{}, ctx_, td::Tile<std::uint64_t>(staging_.get(), 1, words),
            td::Tile<const std::uint64_t>(&pattern_[offset], 1, words), target);
    for (std::size_t i = 0; i < words; ++i) {
      if (staging_[i] != pattern_word(target, offset + i)) {
        error("get of " + std::to_string(words) + " words at " + std::to_string(offset) +
              " from PE " + std::to_string(target) + ": word " + std::to_string(i) + " differs");
        break;
      }
    }
    ++counts_.gets;
  }

  // Checks every inbox slot whose signal moved; with `acknowledge`, frees it for its sender.
  void poll_inbox(bool acknowledge) {
    for (std::size_t s = 0; s < n_; ++s) {
      const std::uint64_t seq = td::signal_fetch(signal_slot(inbox_signals_, s));
      if (seq == consumed_[s]) continue;
      if (seq != consumed_[s] + 1) {
        error("signal from PE " + std::to_string(s) + " jumped from " +
              std::to_string(consumed_[s]) + " to " + std::to_string(seq));
      }
      const std::string bad = check_tile(&inbox_[s * config_.tile_words], static_cast<int>(s), me_,
                                         seq, config_.tile_words);
      if (!bad.empty())
        error("tile " + std::to_string(seq) + " from PE " + std::to_string(s) + ": " + bad);
      consumed_[s] = seq;
      ++counts_.tiles_checked;
      if (acknowledge) {
        td::signal(ctx_, signal_slot(acks_, static_cast<std::size_t>(me_)), seq, td::SignalOp::set,
                   static_cast<int>(s));
      }
    }
  }

  // Every PE's tallies of what it added and sent, gathered; then this PE's counters and inbox
  // are checked against them.
  void verify_totals() {
    const std::size_t per_pe = n_ + n_ * kCounters;
    std::vector<std::uint64_t> all(n_ * per_pe);
    std::uint64_t* mine = &all[static_cast<std::size_t>(me_) * per_pe];
    std::copy(sent_.begin(), sent_.end(), mine);
    std::copy(added_.begin(), added_.end(), mine + n_);
    rt_.bootstrap().allgather(all.data(), per_pe * sizeof(std::uint64_t));
    const auto m = static_cast<std::size_t>(me_);
    for (std::size_t s = 0; s < n_; ++s) {
      const std::uint64_t sent_to_me = all[s * per_pe + m];
      if (sent_to_me != consumed_[s]) {
        error("PE " + std::to_string(s) + " sent " + std::to_string(sent_to_me) + " tiles, " +
              std::to_string(consumed_[s]) + " arrived");
      }
    }
    for (std::size_t c = 0; c < kCounters; ++c) {
      std::uint64_t expected = 0;
      for (std::size_t s = 0; s < n_; ++s) expected += all[s * per_pe + n_ + m * kCounters + c];
      const std::uint64_t value = td::signal_fetch(&counters_[c]);
      if (value != expected) {
        error("counter " + std::to_string(c) + " holds " + std::to_string(value) +
              ", the PEs added " + std::to_string(expected));
      }
    }
    rt_.barrier();
  }

  tessera::Runtime& rt_;
  const Config& config_;
  td::Context ctx_;
  int me_;
  std::size_t n_;
  std::mt19937_64 rng_;
  tessera::Symmetric<std::uint64_t> counters_;
  tessera::Symmetric<std::uint64_t> inbox_;          // n slots of tile_words, one per source
  tessera::Symmetric<std::uint64_t> inbox_signals_;  // per source: last tile sent here
  tessera::Symmetric<std::uint64_t> acks_;           // per target: last tile it consumed
  tessera::Symmetric<std::uint64_t> pattern_;
  tessera::Symmetric<std::uint64_t> staging_;  // put source and get destination
  std::vector<std::uint64_t> sent_;
  std::vector<std::uint64_t> consumed_;
  std::vector<std::uint64_t> added_;  // [target][counter]
  std::vector<std::uint64_t> seen_;   // [target][counter]: lowest value the counter may hold
  Counts counts_;
};

// Runs one PE; PE 0 prints the job's totals. Returns the job's error count.
std::uint64_t run_pe(tessera::Runtime& rt, const Config& config) {
  Counts c;
  {
    StressPe pe(rt, config);
    c = pe.run();
  }
  std::vector<Counts> all(static_cast<std::size_t>(rt.n_pes()));
  all[static_cast<std::size_t>(rt.pe())] = c;
  rt.bootstrap().allgather(all.data(), sizeof(Counts));
  Counts total;
  for (const Counts& x : all) {
    total.put_signals += x.put_signals;
    total.fetch_adds += x.fetch_adds;
    total.gets += x.gets;
    total.tiles_checked += x.tiles_checked;
    total.errors += x.errors;
    total.seconds = std::max(total.seconds, x.seconds);
  }
  if (rt.pe() == 0) {
    const std::uint64_t ops = total.put_signals + total.fetch_adds + total.gets;
    std::printf(
        "tessera-stress: %d PEs (%s bootstrap), %.1f s: %llu put_signal, %llu fetch_add, %llu get, "
        "%llu tiles verified; %.0f ops/s; %llu errors\n",
        rt.n_pes(), rt.bootstrap().name(), total.seconds,
        static_cast<unsigned long long>(total.put_signals),
        static_cast<unsigned long long>(total.fetch_adds),
        static_cast<unsigned long long>(total.gets),
        static_cast<unsigned long long>(total.tiles_checked),
        total.seconds > 0 ? static_cast<double>(ops) / total.seconds : 0.0,
        static_cast<unsigned long long>(total.errors));
    std::fflush(stdout);
  }
  return total.errors;
}

tessera::Options pe_options() {
  auto options = tessera::Options::from_env();
  if (std::getenv("TESSERA_HEAP_SIZE") == nullptr) options.heap_size = std::size_t{64} << 20;
  return options;
}

int usage(const char* why) {
  std::fprintf(stderr,
               "tessera-stress: %s\nusage: tessera-stress [--seconds S] [--np N] [--tile-words W] "
               "[--seed X]\n",
               why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Config config;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return usage(("missing value after " + arg).c_str());
    const char* value = argv[++i];
    if (arg == "--seconds") {
      config.seconds = std::strtod(value, nullptr);
    } else if (arg == "--np") {
      config.threads_pes = std::atoi(value);
    } else if (arg == "--tile-words") {
      config.tile_words = std::strtoull(value, nullptr, 10);
    } else if (arg == "--seed") {
      config.seed = std::strtoull(value, nullptr, 10);
    } else {
      return usage(("unknown option " + arg).c_str());
    }
  }
  if (!(config.seconds > 0) || config.tile_words < kTileHeaderWords + 2 || config.threads_pes < 0) {
    return usage("--seconds must be positive, --tile-words at least 4, --np positive");
  }
  try {
    if (config.threads_pes == 0) {
      tessera::Runtime rt = tessera::Runtime::init(pe_options());
      const std::uint64_t errors = run_pe(rt, config);
      rt.finalize();
      return errors == 0 ? 0 : 1;
    }
    auto group = tessera::make_threads_group(config.threads_pes);
    std::atomic<bool> failed{false};
    std::vector<std::thread> threads;
    for (int rank = 0; rank < config.threads_pes; ++rank) {
      threads.emplace_back([&, rank] {
        try {
          auto options = pe_options();
          options.backend = tessera::Backend::host;
          options.bootstrap = tessera::make_threads_bootstrap(group, rank, options.timeout);
          tessera::Runtime rt = tessera::Runtime::init(options);
          if (run_pe(rt, config) != 0) failed = true;
          rt.finalize();
        } catch (const std::exception& e) {
          std::fprintf(stderr, "tessera-stress PE %d: %s\n", rank, e.what());
          failed = true;
        }
      });
    }
    for (auto& t : threads) t.join();
    return failed ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera-stress: %s\n", e.what());
    return 1;
  }
}
