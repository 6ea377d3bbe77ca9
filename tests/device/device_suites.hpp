// The typed device tests (RMA, signals, atomics), written once for every backend, in the style
// of litmus.hpp: each case is a functor kernel (TESSERA_KERNEL_CODE) launched with
// tessera::launch on the PE's stream, every buffer a kernel touches lives in the symmetric heap,
// and the host sets the buffers up with Runtime::put and checks them with Runtime::get after
// the stream is synchronized. No gtest here: each case returns a litmus::Result (the number of
// mismatches and the first one), so the same text runs
//   - on the host backend: rma_test.cpp, signal_test.cpp, atomic_test.cpp (PEs as threads with
//     checked mode off and on, and the same binaries as processes under tessera-run);
//   - on the cuda backend, compiled by nvcc: tests/gpu/gpu_device_suites_test.cu;
//   - compiled by hipcc for gfx90a/gfx940: tests/gpu/device_suites_compile.cu.
// Groups: on a GPU Thread is thread 0 of the block, Warp the first warp, Block all its threads;
// on the host each is the block's one thread. Every PE of a job runs the same cases in the same
// order (they allocate and call collectives together); any number of PEs >= 1 works.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "element_bytes.hpp"
#include "litmus.hpp"

namespace tessera::suites {

namespace td = tessera::device;
using litmus::Result;

// n elements of T in the symmetric heap, zeroed, freed on scope exit.
template <class T>
class Sym {
 public:
  Sym(Runtime& rt, std::size_t n) : rt_(rt), n_(n), p_(static_cast<T*>(rt.calloc(n, sizeof(T)))) {}
  ~Sym() { rt_.free(p_); }
  Sym(const Sym&) = delete;
  Sym& operator=(const Sym&) = delete;
  T* get() const { return p_; }
  // The host's copy of this PE's elements, and back (complete on return on every backend).
  std::vector<T> read() const {
    std::vector<T> v(n_);
    rt_.get(v.data(), p_, n_ * sizeof(T), rt_.pe());
    return v;
  }
  void write(const std::vector<T>& v) const {
    rt_.put(p_, v.data(), v.size() * sizeof(T), rt_.pe());
  }

