// Memory-ordering litmus tests of the device API, written once for every backend. Each runs on
// every PE of a job (threads or processes), `iterations` rounds, and returns the number of
// violations this PE observed; all PEs must call the same tests in the same order.
//
// Backend-neutral by construction: every kernel is a functor (TESSERA_KERNEL_CODE) launched with
// tessera::launch, every buffer a kernel touches (data, staging, flags, the violation tally)
// lives in the symmetric heap, and the host reads results back with Runtime::get. So the same
// text runs on the host backend (litmus_test.cpp: PEs as threads; litmus_main.cpp: processes
// under mpirun) and, compiled by nvcc, on the cuda backend (tests/gpu/gpu_litmus_test.cu), and
// is compiled by hipcc for HIP. Each case is a template over the group that runs it: on a GPU
// Thread is thread 0 of the block, Warp is warp 0, Block all 256 threads; on the host each is
// the block's one thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
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

// The violations one PE's kernel saw, kept in its heap so device code can count them: `count`
// with atomics, the first one's (round, word, value) written by whichever thread counted it
// first.
struct Tally {
  std::uint64_t count;
  std::uint64_t round;
  std::uint64_t word;
  std::uint64_t value;
};

// Symmetric heap words, zeroed (calloc zeroes on every backend), freed on scope exit. All PEs
// make the same allocations in the same order.
class Words {
 public:
  Words(Runtime& rt, std::size_t n)
      : rt_(rt), p_(static_cast<std::uint64_t*>(rt.calloc(n, sizeof(std::uint64_t)))) {}
  ~Words() { rt_.free(p_); }
  Words(const Words&) = delete;
  Words& operator=(const Words&) = delete;
  std::uint64_t* get() const { return p_; }
  Tally* tally() const { return reinterpret_cast<Tally*>(p_); }

 private:
  Runtime& rt_;
  std::uint64_t* p_;
};

// The group G of the calling thread, or false when the thread is outside it (GPU: Thread is
// thread 0, Warp the first warp; host: the block's one thread is all three).
template <class G, class Fn>
TESSERA_KERNEL_CODE void as_group(td::Block blk, Fn&& fn) {
  if constexpr (std::is_same_v<G, td::Block>) {
    fn(blk);
  } else if constexpr (std::is_same_v<G, td::Warp>) {
    if (blk.rank() < td::Warp::size()) fn(td::Warp{});
  } else {
    if (blk.rank() == 0) fn(td::Thread{});
  }
}

// Counts a violation: round k, word i held v.
TESSERA_KERNEL_CODE inline void record(const td::Context& ctx, Tally* t, std::uint64_t k,
                                       std::uint64_t i, std::uint64_t v) {
  if (td::atomic_fetch_add(ctx, &t->count, std::uint64_t{1}, ctx.my_pe, td::Sem::relaxed) == 0) {
    t->round = k;
    t->word = i;
    t->value = v;
  }
}

// Every word of d[0, words) must read k. Plain (volatile, so never cached across rounds) local
// loads: the acquire that made the words visible is the caller's wait, and no one writes them
// until this PE acknowledges the round.
template <class G>
TESSERA_KERNEL_CODE void check_round(G g, const td::Context& ctx, Tally* t, const std::uint64_t* d,
                                     std::size_t words, std::uint64_t k) {
  for (std::size_t i = static_cast<std::size_t>(g.rank()); i < words;
       i += static_cast<std::size_t>(g.size())) {
    const std::uint64_t v = static_cast<const volatile std::uint64_t*>(d)[i];
    if (v != k) record(ctx, t, k, i, v);
  }
  g.sync();
}

// staging[0, words) = k by the group, visible to the whole group after.
template <class G>
TESSERA_KERNEL_CODE void stage(G g, std::uint64_t* staging, std::size_t words, std::uint64_t k) {
  for (std::size_t i = static_cast<std::size_t>(g.rank()); i < words;
       i += static_cast<std::size_t>(g.size()))
    staging[i] = k;
  g.sync();
}

// The ring cases: every PE writes round k to its right neighbour and checks round k from its
// left one, then acknowledges it (ack on the left PE = k), and writes round k + 1 only once its
// right neighbour has acknowledged round k: the checks then read data no one is writing, so
// any value other than k is a violation.
struct Ring {
  td::Context ctx;
  std::uint64_t* ack;  // symmetric; set by the right neighbour
  TESSERA_KERNEL_CODE int left() const { return (ctx.my_pe + ctx.n_pes - 1) % ctx.n_pes; }
  TESSERA_KERNEL_CODE int right() const { return (ctx.my_pe + 1) % ctx.n_pes; }
  template <class G>
  TESSERA_KERNEL_CODE void before_round(G g, std::uint64_t k) const {
    td::wait_until(g, ctx, ack, td::Cmp::ge, k - 1);
  }
  template <class G>
  TESSERA_KERNEL_CODE void after_round(G g, std::uint64_t k) const {
    if (g.rank() == 0) td::signal(ctx, ack, k, td::SignalOp::set, left());
    g.sync();
  }
};

