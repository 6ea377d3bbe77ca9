// Memory-ordering litmus tests of the device API. Each runs on every PE of a job (threads or
// processes), `iterations` rounds, and returns the number of violations this PE observed; all
// PEs must call the same tests in the same order. Written against Runtime + device API only, so
// the same code runs under run_pes and under mpirun.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/device.hpp"
#include "tessera/launch.hpp"
#include "tessera/runtime.hpp"
#include "tessera/stream.hpp"

namespace tessera::litmus {

namespace td = tessera::device;

struct Result {
  std::uint64_t violations = 0;
  std::string detail;  // the first violation, for the report
};

// Runs fn() as a one-block kernel on the PE's stream and waits for it.
template <class Fn>
void on_device(Runtime& rt, Fn fn) {
  launch(rt.stream(), 1, [fn](td::Block blk) { fn(blk); });
  rt.stream().synchronize();
}

// The ring cases: every PE writes round k to its right neighbour and checks round k from its
// left one, then acknowledges it (ack on the left PE = k), and writes round k + 1 only once its
// right neighbour has acknowledged round k: the checks then read data no one is writing, so
// any value other than k is a violation.
struct Ring {
  td::Context ctx;
  std::uint64_t* ack;  // symmetric; set by the right neighbour
  int left() const { return (ctx.my_pe + ctx.n_pes - 1) % ctx.n_pes; }
  int right() const { return (ctx.my_pe + 1) % ctx.n_pes; }
  template <class G>
  void before_round(G g, std::uint64_t k) const {
    td::wait_until(g, ctx, ack, td::Cmp::ge, k - 1);
  }
  void after_round(std::uint64_t k) const { td::signal(ctx, ack, k, td::SignalOp::set, left()); }
};

inline void check_round(Result& res, const std::uint64_t* d, std::size_t words, std::uint64_t k) {
  for (std::size_t i = 0; i < words; ++i) {
    if (d[i] != k && res.violations++ == 0)
      res.detail = "round " + std::to_string(k) + ": word " + std::to_string(i) + " = " +
                   std::to_string(d[i]);
  }
}

// Message passing: data with plain stores, then a release signal; the reader's acquire wait
// must make the data visible.
inline Result message_passing(Runtime& rt, std::uint64_t iterations, std::size_t words) {
  const auto ctx = rt.device_context();
  auto data = rt.alloc<std::uint64_t>(words);
  auto flag = rt.alloc<std::uint64_t>(2);
  std::fill(data.begin(), data.end(), 0);
  flag[0] = flag[1] = 0;
  rt.barrier();
  Result res;
  std::vector<std::uint64_t> mine(words);
  std::uint64_t* d = data.get();
  std::uint64_t* f = flag.get();
  const Ring ring{ctx, f + 1};
  on_device(rt, [&, ctx](td::Block g) {
    for (std::uint64_t k = 1; k <= iterations; ++k) {
      std::fill(mine.begin(), mine.end(), k);
      ring.before_round(g, k);
      td::put_signal(g, ctx, td::make_tile(d, words),
                     td::make_tile<const std::uint64_t>(mine.data(), words), f, k,
                     td::SignalOp::set, ring.right());
      td::wait_until(g, ctx, f, td::Cmp::ge, k);
      check_round(res, d, words, k);
      ring.after_round(k);
    }
  });
  rt.barrier();
  return res;
}

// Two puts to one PE ordered by fence: the data, fence, then a one-word put of the round
// number; a reader that sees the second put (acquire) must see the first.
inline Result fence_orders_puts(Runtime& rt, std::uint64_t iterations) {
  constexpr std::size_t kWords = 16;
  const auto ctx = rt.device_context();
  auto data = rt.alloc<std::uint64_t>(kWords);
  auto flag = rt.alloc<std::uint64_t>(2);
  std::fill(data.begin(), data.end(), 0);
  flag[0] = flag[1] = 0;
  rt.barrier();
  Result res;
  std::uint64_t* d = data.get();
  std::uint64_t* f = flag.get();
  const Ring ring{ctx, f + 1};
  on_device(rt, [&, ctx](td::Block g) {
    const int right = ring.right();
    std::uint64_t mine[kWords];
    for (std::uint64_t k = 1; k <= iterations; ++k) {
      std::fill(mine, mine + kWords, k);
      ring.before_round(g, k);
      td::put(g, ctx, td::make_tile(d, kWords), td::make_tile<const std::uint64_t>(mine, kWords),
              right);
      td::fence(g, ctx);
      td::put(g, ctx, td::make_tile(f, 1), td::make_tile<const std::uint64_t>(&k, 1), right);
      td::wait_until(g, ctx, f, td::Cmp::ge, k);
      check_round(res, d, kWords, k);
      ring.after_round(k);
    }
  });
  rt.barrier();
  return res;
}

// quiet completes every nbi put: four put_nbi, quiet, then a relaxed signal; the reader that
// sees the signal must see all four tiles.
inline Result quiet_completes_nbi(Runtime& rt, std::uint64_t iterations) {
  constexpr std::size_t kWords = 8, kTiles = 4;
  const auto ctx = rt.device_context();
  auto data = rt.alloc<std::uint64_t>(kWords * kTiles);
  auto flag = rt.alloc<std::uint64_t>(2);
  std::fill(data.begin(), data.end(), 0);
  flag[0] = flag[1] = 0;
  rt.barrier();
  Result res;
  std::uint64_t* d = data.get();
  std::uint64_t* f = flag.get();
  const Ring ring{ctx, f + 1};
  on_device(rt, [&, ctx](td::Block g) {
    const int right = ring.right();
    std::uint64_t mine[kWords];
    for (std::uint64_t k = 1; k <= iterations; ++k) {
      std::fill(mine, mine + kWords, k);
      ring.before_round(g, k);
      for (std::size_t t = 0; t < kTiles; ++t)
        td::put_nbi(g, ctx, td::make_tile(d + t * kWords, kWords),
                    td::make_tile<const std::uint64_t>(mine, kWords), right);
      td::quiet(g, ctx);
      td::signal(ctx, f, k, td::SignalOp::set, right, td::Sem::relaxed);
      td::wait_until(g, ctx, f, td::Cmp::ge, k);
      check_round(res, d, kWords * kTiles, k);
      ring.after_round(k);
    }
  });
  rt.barrier();
  return res;
}

// Every PE adds 1 to one word on PE 0, `iterations` times in all across the job; PE 0 checks
// the total and that the returned values are exactly 0 .. total-1 (each seen once).
inline Result fetch_add_total(Runtime& rt, std::uint64_t iterations) {
  const auto n = static_cast<std::uint64_t>(rt.n_pes());
  const std::uint64_t per_pe = (iterations + n - 1) / n;
  const auto ctx = rt.device_context();
  auto word = rt.alloc<std::uint64_t>(1);
  auto returned = rt.alloc<std::uint64_t>(per_pe * n);  // PE 0 gathers every PE's results
  word[0] = 0;
  rt.barrier();
  std::vector<std::uint64_t> mine(per_pe);
  on_device(rt, [&, ctx](td::Block g) {
    for (std::uint64_t i = 0; i < per_pe; ++i)
      mine[i] = td::atomic_fetch_add(ctx, word.get(), 1, 0, td::Sem::relaxed);
    td::put(g, ctx,
            td::make_tile(returned.get() + per_pe * static_cast<std::uint64_t>(ctx.my_pe), per_pe),
            td::make_tile<const std::uint64_t>(mine.data(), per_pe), 0);
    td::barrier(g, ctx);
  });
  Result res;
  if (rt.pe() == 0) {
    if (word[0] != per_pe * n) {
      ++res.violations;
      res.detail = "total " + std::to_string(word[0]) + ", expected " + std::to_string(per_pe * n);
    }
    std::vector<std::uint64_t> all(returned.begin(), returned.end());
    std::sort(all.begin(), all.end());
    for (std::uint64_t i = 0; i < all.size(); ++i) {
      if (all[i] != i && res.violations++ == 0)
        res.detail = "sorted results[" + std::to_string(i) + "] = " + std::to_string(all[i]);
    }
  }
  rt.barrier();
  return res;
}

// A CAS spin-lock on PE 0 protecting a plain counter there, read and written with get/put:
// `iterations` increments in all across the job must give exactly that count.
inline Result cas_lock_counter(Runtime& rt, std::uint64_t iterations) {
  const auto n = static_cast<std::uint64_t>(rt.n_pes());
  const std::uint64_t per_pe = (iterations + n - 1) / n;
  const auto ctx = rt.device_context();
  auto lock = rt.alloc<std::uint64_t>(1);
  auto counter = rt.alloc<std::uint64_t>(4);  // a multi-word value: plain copies, no atomics
  lock[0] = 0;
  std::fill(counter.begin(), counter.end(), 0);
  rt.barrier();
  on_device(rt, [&, ctx](td::Block g) {
    std::uint64_t value[4];
    for (std::uint64_t i = 0; i < per_pe; ++i) {
      for (std::uint32_t spins = 0;
           td::atomic_compare_exchange(ctx, lock.get(), 0, 1, 0, td::Sem::acquire) != 0; ++spins)
        td::platform::spin_pause(spins);
      td::get(g, ctx, td::make_tile(value, 4), td::make_tile<const std::uint64_t>(counter.get(), 4),
              0);
      for (auto& v : value) ++v;
      td::put(g, ctx, td::make_tile(counter.get(), 4), td::make_tile<const std::uint64_t>(value, 4),
              0);
      td::atomic_store(ctx, lock.get(), 0, 0, td::Sem::release);
    }
    td::barrier(g, ctx);
  });
  Result res;
  if (rt.pe() == 0) {
    for (std::size_t i = 0; i < 4; ++i) {
      if (counter[i] != per_pe * n && res.violations++ == 0)
        res.detail = "counter word " + std::to_string(i) + " = " + std::to_string(counter[i]) +
                     ", expected " + std::to_string(per_pe * n);
    }
  }
  rt.barrier();
  return res;
}

struct Case {
  const char* name;
  Result (*run)(Runtime&, std::uint64_t);
};

inline Result message_passing_word(Runtime& rt, std::uint64_t it) {
  return message_passing(rt, it, 1);
}
// A 16 KiB tile, read whole right after its put_signal is observed.
inline Result message_passing_large_tile(Runtime& rt, std::uint64_t it) {
  return message_passing(rt, it, 2048);
}

inline constexpr Case kCases[] = {
    {"message_passing", message_passing_word},
    {"large_tile_after_put_signal", message_passing_large_tile},
    {"fence_orders_two_puts", fence_orders_puts},
    {"quiet_completes_nbi", quiet_completes_nbi},
    {"fetch_add_total_and_distinct", fetch_add_total},
    {"cas_spin_lock_counter", cas_lock_counter},
};

}  // namespace tessera::litmus