 private:
  Runtime& rt_;
  std::size_t n_;
  T* p_;
};

// Launches a one-block kernel on the PE's stream and waits for it.
template <class K, class... Args>
void run(Runtime& rt, K k, Args... args) {
  launch(rt.stream(), 1, k, rt.device_context(), args...);
  rt.stream().synchronize();
}

// Host-side mismatch counting: the first mismatch's description is kept.
struct Checker {
  Result res;
  bool expect(bool ok, const std::string& what) {
    if (!ok && res.violations++ == 0) res.detail = what;
    return ok;
  }
};

// Adds a kernel's tally to the host result (the tally is this PE's).
inline void add_tally(Runtime& rt, const litmus::Words& w, Checker& ck, const char* what) {
  const Result r = litmus::read_tally(rt, w);
  if (r.violations != 0) {
    if (ck.res.violations == 0) ck.res.detail = std::string(what) + ": " + r.detail;
    ck.res.violations += r.violations;
  }
}

using element_bytes::bits_of;
using element_bytes::element;

// ---------------------------------------------------------------------------------------------
// RMA: put / get / put_nbi / get_nbi for a group and element type, every tile shape, between
// every pair of PEs including a PE and itself.

struct Shape {
  const char* name;
  std::size_t rows, cols, dst_ld, src_ld;
};

// 1x1, 1xN, Nx1, ragged, and leading dimensions wider than the tile (different on each side).
inline constexpr Shape kShapes[] = {
    {"1x1", 1, 1, 1, 1},
    {"1x37", 1, 37, 37, 37},
    {"29x1", 29, 1, 1, 1},
    {"7x13", 7, 13, 13, 13},
    {"7x13/ld20<-ld17", 7, 13, 20, 17},
    {"5x8/ld8<-ld11", 5, 8, 8, 11},
};
inline constexpr std::size_t kSlot = 256;  // elements per PE's slot; >= every shape's extent

enum class Op : int { put, put_nbi, get, get_nbi };
inline constexpr Op kOps[] = {Op::put, Op::put_nbi, Op::get, Op::get_nbi};
inline const char* name(Op op) {
  switch (op) {
    case Op::put:
      return "put";
    case Op::put_nbi:
      return "put_nbi";
    case Op::get:
      return "get";
    case Op::get_nbi:
      return "get_nbi";
  }
  return "?";
}

// The value PE `pe` places at (r, c) for case `salt`; distinct per PE, position and case.
inline std::uint64_t pattern(int pe, std::size_t r, std::size_t c, std::uint64_t salt) {
  return 0x0101010101010101ull * static_cast<std::uint64_t>(pe + 1) + r * 131 + c * 7 + salt * 17;
}
inline constexpr std::uint64_t kSentinel = 0xA5A5A5A5A5A5A5A5ull;

// One op of one shape to or from every PE. `sym` (slot p written by PE p's put, or read by PE
// p's get) and `local` (this PE's sources for puts, destinations for gets) are kSlot * n_pes
// elements; `local` is in the heap too so that a GPU kernel can reach it.
template <class G, class T>
struct RmaEveryPe {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, T* sym, T* local, Op op,
                                      Shape s) const {
    litmus::as_group<G>(blk, [&](auto g) {
      const std::size_t mine = kSlot * static_cast<std::size_t>(ctx.my_pe);
      for (int p = 0; p < ctx.n_pes; ++p) {
        const std::size_t theirs = kSlot * static_cast<std::size_t>(p);
        if (op == Op::put || op == Op::put_nbi) {
          // My tile into slot `me` of PE p.
          td::Tile<T> dst(sym + mine, s.rows, s.cols, s.dst_ld);
          td::Tile<const T> src(local + theirs, s.rows, s.cols, s.src_ld);
          if (op == Op::put) {
            td::put(g, ctx, dst, src, p);
          } else {
            td::put_nbi(g, ctx, dst, src, p);
          }
        } else {
          // PE p's slot `me` into my local slot p.
          td::Tile<T> dst(local + theirs, s.rows, s.cols, s.dst_ld);
          td::Tile<const T> src(sym + mine, s.rows, s.cols, s.src_ld);
          if (op == Op::get) {
            td::get(g, ctx, dst, src, p);
          } else {
            td::get_nbi(g, ctx, dst, src, p);
          }
        }
      }
      if (op == Op::put_nbi || op == Op::get_nbi) td::quiet(g, ctx);
    });
  }
};

template <class G, class T>
Result rma_every_op_shape_and_pair(Runtime& rt) {
  const int me = rt.pe(), n = rt.n_pes();
  const std::size_t total = kSlot * static_cast<std::size_t>(n);
  Sym<T> sym(rt, total), local(rt, total);
  Checker ck;
  std::uint64_t salt = 0;
  for (const Shape& s : kShapes) {
    for (Op op : kOps) {
      ++salt;
      const bool is_put = op == Op::put || op == Op::put_nbi;
      // Sources hold the pattern, destinations the sentinel (so gaps can be checked).
      std::vector<T> sym_h(total, element<T>(kSentinel)), local_h(total, element<T>(kSentinel));
      std::vector<T>& src_h = is_put ? local_h : sym_h;
      for (int p = 0; p < n; ++p)
        for (std::size_t r = 0; r < s.rows; ++r)
          for (std::size_t c = 0; c < s.cols; ++c)
            src_h[kSlot * static_cast<std::size_t>(p) + r * s.src_ld + c] =
                element<T>(pattern(me, r, c, salt));
      sym.write(sym_h);
      local.write(local_h);
      rt.barrier();
      run(rt, RmaEveryPe<G, T>{}, sym.get(), local.get(), op, s);
      rt.barrier();
      // Slot p of the destination holds PE p's pattern inside the tile, the sentinel outside.
      const std::vector<T> dst = is_put ? sym.read() : local.read();
      for (int p = 0; p < n; ++p) {
        for (std::size_t i = 0; i < kSlot; ++i) {
          const std::size_t r = i / s.dst_ld, c = i % s.dst_ld;
          const bool inside = r < s.rows && c < s.cols;
          const T want = element<T>(inside ? pattern(p, r, c, salt) : kSentinel);
          const T got = dst[kSlot * static_cast<std::size_t>(p) + i];
          if (!ck.expect(bits_of(got) == bits_of(want),
                         std::string(name(op)) + " " + s.name + ": PE " + std::to_string(me) +
                             " slot of PE " + std::to_string(p) + " element " + std::to_string(i) +
                             " (" + std::to_string(r) + "," + std::to_string(c) + "): got " +
                             std::to_string(bits_of(got)) + ", want " +
                             std::to_string(bits_of(want))))
            break;  // one report per slot is enough
        }
      }
      rt.barrier();
    }
  }
  return ck.res;
}