// The host side of a case: the tally of this PE, read back after the kernel.
inline Result read_tally(Runtime& rt, const Words& w) {
  Tally t{};
  rt.get(&t, w.tally(), sizeof(t), rt.pe());
  Result res;
  res.violations = t.count;
  if (t.count != 0)
    res.detail = "round " + std::to_string(t.round) + ": word " + std::to_string(t.word) + " = " +
                 std::to_string(t.value);
  return res;
}

// Message passing: data with plain stores, then a release signal; the reader's acquire wait
// must make the data visible.
template <class G>
struct MessagePassing {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, std::uint64_t* d,
                                      std::uint64_t* staging, std::size_t words, std::uint64_t* f,
                                      Tally* t, std::uint64_t iterations) const {
    as_group<G>(blk, [&](auto g) {
      const Ring ring{ctx, f + 1};
      for (std::uint64_t k = 1; k <= iterations; ++k) {
        stage(g, staging, words, k);
        ring.before_round(g, k);
        td::put_signal(g, ctx, td::make_tile(d, words),
                       td::make_tile<const std::uint64_t>(staging, words), f, k, td::SignalOp::set,
                       ring.right());
        td::wait_until(g, ctx, f, td::Cmp::ge, k);
        check_round(g, ctx, t, d, words, k);
        ring.after_round(g, k);
      }
    });
  }
};

template <class G>
Result message_passing(Runtime& rt, std::uint64_t iterations, std::size_t words) {
  Words data(rt, words), staging(rt, words), flag(rt, 2), tally(rt, 4);
  rt.barrier();
  launch(rt.stream(), 1, MessagePassing<G>{}, rt.device_context(), data.get(), staging.get(), words,
         flag.get(), tally.tally(), iterations);
  rt.stream().synchronize();
  rt.barrier();
  return read_tally(rt, tally);
}

// Two puts to one PE ordered by fence: the data, fence, then a one-word put of the round
// number; a reader that sees the second put (acquire) must see the first.
template <class G>
struct FenceOrdersPuts {
  static constexpr std::size_t kWords = 16;
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, std::uint64_t* d,
                                      std::uint64_t* staging, std::uint64_t* f, Tally* t,
                                      std::uint64_t iterations) const {
    as_group<G>(blk, [&](auto g) {
      const Ring ring{ctx, f + 1};
      const int right = ring.right();
      for (std::uint64_t k = 1; k <= iterations; ++k) {
        stage(g, staging, kWords + 1, k);
        ring.before_round(g, k);
        td::put(g, ctx, td::make_tile(d, kWords),
                td::make_tile<const std::uint64_t>(staging, kWords), right);
        td::fence(g, ctx);
        td::put(g, ctx, td::make_tile(f, 1),
                td::make_tile<const std::uint64_t>(staging + kWords, 1), right);
        td::wait_until(g, ctx, f, td::Cmp::ge, k);
        check_round(g, ctx, t, d, kWords, k);
        ring.after_round(g, k);
      }
    });
  }
};

template <class G>
Result fence_orders_puts(Runtime& rt, std::uint64_t iterations) {
  constexpr std::size_t kWords = FenceOrdersPuts<G>::kWords;
  Words data(rt, kWords), staging(rt, kWords + 1), flag(rt, 2), tally(rt, 4);
  rt.barrier();
  launch(rt.stream(), 1, FenceOrdersPuts<G>{}, rt.device_context(), data.get(), staging.get(),
         flag.get(), tally.tally(), iterations);
  rt.stream().synchronize();
  rt.barrier();
  return read_tally(rt, tally);
}

// quiet completes every nbi put: four put_nbi, quiet, then a relaxed signal; the reader that
// sees the signal must see all four tiles.
template <class G>
struct QuietCompletesNbi {
  static constexpr std::size_t kWords = 8, kTiles = 4;
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, std::uint64_t* d,
                                      std::uint64_t* staging, std::uint64_t* f, Tally* t,
                                      std::uint64_t iterations) const {
    as_group<G>(blk, [&](auto g) {
      const Ring ring{ctx, f + 1};
      const int right = ring.right();
      for (std::uint64_t k = 1; k <= iterations; ++k) {
        stage(g, staging, kWords, k);
        ring.before_round(g, k);
        for (std::size_t i = 0; i < kTiles; ++i)
          td::put_nbi(g, ctx, td::make_tile(d + i * kWords, kWords),
                      td::make_tile<const std::uint64_t>(staging, kWords), right);
        td::quiet(g, ctx);
        if (g.rank() == 0) td::signal(ctx, f, k, td::SignalOp::set, right, td::Sem::relaxed);
        td::wait_until(g, ctx, f, td::Cmp::ge, k);
        check_round(g, ctx, t, d, kWords * kTiles, k);
        ring.after_round(g, k);
      }
    });
  }
};

template <class G>
Result quiet_completes_nbi(Runtime& rt, std::uint64_t iterations) {
  using K = QuietCompletesNbi<G>;
  Words data(rt, K::kWords * K::kTiles), staging(rt, K::kWords), flag(rt, 2), tally(rt, 4);
  rt.barrier();
  launch(rt.stream(), 1, K{}, rt.device_context(), data.get(), staging.get(), flag.get(),
         tally.tally(), iterations);
  rt.stream().synchronize();
  rt.barrier();
  return read_tally(rt, tally);
}

// Store buffering after quiet: in round k every PE sets its right neighbour's word to k
// (a relaxed signal), quiets, then reads its own word (set by its left neighbour). quiet is a
// sequentially consistent fence, so not every PE can read a value older than k: one of them
// quieted last, after every other PE's signal. Each PE marks the rounds it read stale; PE 0
// counts the rounds every PE marked. A device barrier starts each round on all PEs together so
// the stores really race. With one PE the word is its own: never stale.
template <class G>
struct StoreBufferingAfterQuiet {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, std::uint64_t* word,
                                      std::uint64_t* stale, std::uint64_t iterations) const {
    as_group<G>(blk, [&](auto g) {
      const int right = (ctx.my_pe + 1) % ctx.n_pes;
      for (std::uint64_t k = 1; k <= iterations; ++k) {
        td::barrier(g, ctx);
        if (g.rank() == 0) {
          td::signal(ctx, word, k, td::SignalOp::set, right, td::Sem::relaxed);
          td::quiet(ctx);
          const std::uint64_t v = td::atomic_load(ctx, word, ctx.my_pe, td::Sem::relaxed);
          if (v < k) stale[k - 1] = 1;
        }
        g.sync();
      }
    });
  }
};

template <class G>
Result store_buffering_after_quiet(Runtime& rt, std::uint64_t iterations) {
  // A device barrier per round: fewer rounds than the other cases.
  const std::uint64_t rounds = std::max<std::uint64_t>(1, iterations / 10);
  Words word(rt, 1), stale(rt, rounds);
  rt.barrier();
  launch(rt.stream(), 1, StoreBufferingAfterQuiet<G>{}, rt.device_context(), word.get(),
         stale.get(), rounds);
  rt.stream().synchronize();
  rt.barrier();
  Result res;
  if (rt.pe() == 0) {
    std::vector<std::uint64_t> all(rounds, 1), mine(rounds);
    for (int pe = 0; pe < rt.n_pes(); ++pe) {
      rt.get(mine.data(), stale.get(), rounds * sizeof(std::uint64_t), pe);
      for (std::uint64_t k = 0; k < rounds; ++k) all[k] &= mine[k];
    }
    for (std::uint64_t k = 0; k < rounds; ++k) {
      if (all[k] != 0 && res.violations++ == 0)
        res.detail =
            "round " + std::to_string(k + 1) + ": every PE read its word stale after quiet";
    }
  }
  rt.barrier();
  return res;
}

// Every PE adds 1 to one word on PE 0, `iterations` times in all across the job; PE 0 checks
// the total and that the returned values are exactly 0 .. total-1 (each seen once).
template <class G>
struct FetchAddTotal {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, std::uint64_t* word,
                                      std::uint64_t* mine, std::uint64_t* returned,
                                      std::uint64_t per_pe) const {
    as_group<G>(blk, [&](auto g) {
      if (g.rank() == 0) {
        for (std::uint64_t i = 0; i < per_pe; ++i)
          mine[i] = td::atomic_fetch_add(ctx, word, std::uint64_t{1}, 0, td::Sem::relaxed);
      }
      g.sync();
      td::put(g, ctx,
              td::make_tile(returned + per_pe * static_cast<std::uint64_t>(ctx.my_pe), per_pe),
              td::make_tile<const std::uint64_t>(mine, per_pe), 0);
      td::barrier(g, ctx);
    });
  }
};