// One blocking get of the right neighbour's kWords-word row: 12004 bytes, so on a GPU every
// thread of a Block moves several 16-byte pieces and one of them the 4-byte tail (the tiles
// above are at most 296 bytes).
template <class G>
struct LongGet {
  static constexpr std::size_t kWords = 3001;
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, std::uint32_t* dst,
                                      const std::uint32_t* src) const {
    litmus::as_group<G>(blk, [&](auto g) {
      td::get(g, ctx, td::make_tile(dst, kWords), td::make_tile(src, kWords),
              (ctx.my_pe + 1) % ctx.n_pes);
    });
  }
};

// Every word of the row arrives, and the words after the destination tile stay untouched.
template <class G>
Result long_get_moves_every_piece_and_the_tail(Runtime& rt) {
  constexpr std::size_t kWords = LongGet<G>::kWords, kGuard = 3;
  constexpr std::uint32_t kUntouched = 0xdeadbeef;
  const int me = rt.pe(), right = (me + 1) % rt.n_pes();
  const auto value = [](int pe, std::size_t i) {
    return static_cast<std::uint32_t>(pe) * 100000u + static_cast<std::uint32_t>(i);
  };
  Sym<std::uint32_t> row(rt, kWords), dst(rt, kWords + kGuard);
  std::vector<std::uint32_t> row_h(kWords);
  for (std::size_t i = 0; i < kWords; ++i) row_h[i] = value(me, i);
  row.write(row_h);
  dst.write(std::vector<std::uint32_t>(kWords + kGuard, kUntouched));
  rt.barrier();
  run(rt, LongGet<G>{}, dst.get(), static_cast<const std::uint32_t*>(row.get()));
  Checker ck;
  const auto got = dst.read();
  for (std::size_t i = 0; i < kWords + kGuard; ++i) {
    const std::uint32_t want = i < kWords ? value(right, i) : kUntouched;
    if (!ck.expect(got[i] == want, "get of " + std::to_string(kWords) + " words from PE " +
                                       std::to_string(right) + ": word " + std::to_string(i) +
                                       " = " + std::to_string(got[i]) + ", want " +
                                       std::to_string(want)))
      break;
  }
  rt.barrier();  // nobody frees its row while a neighbour may still read it
  return ck.res;
}

// ---------------------------------------------------------------------------------------------
// Signals.

// One call of the epoch case: my tile to my right neighbour with put_signal(_nbi) setting
// arrived[0] to the epoch, one row into my row of every PE's from_all, each adding 1 to
// arrived[1]; then wait for both and record signal_fetch(arrived[0]) in fetched[0].
template <class G>
struct PutSignalEpoch {
  static constexpr std::size_t kRows = 6, kCols = 10;
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, std::uint32_t* inbox,
                                      const std::uint32_t* mine, std::uint32_t* from_all,
                                      std::uint64_t* arrived, std::uint64_t* fetched,
                                      std::uint64_t e, int nbi) const {
    litmus::as_group<G>(blk, [&](auto g) {
      const int right = (ctx.my_pe + 1) % ctx.n_pes;
      td::Tile<std::uint32_t> dst(inbox, kRows, kCols);
      td::Tile<const std::uint32_t> src(mine, kRows, kCols);
      if (nbi != 0) {
        td::put_signal_nbi(g, ctx, dst, src, &arrived[0], e, td::SignalOp::set, right);
      } else {
        td::put_signal(g, ctx, dst, src, &arrived[0], e, td::SignalOp::set, right);
      }
      for (int p = 0; p < ctx.n_pes; ++p) {
        td::put_signal(
            g, ctx, td::make_tile(from_all + static_cast<std::size_t>(ctx.my_pe) * kCols, kCols),
            td::make_tile<const std::uint32_t>(mine, kCols), &arrived[1], 1, td::SignalOp::add, p);
      }
      if (nbi != 0) td::quiet(g, ctx);
      td::wait_until(g, ctx, &arrived[0], td::Cmp::ge, e);
      td::wait_until(g, ctx, &arrived[1], td::Cmp::ge, e * static_cast<std::uint64_t>(ctx.n_pes));
      if (g.rank() == 0) fetched[0] = td::signal_fetch(&arrived[0]);
      g.sync();
    });
  }
};