template <class G>
Result fetch_add_total(Runtime& rt, std::uint64_t iterations) {
  const auto n = static_cast<std::uint64_t>(rt.n_pes());
  const std::uint64_t per_pe = (iterations + n - 1) / n;
  Words word(rt, 1), mine(rt, per_pe), returned(rt, per_pe * n);  // PE 0 gathers every PE's
  rt.barrier();
  launch(rt.stream(), 1, FetchAddTotal<G>{}, rt.device_context(), word.get(), mine.get(),
         returned.get(), per_pe);
  rt.stream().synchronize();
  Result res;
  if (rt.pe() == 0) {
    std::uint64_t total = 0;
    rt.get(&total, word.get(), sizeof(total), 0);
    if (total != per_pe * n) {
      ++res.violations;
      res.detail = "total " + std::to_string(total) + ", expected " + std::to_string(per_pe * n);
    }
    std::vector<std::uint64_t> all(per_pe * n);
    rt.get(all.data(), returned.get(), all.size() * sizeof(std::uint64_t), 0);
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
template <class G>
struct CasLockCounter {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, std::uint64_t* lock,
                                      std::uint64_t* counter, std::uint64_t* value,
                                      std::uint64_t per_pe) const {
    as_group<G>(blk, [&](auto g) {
      for (std::uint64_t i = 0; i < per_pe; ++i) {
        if (g.rank() == 0) {
          for (std::uint32_t spins = 0;
               td::atomic_compare_exchange(ctx, lock, std::uint64_t{0}, std::uint64_t{1}, 0,
                                           td::Sem::acquire) != 0;
               ++spins)
            td::platform::spin_pause(spins);
        }
        g.sync();
        td::get(g, ctx, td::make_tile(value, 4), td::make_tile<const std::uint64_t>(counter, 4), 0);
        for (int w = g.rank(); w < 4; w += g.size()) ++value[w];
        g.sync();
        td::put(g, ctx, td::make_tile(counter, 4), td::make_tile<const std::uint64_t>(value, 4), 0);
        if (g.rank() == 0) td::atomic_store(ctx, lock, std::uint64_t{0}, 0, td::Sem::release);
        g.sync();
      }
      td::barrier(g, ctx);
    });
  }
};

template <class G>
Result cas_lock_counter(Runtime& rt, std::uint64_t iterations) {
  const auto n = static_cast<std::uint64_t>(rt.n_pes());
  const std::uint64_t per_pe = (iterations + n - 1) / n;
  Words lock(rt, 1), counter(rt, 4), value(rt, 4);  // a multi-word value: plain copies
  rt.barrier();
  launch(rt.stream(), 1, CasLockCounter<G>{}, rt.device_context(), lock.get(), counter.get(),
         value.get(), per_pe);
  rt.stream().synchronize();
  Result res;
  if (rt.pe() == 0) {
    std::uint64_t seen[4] = {};
    rt.get(seen, counter.get(), sizeof(seen), 0);
    for (std::size_t i = 0; i < 4; ++i) {
      if (seen[i] != per_pe * n && res.violations++ == 0)
        res.detail = "counter word " + std::to_string(i) + " = " + std::to_string(seen[i]) +
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

template <class G>
Result message_passing_word(Runtime& rt, std::uint64_t it) {
  return message_passing<G>(rt, it, 1);
}
// A 16 KiB tile, read whole right after its put_signal is observed.
template <class G>
Result message_passing_large_tile(Runtime& rt, std::uint64_t it) {
  return message_passing<G>(rt, it, 2048);
}

// Every case, run by group G.
template <class G>
inline constexpr Case kCases[] = {
    {"message_passing", message_passing_word<G>},
    {"large_tile_after_put_signal", message_passing_large_tile<G>},
    {"fence_orders_two_puts", fence_orders_puts<G>},
    {"quiet_completes_nbi", quiet_completes_nbi<G>},
    {"store_buffering_after_quiet", store_buffering_after_quiet<G>},
    {"fetch_add_total_and_distinct", fetch_add_total<G>},
    {"cas_spin_lock_counter", cas_lock_counter<G>},
};

// The group names, for reports.
template <class G>
constexpr const char* group_name() {
  if constexpr (std::is_same_v<G, td::Thread>) return "Thread";
  if constexpr (std::is_same_v<G, td::Warp>) return "Warp";
  return "Block";
}

// Runs every case for Block with `iterations` rounds, then for Warp and Thread with a tenth of
// them (on the host backend the three are the same one thread; on a GPU they differ), calling
// report(group name, case, iterations, result) after each.
template <class Report>
void run_all(Runtime& rt, std::uint64_t iterations, Report report) {
  const auto each = [&](auto group, std::uint64_t it) {
    using G = decltype(group);
    for (const auto& c : kCases<G>) report(group_name<G>(), c, it, c.run(rt, it));
  };
  const std::uint64_t fewer = std::max<std::uint64_t>(1, iterations / 10);
  each(td::Block{0, 1}, iterations);
  each(td::Warp{}, fewer);
  each(td::Thread{}, fewer);
}

}  // namespace tessera::litmus