// Every PE passes a tile to its right neighbour 20 times over the same signal, never reset:
// with set, the n-th call signals n; with add, every PE adds 1 to every PE's counter.
template <class G>
Result put_signal_set_and_add_over_twenty_epochs(Runtime& rt) {
  using K = PutSignalEpoch<G>;
  constexpr std::size_t kRows = K::kRows, kCols = K::kCols;
  const int me = rt.pe(), n = rt.n_pes();
  const int left = (me + n - 1) % n;
  Sym<std::uint32_t> inbox(rt, kRows * kCols), mine(rt, kRows * kCols),
      from_all(rt, static_cast<std::size_t>(n) * kCols);
  Sym<std::uint64_t> arrived(rt, 2), fetched(rt, 1);
  rt.barrier();
  Checker ck;
  std::vector<std::uint32_t> mine_h(kRows * kCols);
  td::Epoch epoch;
  for (int call = 0; call < 20; ++call) {
    const std::uint64_t e = epoch.next();
    for (std::size_t i = 0; i < mine_h.size(); ++i)
      mine_h[i] = static_cast<std::uint32_t>(e * 1000 + static_cast<unsigned>(me) * 100 + i);
    mine.write(mine_h);
    run(rt, K{}, inbox.get(), static_cast<const std::uint32_t*>(mine.get()), from_all.get(),
        arrived.get(), fetched.get(), e, call % 2);
    const std::string at = "call " + std::to_string(e) + ": ";
    ck.expect(fetched.read()[0] == e,
              at + "signal_fetch gave " + std::to_string(fetched.read()[0]));
    const auto in = inbox.read();
    for (std::size_t i = 0; i < kRows * kCols; ++i)
      if (!ck.expect(in[i] == e * 1000 + static_cast<unsigned>(left) * 100 + i,
                     at + "inbox[" + std::to_string(i) + "] = " + std::to_string(in[i])))
        break;
    const auto all = from_all.read();
    for (int p = 0; p < n; ++p)
      for (std::size_t c = 0; c < kCols; ++c)
        ck.expect(all[static_cast<std::size_t>(p) * kCols + c] ==
                      e * 1000 + static_cast<unsigned>(p) * 100 + c,
                  at + "from_all row " + std::to_string(p) + " col " + std::to_string(c));
    rt.barrier();  // nobody sends call e + 1 before everyone has checked call e
  }
  const std::uint64_t added = arrived.read()[1];
  ck.expect(added == 20u * static_cast<unsigned>(n),
            "arrived[1] = " + std::to_string(added) + " after 20 calls");
  return ck.res;
}

struct CmpCase {
  td::Cmp cmp;
  std::uint64_t initial, awaited, final_value;
};
inline constexpr CmpCase kCmpCases[] = {{td::Cmp::eq, 0, 7, 7},   {td::Cmp::ne, 5, 5, 6},
                                        {td::Cmp::gt, 3, 3, 4},   {td::Cmp::ge, 3, 4, 4},
                                        {td::Cmp::lt, 10, 10, 9}, {td::Cmp::le, 10, 9, 9}};

// The sender (the last PE) puts the payload to PE 0 and then, after a fence, signals it (release);
// the waiter (PE 0) waits for `cmp awaited` and records what it saw: seen = {signal_fetch,
// payload}. With one PE it is both, sending first.
template <class G>
struct SignalThenWait {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, std::uint64_t* sig,
                                      std::uint64_t* payload, const std::uint64_t* value,
                                      td::Cmp cmp, std::uint64_t awaited,
                                      std::uint64_t* seen) const {
    litmus::as_group<G>(blk, [&](auto g) {
      if (ctx.my_pe == ctx.n_pes - 1) {
        td::put(g, ctx, td::make_tile(payload, 1), td::make_tile(value, 1), 0);
        td::fence(g, ctx);
        if (g.rank() == 0) td::signal(ctx, sig, value[0], td::SignalOp::set, 0);
        g.sync();
      }
      if (ctx.my_pe == 0) {
        td::wait_until(g, ctx, sig, cmp, awaited);
        if (g.rank() == 0) {
          seen[0] = td::signal_fetch(sig);
          seen[1] = static_cast<const volatile std::uint64_t*>(payload)[0];
        }
        g.sync();
      }
    });
  }
};

template <class G>
Result wait_until_returns_once_each_comparison_holds(Runtime& rt) {
  Sym<std::uint64_t> sig(rt, 1), payload(rt, 1), value(rt, 1), seen(rt, 2);
  Checker ck;
  for (const CmpCase& c : kCmpCases) {
    const std::string at = std::string(td::to_string(c.cmp)) + ": ";
    ck.expect(!td::compare(c.cmp, c.initial, c.awaited), at + "holds at the start");
    ck.expect(td::compare(c.cmp, c.final_value, c.awaited), at + "fails at the end");
    sig.write({c.initial});
    payload.write({0});
    value.write({c.final_value});
    seen.write({0, 0});
    rt.barrier();
    run(rt, SignalThenWait<G>{}, sig.get(), payload.get(),
        static_cast<const std::uint64_t*>(value.get()), c.cmp, c.awaited, seen.get());
    if (rt.pe() == 0) {
      const auto s = seen.read();
      ck.expect(s[0] == c.final_value,
                at + "signal_fetch after the wait = " + std::to_string(s[0]));
      ck.expect(s[1] == c.final_value, at + "payload after the wait = " + std::to_string(s[1]));
    }
    rt.barrier();
  }
  return ck.res;
}

// Phase 0: every PE sets its own word of sigs on every PE, then waits for all of them.
// Phase 1: the last PE raises word 2 of PE 0's `any`; PE 0 learns which one (which[0]).
template <class G>
struct WaitAllAny {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, std::uint64_t* sigs,
                                      std::uint64_t* any, std::uint64_t* which, int phase) const {
    litmus::as_group<G>(blk, [&](auto g) {
      if (phase == 0) {
        if (g.rank() == 0) {
          for (int p = 0; p < ctx.n_pes; ++p)
            td::signal(ctx, &sigs[ctx.my_pe], static_cast<std::uint64_t>(10 + ctx.my_pe),
                       td::SignalOp::set, p);
        }
        g.sync();
        td::wait_until_all(g, ctx, sigs, static_cast<std::size_t>(ctx.n_pes), td::Cmp::ge, 10);
        return;
      }
      if (ctx.my_pe == ctx.n_pes - 1) {
        if (g.rank() == 0) td::signal(ctx, &any[2], 1, td::SignalOp::add, 0);
        g.sync();
      }
      if (ctx.my_pe == 0) {
        const std::size_t w = td::wait_until_any(g, ctx, any, 4, td::Cmp::ne, 0);
        if (g.rank() == 0) which[0] = w;
        g.sync();
      }
    });
  }
};

template <class G>
Result wait_until_all_and_any_see_the_right_signals(Runtime& rt) {
  const int n = rt.n_pes();
  Sym<std::uint64_t> sigs(rt, static_cast<std::size_t>(n)), any(rt, 4), which(rt, 1);
  which.write({99});
  rt.barrier();
  Checker ck;
  run(rt, WaitAllAny<G>{}, sigs.get(), any.get(), which.get(), 0);
  const auto s = sigs.read();
  for (int p = 0; p < n; ++p)
    ck.expect(s[static_cast<std::size_t>(p)] == 10u + static_cast<unsigned>(p),
              "wait_until_all: word " + std::to_string(p) + " = " +
                  std::to_string(s[static_cast<std::size_t>(p)]));
  rt.barrier();
  run(rt, WaitAllAny<G>{}, sigs.get(), any.get(), which.get(), 1);
  if (rt.pe() == 0) {
    ck.expect(which.read()[0] == 2, "wait_until_any returned " + std::to_string(which.read()[0]));
    ck.expect(any.read()[2] == 1, "any[2] = " + std::to_string(any.read()[2]));
  }
  rt.barrier();
  return ck.res;
}

// ---------------------------------------------------------------------------------------------
// Atomics on int32/uint32/int64/uint64.

// Every operation with its exact result, on the right neighbour and on self. Word [me] of every
// PE is worked on by this PE only, so the sequence is deterministic; a device barrier between
// the two targets. A mismatch is tallied as (step, target, value returned).
template <class T>
struct AtomicSequence {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, T* words,
                                      litmus::Tally* tally) const {
    litmus::as_group<td::Thread>(blk, [&](auto g) {
      T* w = words + ctx.my_pe;
      const int targets[2] = {(ctx.my_pe + 1) % ctx.n_pes, ctx.my_pe};
      for (int target : targets) {
        std::uint64_t step = 0;
        const auto expect = [&](T got, T want) {
          ++step;
          if (got != want)
            litmus::record(ctx, tally, step, static_cast<std::uint64_t>(target),
                           static_cast<std::uint64_t>(got));
        };
        const auto at = [&] { return td::atomic_load(ctx, w, target); };
        td::atomic_store(ctx, w, T{10}, target);
        expect(at(), T{10});
        expect(td::atomic_fetch_add(ctx, w, T{5}, target), T{10});
        td::atomic_add(ctx, w, T{3}, target);
        expect(at(), T{18});
        expect(td::atomic_exchange(ctx, w, T{7}, target), T{18});
        expect(td::atomic_compare_exchange(ctx, w, T{7}, T{9}, target), T{7});  // swaps
        expect(td::atomic_compare_exchange(ctx, w, T{7}, T{1}, target), T{9});  // does not
        expect(at(), T{9});
        expect(td::atomic_fetch_and(ctx, w, T{12}, target), T{9});
        expect(td::atomic_fetch_or(ctx, w, T{3}, target), T{8});
        expect(td::atomic_fetch_xor(ctx, w, T{5}, target), T{11});
        expect(at(), T{14});
        expect(td::atomic_fetch_min(ctx, w, T{4}, target), T{14});
        expect(td::atomic_fetch_min(ctx, w, T{100}, target), T{4});
        expect(td::atomic_fetch_max(ctx, w, T{50}, target), T{4});
        expect(td::atomic_fetch_max(ctx, w, T{1}, target), T{50});
        expect(at(), T{50});
        if constexpr (std::is_signed_v<T>) {
          expect(td::atomic_fetch_min(ctx, w, T{-3}, target), T{50});
          expect(td::atomic_fetch_max(ctx, w, T{-7}, target), T{-3});
          expect(at(), T{-3});
        } else {
          // Unsigned: wraps, and min/max compare as unsigned.
          expect(td::atomic_fetch_add(ctx, w, static_cast<T>(-50), target), T{50});
          expect(td::atomic_fetch_max(ctx, w, T{1}, target), T{0});
          expect(td::atomic_fetch_add(ctx, w, static_cast<T>(-2), target), T{1});
          expect(at(), static_cast<T>(~T{0}));
          expect(td::atomic_fetch_min(ctx, w, T{3}, target), static_cast<T>(~T{0}));
          expect(at(), T{3});
        }
        // Explicit semantics and scope.
        const T before = at();
        expect(td::atomic_fetch_add(ctx, w, T{1}, target, td::Sem::relaxed), before);
        expect(td::atomic_fetch_add(ctx, w, T{0}, target, td::Sem::relaxed, td::Scope::system),
               static_cast<T>(before + 1));
        td::barrier(g, ctx);
        // The word still holds my last write after every other PE's round.
        expect(at(), std::is_signed_v<T> ? static_cast<T>(-2) : T{4});
      }
    });
  }
};

template <class T>
Result atomic_every_operation_exact(Runtime& rt) {
  Sym<T> words(rt, static_cast<std::size_t>(rt.n_pes()));
  litmus::Words tally(rt, 4);
  rt.barrier();
  run(rt, AtomicSequence<T>{}, words.get(), tally.tally());
  rt.barrier();
  Checker ck;
  add_tally(rt, tally, ck, "step (round), target PE (word), value returned");
  return ck.res;
}

// Every thread of the block adds 1 to PE 0's word, kAdds times in all per PE, keeping what it
// got back in mine[i] for its i.
template <class T>
struct ContendedFetchAdd {
  static constexpr std::size_t kAdds = 3000;
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, T* word, T* mine) const {
    for (std::size_t i = static_cast<std::size_t>(blk.rank()); i < kAdds;
         i += static_cast<std::size_t>(blk.size()))
      mine[i] = td::atomic_fetch_add(ctx, word, T{1}, 0);
  }
};

template <class T>
Result contended_fetch_add_exact_and_distinct(Runtime& rt) {
  constexpr std::size_t kAdds = ContendedFetchAdd<T>::kAdds;
  const auto n = static_cast<std::size_t>(rt.n_pes());
  Sym<T> word(rt, 1), mine(rt, kAdds);
  rt.barrier();
  run(rt, ContendedFetchAdd<T>{}, word.get(), mine.get());
  rt.barrier();
  Checker ck;
  if (rt.pe() == 0) {
    const T total = word.read()[0];
    ck.expect(total == static_cast<T>(n * kAdds), "total " + std::to_string(total));
    std::vector<T> seen(n * kAdds);
    for (std::size_t p = 0; p < n; ++p)
      rt.get(seen.data() + p * kAdds, mine.get(), kAdds * sizeof(T), static_cast<int>(p));
    std::sort(seen.begin(), seen.end());
    for (std::size_t i = 0; i < seen.size(); ++i)
      if (!ck.expect(seen[i] == static_cast<T>(i),
                     "sorted results[" + std::to_string(i) + "] = " + std::to_string(seen[i])))
        break;
  }
  rt.barrier();
  return ck.res;
}

// Every thread of each of kBlocks blocks of one launch adds 1 with atomic_add to `counter` on
// every PE, kAddsPerBlock adds per block and PE (one per thread of a 256-thread GPU block): the
// blocks' adds meet on every PE's word at once (the contended case above has one block).
template <class T>
struct AddFromEveryBlock {
  static constexpr int kBlocks = 4;
  static constexpr std::size_t kAddsPerBlock = 256;
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, T* counter) const {
    for (std::size_t i = static_cast<std::size_t>(blk.rank()); i < kAddsPerBlock;
         i += static_cast<std::size_t>(blk.size()))
      for (int pe = 0; pe < ctx.n_pes; ++pe) td::atomic_add(ctx, counter, T{1}, pe);
  }
};

// Two launches of kBlocks blocks: every PE's counter ends at exactly every block's adds.
template <class T>
Result atomic_add_from_blocks_of_one_launch_exact(Runtime& rt) {
  using K = AddFromEveryBlock<T>;
  constexpr int kLaunches = 2;
  Sym<T> counter(rt, 1);
  rt.barrier();
  for (int i = 0; i < kLaunches; ++i)
    launch(rt.stream(), K::kBlocks, K{}, rt.device_context(), counter.get());
  rt.stream().synchronize();
  rt.barrier();
  Checker ck;
  const T total = counter.read()[0];
  const auto want = static_cast<T>(static_cast<std::size_t>(kLaunches * K::kBlocks) *
                                   K::kAddsPerBlock * static_cast<std::size_t>(rt.n_pes()));
  ck.expect(total == want, "counter after " + std::to_string(kLaunches) + " launches of " +
                               std::to_string(K::kBlocks) + " blocks = " + std::to_string(total) +
                               ", want " + std::to_string(want));
  rt.barrier();
  return ck.res;
}

// ---------------------------------------------------------------------------------------------
// The cases. `pes`: how many PEs the thread-PE host tests run each with (the job's size decides
// across processes and on a GPU).

struct Case {
  const char* name;
  Result (*run)(Runtime&);
  int pes;
};

template <class G>
constexpr const char* group_name() {
  return litmus::group_name<G>();
}

// RMA, for these (group, element) pairs: every group meets 1-, 2-, 4- and 8-byte elements.
inline constexpr Case kRmaCases[] = {
    {"Thread_u8", rma_every_op_shape_and_pair<td::Thread, std::uint8_t>, 3},
    {"Thread_bf16", rma_every_op_shape_and_pair<td::Thread, td::bf16>, 3},
    {"Thread_f32", rma_every_op_shape_and_pair<td::Thread, float>, 3},
    {"Thread_u64", rma_every_op_shape_and_pair<td::Thread, std::uint64_t>, 3},
    {"Warp_i8", rma_every_op_shape_and_pair<td::Warp, std::int8_t>, 3},
    {"Warp_half", rma_every_op_shape_and_pair<td::Warp, td::half>, 3},
    {"Warp_i32", rma_every_op_shape_and_pair<td::Warp, std::int32_t>, 3},
    {"Warp_f64", rma_every_op_shape_and_pair<td::Warp, double>, 3},
    {"Block_char", rma_every_op_shape_and_pair<td::Block, char>, 3},
    {"Block_u16", rma_every_op_shape_and_pair<td::Block, std::uint16_t>, 3},
    {"Block_u32", rma_every_op_shape_and_pair<td::Block, std::uint32_t>, 3},
    {"Block_i64", rma_every_op_shape_and_pair<td::Block, std::int64_t>, 3},
};

// RMA of one tile longer than every shape above.
inline constexpr Case kLongTileCases[] = {
    {"Block_GetMovesEveryPieceAndTheTail", long_get_moves_every_piece_and_the_tail<td::Block>, 2},
};

inline constexpr Case kSignalCases[] = {
    {"Thread_PutSignalSetAndAddOverTwentyEpochs",
     put_signal_set_and_add_over_twenty_epochs<td::Thread>, 4},
    {"Warp_PutSignalSetAndAddOverTwentyEpochs", put_signal_set_and_add_over_twenty_epochs<td::Warp>,
     4},
    {"Block_PutSignalSetAndAddOverTwentyEpochs",
     put_signal_set_and_add_over_twenty_epochs<td::Block>, 4},
    {"Thread_WaitUntilEveryComparison", wait_until_returns_once_each_comparison_holds<td::Thread>,
     2},
    {"Warp_WaitUntilEveryComparison", wait_until_returns_once_each_comparison_holds<td::Warp>, 2},
    {"Block_WaitUntilEveryComparison", wait_until_returns_once_each_comparison_holds<td::Block>, 2},
    {"Thread_WaitUntilAllAndAny", wait_until_all_and_any_see_the_right_signals<td::Thread>, 4},
    {"Warp_WaitUntilAllAndAny", wait_until_all_and_any_see_the_right_signals<td::Warp>, 4},
    {"Block_WaitUntilAllAndAny", wait_until_all_and_any_see_the_right_signals<td::Block>, 4},
};

inline constexpr Case kAtomicCases[] = {
    {"i32_EveryOperation", atomic_every_operation_exact<std::int32_t>, 2},
    {"u32_EveryOperation", atomic_every_operation_exact<std::uint32_t>, 2},
    {"i64_EveryOperation", atomic_every_operation_exact<std::int64_t>, 2},
    {"u64_EveryOperation", atomic_every_operation_exact<std::uint64_t>, 2},
    {"i32_ContendedFetchAdd", contended_fetch_add_exact_and_distinct<std::int32_t>, 4},
    {"u32_ContendedFetchAdd", contended_fetch_add_exact_and_distinct<std::uint32_t>, 4},
    {"i64_ContendedFetchAdd", contended_fetch_add_exact_and_distinct<std::int64_t>, 4},
    {"u64_ContendedFetchAdd", contended_fetch_add_exact_and_distinct<std::uint64_t>, 4},
    {"u32_AtomicAddFromFourBlocksOfOneLaunch",
     atomic_add_from_blocks_of_one_launch_exact<std::uint32_t>, 4},
    {"u64_AtomicAddFromFourBlocksOfOneLaunch",
     atomic_add_from_blocks_of_one_launch_exact<std::uint64_t>, 4},
};

}  // namespace tessera::suites
