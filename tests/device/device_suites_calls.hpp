// The device API II calls (pointer, byte and scalar RMA forms, the pointer put_signal, float and
// double atomic adds, the waits that return what they saw, the tests and Epoch::advance) written
// once for every backend, in the style of device_suites.hpp: functor kernels launched with
// tessera::launch, every buffer a kernel touches in the symmetric heap (sources, destinations,
// status and index arrays), the host setting up with Runtime::put and checking with Runtime::get
// after the stream is synchronized. What a kernel returns (wait_until's value, the index
// wait_until_any gives, g's result) it writes to the heap; mismatches found inside a kernel go
// to a litmus::Tally as (step, word, value). The same text runs
//   - on the host backend: calls_test.cpp (PEs as threads with checked mode off and on, and as
//     processes under tessera-run);
//   - on the cuda backend, compiled by nvcc: tests/gpu/gpu_device_suites_test.cu;
//   - compiled by hipcc for gfx90a/gfx940: tests/gpu/device_suites_compile.cu.
// Every case works for any number of PEs >= 1: the rings wrap to the PE itself, and the sender
// of the one-to-one cases is the last PE (PE 0 itself when alone, sending before it waits).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "device_suites.hpp"

namespace tessera::suites {
namespace calls {

// The value of element i of PE `pe`'s data in round `round`.
template <class T>
T value_of(int pe, std::size_t i, int round) {
  return static_cast<T>(static_cast<std::uint64_t>(pe) * 131 + i * 7 +
                        static_cast<std::uint64_t>(round));
}

// ---------------------------------------------------------------------------------------------
// Pointer and byte RMA forms.

// One pointer-form call of `count` elements starting at element `first` (nbi ones then quiet).
template <class G, class T>
struct PointerMove {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, T* dst, const T* src,
                                      std::size_t count, Op how, int pe) const {
    litmus::as_group<G>(blk, [&](auto g) {
      switch (how) {
        case Op::put:
          td::put(g, ctx, dst, src, count, pe);
          break;
        case Op::put_nbi:
          td::put_nbi(g, ctx, dst, src, count, pe);
          td::quiet(g, ctx);
          break;
        case Op::get:
          td::get(g, ctx, dst, src, count, pe);
          break;
        case Op::get_nbi:
          td::get_nbi(g, ctx, dst, src, count, pe);
          td::quiet(g, ctx);
          break;
      }
    });
  }
};

// The same with the byte forms (putmem, putmem_nbi, getmem, getmem_nbi).
template <class G>
struct ByteMove {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, unsigned char* dst,
                                      const unsigned char* src, std::size_t bytes, Op how,
                                      int pe) const {
    litmus::as_group<G>(blk, [&](auto g) {
      switch (how) {
        case Op::put:
          td::putmem(g, ctx, dst, src, bytes, pe);
          break;
        case Op::put_nbi:
          td::putmem_nbi(g, ctx, dst, src, bytes, pe);
          td::quiet(g, ctx);
          break;
        case Op::get:
          td::getmem(g, ctx, dst, src, bytes, pe);
          break;
        case Op::get_nbi:
          td::getmem_nbi(g, ctx, dst, src, bytes, pe);
          td::quiet(g, ctx);
          break;
      }
    });
  }
};

// Checks v[i] against want(i) inside [first, first + count) and `outside` elsewhere; one report
// per buffer.
template <class T, class Want>
void expect_run(Checker& ck, const std::vector<T>& v, std::size_t first, std::size_t count,
                Want want, T outside, const std::string& at) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    const bool inside = i >= first && i < first + count;
    const T w = inside ? want(i) : outside;
    if (!ck.expect(v[i] == w, at + ", element " + std::to_string(i) + ": got " +
                                  std::to_string(v[i]) + ", want " + std::to_string(w)))
      break;
  }
}

// Every PE puts runs of several lengths (1 element: the one-word path; odd lengths and odd
// starting elements: the ragged edges) into its right neighbour with put and put_nbi, and reads
// them back from its left neighbour with get and get_nbi.
template <class G>
Result pointer_put_and_get_move_contiguous_runs_of_any_length(Runtime& rt) {
  using T = std::uint32_t;
  constexpr std::size_t kLen = 1000 + 8;
  constexpr T kUntouched = 0xdeadbeef;
  const int me = rt.pe(), n = rt.n_pes();
  const int right = (me + 1) % n, left = (me + n - 1) % n, left2 = (left + n - 1) % n;
  Sym<T> inbox(rt, kLen), mine(rt, kLen), back(rt, kLen);
  Checker ck;
  int round = 0;
  for (std::size_t count :
       {std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{64}, std::size_t{999}}) {
    for (std::size_t first : {std::size_t{0}, std::size_t{3}}) {
      ++round;
      const bool nbi = round % 2 == 0;
      const std::string at = std::string(nbi ? "nbi" : "blocking") + ", count " +
                             std::to_string(count) + " first " + std::to_string(first);
      std::vector<T> mine_h(kLen);
      for (std::size_t i = 0; i < kLen; ++i) mine_h[i] = value_of<T>(me, i, round);
      mine.write(mine_h);
      inbox.write(std::vector<T>(kLen, 0));
      back.write(std::vector<T>(kLen, kUntouched));
      rt.barrier();
      run(rt, PointerMove<G, T>{}, inbox.get() + first, static_cast<const T*>(mine.get() + first),
          count, nbi ? Op::put_nbi : Op::put, right);
      rt.barrier();
      expect_run(
          ck, inbox.read(), first, count,
          [&](std::size_t i) { return value_of<T>(left, i, round); }, T{0}, "put " + at);
      // My left neighbour's inbox holds what its own left neighbour sent.
      run(rt, PointerMove<G, T>{}, back.get() + first, static_cast<const T*>(inbox.get() + first),
          count, nbi ? Op::get_nbi : Op::get, left);
      expect_run(
          ck, back.read(), first, count,
          [&](std::size_t i) { return value_of<T>(left2, i, round); }, kUntouched, "get " + at);
      rt.barrier();
    }
  }
  return ck.res;
}

// putmem to the right neighbour and getmem of what arrived, odd byte counts at odd offsets.
template <class G>
Result putmem_and_getmem_move_odd_byte_counts_at_odd_offsets(Runtime& rt) {
  using T = unsigned char;
  constexpr std::size_t kLen = 512;
  constexpr T kUntouched = 0xee;
  const int me = rt.pe(), n = rt.n_pes();
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  Sym<T> box(rt, kLen), mine(rt, kLen), back(rt, kLen);
  Checker ck;
  int round = 0;
  for (std::size_t bytes : {std::size_t{1}, std::size_t{3}, std::size_t{17}, std::size_t{333}}) {
    for (std::size_t first : {std::size_t{0}, std::size_t{5}}) {
      ++round;
      const bool nbi = round % 2 == 0;
      const std::string at = std::string(nbi ? "nbi" : "blocking") + ", " + std::to_string(bytes) +
                             " bytes at " + std::to_string(first);
      std::vector<T> mine_h(kLen);
      for (std::size_t i = 0; i < kLen; ++i) mine_h[i] = value_of<T>(me, i, round);
      mine.write(mine_h);
      box.write(std::vector<T>(kLen, 0));
      back.write(std::vector<T>(kLen, kUntouched));
      rt.barrier();
      run(rt, ByteMove<G>{}, box.get() + first, static_cast<const T*>(mine.get() + first), bytes,
          nbi ? Op::put_nbi : Op::put, right);
      rt.barrier();
      const auto from_left = [&](std::size_t i) { return value_of<T>(left, i, round); };
      expect_run(ck, box.read(), first, bytes, from_left, T{0}, "putmem " + at);
      run(rt, ByteMove<G>{}, back.get() + first, static_cast<const T*>(box.get() + first), bytes,
          nbi ? Op::get_nbi : Op::get, me);
      expect_run(ck, back.read(), first, bytes, from_left, kUntouched, "getmem " + at);
      rt.barrier();
    }
  }
  return ck.res;
}

// ---------------------------------------------------------------------------------------------
// The pointer put_signal and the waits that return what they saw.

// One call of the ring: wait until the right neighbour has read call e - 1 (sigs[8]), put the
// run with put_signal(_nbi) setting sigs[0] on it to e, wait for my own sigs[0] >= e and keep
// what the wait returned in seen[0].
template <class G>
struct PointerPutSignalCall {
  static constexpr std::size_t kCount = 301;
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, double* inbox,
                                      const double* mine, std::uint64_t* sigs, std::uint64_t* seen,
                                      std::uint64_t e, int nbi) const {
    litmus::as_group<G>(blk, [&](auto g) {
      const int right = (ctx.my_pe + 1) % ctx.n_pes;
      td::wait_until(g, ctx, &sigs[8], td::Cmp::ge, e - 1);
      if (nbi != 0) {
        td::put_signal_nbi(g, ctx, inbox, mine, kCount, &sigs[0], e, td::SignalOp::set, right);
        td::quiet(g, ctx);
      } else {
        td::put_signal(g, ctx, inbox, mine, kCount, &sigs[0], e, td::SignalOp::set, right);
      }
      const std::uint64_t s = td::wait_until(g, ctx, &sigs[0], td::Cmp::ge, e);
      if (g.rank() == 0) seen[0] = s;
      g.sync();
    });
  }
};

// Tells the left neighbour its call e has been read (sigs[8] = e there).
struct AckLeft {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, std::uint64_t* sigs,
                                      std::uint64_t e) const {
    if (blk.rank() == 0)
      td::signal(ctx, &sigs[8], e, td::SignalOp::set, (ctx.my_pe + ctx.n_pes - 1) % ctx.n_pes);
  }
};

// The pointer put_signal carries 12 epochs around the ring over one signal, never reset; the
// receiver's wait_until returns the epoch it saw and the data is complete once it has.
template <class G>
Result pointer_put_signal_delivers_the_run_before_the_signal(Runtime& rt) {
  constexpr std::size_t kCount = PointerPutSignalCall<G>::kCount;
  const int me = rt.pe(), n = rt.n_pes();
  const int left = (me + n - 1) % n;
  Sym<double> inbox(rt, kCount), mine(rt, kCount);
  Sym<std::uint64_t> sigs(rt, 16), seen(rt, 1);  // arrived at [0], consumed at [8]
  rt.barrier();
  Checker ck;
  std::vector<double> mine_h(kCount);
  td::Epoch epoch;
  for (int call = 0; call < 12; ++call) {
    const std::uint64_t e = epoch.next();
    for (std::size_t i = 0; i < kCount; ++i) mine_h[i] = value_of<double>(me, i, call);
    mine.write(mine_h);
    run(rt, PointerPutSignalCall<G>{}, inbox.get(), static_cast<const double*>(mine.get()),
        sigs.get(), seen.get(), e, call % 2);
    const std::string at = "call " + std::to_string(e);
    const std::uint64_t s = seen.read()[0];
    ck.expect(s == e, at + ": wait_until returned " + std::to_string(s));
    expect_run(
        ck, inbox.read(), 0, kCount, [&](std::size_t i) { return value_of<double>(left, i, call); },
        0.0, at + ", inbox");
    run(rt, AckLeft{}, sigs.get(), e);
  }
  rt.barrier();
  return ck.res;
}

// The last PE signals 7 to PE 0; PE 0 waits for >= 5 and then, relaxed, for != 0, keeping what
// each wait returned in seen[0] and seen[1].
template <class G>
struct WaitUntilValue {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, std::uint64_t* sig,
                                      std::uint64_t* seen) const {
    litmus::as_group<G>(blk, [&](auto g) {
      if (ctx.my_pe == ctx.n_pes - 1 && g.rank() == 0)
        td::signal(ctx, sig, 7, td::SignalOp::set, 0);
      if (ctx.my_pe == 0) {
        const std::uint64_t s = td::wait_until(g, ctx, sig, td::Cmp::ge, 5);
        const std::uint64_t r = td::wait_until(g, ctx, sig, td::Cmp::ne, 0, td::Sem::relaxed);
        if (g.rank() == 0) {
          seen[0] = s;
          seen[1] = r;
        }
      }
      g.sync();
    });
  }
};

template <class G>
Result wait_until_returns_the_value_that_satisfied_it(Runtime& rt) {
  Sym<std::uint64_t> sig(rt, 1), seen(rt, 2);
  rt.barrier();
  run(rt, WaitUntilValue<G>{}, sig.get(), seen.get());
  Checker ck;
  if (rt.pe() == 0) {
    const auto s = seen.read();
    ck.expect(s[0] == 7, "wait_until(ge 5) returned " + std::to_string(s[0]));
    ck.expect(s[1] == 7, "wait_until(ne 0, relaxed) returned " + std::to_string(s[1]));
  }
  rt.barrier();
  return ck.res;
}

// Every PE but 0 puts its word for epoch e (src[0]) into its slot of PE 0's payload with
// put_signal, setting its slot signal to e. PE 0 drains the arrivals in whatever order they come:
// with wait_until_some in epoch 1 and wait_until_any with a status mask in epoch 2, counting
// each index it is given in times_seen; once everything is taken, both calls again must return
// at once (all_masked = wait_until_some's count, none_left = wait_until_any's index).
template <class G>
struct DrainArrivals {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, std::uint64_t* slots,
                                      std::uint64_t* payload, const std::uint64_t* src, int* status,
                                      std::size_t* indices, std::uint64_t* times_seen,
                                      std::uint64_t* result, std::uint64_t e) const {
    litmus::as_group<G>(blk, [&](auto g) {
      const auto me = static_cast<std::size_t>(ctx.my_pe);
      const auto count = static_cast<std::size_t>(ctx.n_pes);
      if (me != 0) {
        td::put_signal(g, ctx, &payload[me], src, 1, &slots[me], e, td::SignalOp::set, 0);
        return;
      }
      for (std::size_t taken = 1; taken < count;) {
        if (e == 1) {
          const std::size_t k =
              td::wait_until_some(g, ctx, slots, count, status, indices, td::Cmp::ge, e);
          if (g.rank() == 0)
            for (std::size_t j = 0; j < k; ++j) ++times_seen[indices[j]];
          taken += k;
        } else {
          const std::size_t i = td::wait_until_any(g, ctx, slots, count, status, td::Cmp::ge, e);
          if (g.rank() == 0 && i < count) ++times_seen[i];
          ++taken;
        }
      }
      const std::size_t all_masked =
          td::wait_until_some(g, ctx, slots, count, status, indices, td::Cmp::ge, e);
      const std::size_t none_left =
          td::wait_until_any(g, ctx, slots, count, status, td::Cmp::ge, e);
      if (g.rank() == 0) {
        result[0] = all_masked;
        result[1] = none_left;
      }
      g.sync();
    });
  }
};

// PE 0 drains one arrival per other PE, every slot reported exactly once and no signal ever
// reset; the second epoch waits for 2 on the same signals.
template <class G>
Result wait_until_some_and_any_drain_every_arrival_once_without_resets(Runtime& rt) {
  const int me = rt.pe(), n = rt.n_pes();
  const auto un = static_cast<std::size_t>(n);
  Sym<std::uint64_t> slots(rt, un), payload(rt, un), src(rt, 1), times_seen(rt, un), result(rt, 2);
  Sym<int> status(rt, un);
  Sym<std::size_t> indices(rt, un);
  rt.barrier();
  Checker ck;
  for (std::uint64_t e = 1; e <= 2; ++e) {
    src.write({e * 1000 + static_cast<std::uint64_t>(me)});
    std::vector<int> status_h(un, 0);
    status_h[0] = 1;  // no arrival from PE 0 itself
    status.write(status_h);
    indices.write(std::vector<std::size_t>(un, 99));
    times_seen.write(std::vector<std::uint64_t>(un, 0));
    result.write({99, 99});
    rt.barrier();
    run(rt, DrainArrivals<G>{}, slots.get(), payload.get(),
        static_cast<const std::uint64_t*>(src.get()), status.get(), indices.get(), times_seen.get(),
        result.get(), e);
    if (me == 0) {
      const std::string at = "epoch " + std::to_string(e) + ": ";
      const auto r = result.read();
      ck.expect(r[0] == 0,
                at + "wait_until_some with everything taken returned " + std::to_string(r[0]));
      ck.expect(r[1] == td::npos,
                at + "wait_until_any with everything taken returned " + std::to_string(r[1]));
      const auto seen = times_seen.read();
      const auto st = status.read();
      const auto pay = payload.read();
      ck.expect(seen[0] == 0, at + "PE 0 (masked) reported " + std::to_string(seen[0]) + " times");
      for (std::size_t p = 1; p < un; ++p) {
        const std::string pe = at + "PE " + std::to_string(p) + ": ";
        ck.expect(seen[p] == 1, pe + "reported " + std::to_string(seen[p]) + " times");
        ck.expect(st[p] == 1, pe + "status " + std::to_string(st[p]));
        ck.expect(pay[p] == e * 1000 + p, pe + "payload " + std::to_string(pay[p]));
      }
    }
    rt.barrier();
  }
  return ck.res;
}

// The last PE raises words 3 and then 2 of PE 0's sigs; after a host barrier PE 0's grouped
// wait_until_any returns 2, the lowest satisfied index (which[0]).
template <class G>
struct LowestIndex {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, std::uint64_t* sigs,
                                      std::uint64_t* which, int phase) const {
    litmus::as_group<G>(blk, [&](auto g) {
      if (phase == 0) {
        if (ctx.my_pe == ctx.n_pes - 1 && g.rank() == 0) {
          td::signal(ctx, &sigs[3], 1, td::SignalOp::set, 0);
          td::signal(ctx, &sigs[2], 1, td::SignalOp::set, 0);
        }
      } else if (ctx.my_pe == 0) {
        const std::size_t w = td::wait_until_any(g, ctx, sigs, 4, td::Cmp::ne, 0);
        if (g.rank() == 0) which[0] = w;
      }
      g.sync();
    });
  }
};

template <class G>
Result grouped_wait_until_any_returns_the_lowest_satisfied_index(Runtime& rt) {
  Sym<std::uint64_t> sigs(rt, 4), which(rt, 1);
  which.write({99});
  rt.barrier();
  run(rt, LowestIndex<G>{}, sigs.get(), which.get(), 0);
  rt.barrier();
  run(rt, LowestIndex<G>{}, sigs.get(), which.get(), 1);
  Checker ck;
  if (rt.pe() == 0) {
    const std::uint64_t w = which.read()[0];
    ck.expect(w == 2, "wait_until_any returned " + std::to_string(w));
  }
  rt.barrier();
  return ck.res;
}

// ---------------------------------------------------------------------------------------------
// Calls made by one thread: p and g, the tests, Epoch on the device; float and double atomic adds.

// p of `value` into `box` on the right neighbour (phase 0), or g of the right neighbour's box
// into got[0] (phase 1).
template <class T>
struct PThenG {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, T* box, T* got, T value,
                                      int phase) const {
    litmus::as_group<td::Thread>(blk, [&](td::Thread) {
      const int right = (ctx.my_pe + 1) % ctx.n_pes;
      if (phase == 0) {
        td::p(ctx, box, value, right);
      } else {
        got[0] = td::g(ctx, static_cast<const T*>(box), right);
      }
    });
  }
};

template <class T>
void expect_p_and_g(Runtime& rt, Checker& ck, int round) {
  const int me = rt.pe(), n = rt.n_pes();
  const int left = (me + n - 1) % n;
  Sym<T> box(rt, 1), got(rt, 1);
  rt.barrier();
  const std::string at = std::to_string(sizeof(T)) + "-byte ";
  run(rt, PThenG<T>{}, box.get(), got.get(), value_of<T>(me, sizeof(T), round), 0);
  rt.barrier();
  const T arrived = box.read()[0];
  ck.expect(arrived == value_of<T>(left, sizeof(T), round),
            at + "p: box holds " + std::to_string(arrived));
  run(rt, PThenG<T>{}, box.get(), got.get(), T{}, 1);
  const T read = got.read()[0];
  ck.expect(read == value_of<T>(me, sizeof(T), round), at + "g returned " + std::to_string(read));
  rt.barrier();
}

inline Result scalar_p_and_g_move_one_value_of_every_width(Runtime& rt) {
  Checker ck;
  for (int round = 1; round <= 3; ++round) {
    expect_p_and_g<std::uint8_t>(rt, ck, round);
    expect_p_and_g<std::int16_t>(rt, ck, round);
    expect_p_and_g<float>(rt, ck, round);
    expect_p_and_g<double>(rt, ck, round);
    expect_p_and_g<std::uint64_t>(rt, ck, round);
  }
  return ck.res;
}

// Phase 0: nothing raised yet; phase 1: raise words 1 (set 4) and 3 (add 9) of the right
// neighbour's sigs; phase 2: what the tests see then. A test that answers wrongly is tallied as
// (step, phase, what it returned).
struct TestsWithoutWaiting {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, std::uint64_t* sigs,
                                      litmus::Tally* tally, int phase) const {
    litmus::as_group<td::Thread>(blk, [&](td::Thread) {
      const std::uint64_t* s = sigs;
      std::uint64_t step = 0;
      const auto expect = [&](bool ok, std::uint64_t got) {
        ++step;
        if (!ok) litmus::record(ctx, tally, step, static_cast<std::uint64_t>(phase), got);
      };
      const auto expect_bool = [&](bool got, bool want) { expect(got == want, got ? 1 : 0); };
      const auto expect_index = [&](std::size_t got, std::size_t want) {
        expect(got == want, static_cast<std::uint64_t>(got));
      };
      if (phase == 0) {
        expect_bool(td::test(ctx, s, td::Cmp::ge, 1), false);
        expect_index(td::test_any(ctx, s, 4, td::Cmp::ne, 0), td::npos);
        expect_bool(td::test_all(ctx, s, 4, td::Cmp::ge, 1), false);
        expect_bool(td::test_all(ctx, s, 4, td::Cmp::eq, 0), true);
        expect_bool(td::test_all(ctx, s, 0, td::Cmp::ne, 0), true);  // vacuously
      } else if (phase == 1) {
        const int right = (ctx.my_pe + 1) % ctx.n_pes;
        td::signal(ctx, &sigs[1], 4, td::SignalOp::set, right);
        td::signal(ctx, &sigs[3], 9, td::SignalOp::add, right);
      } else {
        expect_bool(td::test(ctx, &s[1], td::Cmp::eq, 4), true);
        expect_bool(td::test(ctx, &s[1], td::Cmp::gt, 4, td::Sem::relaxed), false);
        expect_index(td::test_any(ctx, s, 4, td::Cmp::ne, 0), 1);
        expect_index(td::test_any(ctx, s, 4, td::Cmp::gt, 4), 3);
        expect_bool(td::test_all(ctx, s, 4, td::Cmp::ne, 0), false);
        expect_bool(td::test_all(ctx, &s[3], 1, td::Cmp::ge, 9), true);
        // The status forms skip what was taken and mark what they return.
        int status[4] = {0, 1, 0, 0};
        expect_index(td::test_any(ctx, s, 4, status, td::Cmp::ne, 0), 3);
        expect(status[3] == 1, static_cast<std::uint64_t>(status[3]));
        expect_index(td::test_any(ctx, s, 4, status, td::Cmp::ne, 0), td::npos);
        int status2[4] = {0, 0, 0, 0};
        std::size_t idx[4] = {9, 9, 9, 9};
        expect_index(td::test_some(ctx, s, 4, status2, idx, td::Cmp::ne, 0), 2);
        expect_index(idx[0], 1);
        expect_index(idx[1], 3);
        expect_index(td::test_some(ctx, s, 4, status2, idx, td::Cmp::ne, 0), 0);
        expect(status2[0] == 0, static_cast<std::uint64_t>(status2[0]));
        expect(status2[1] == 1, static_cast<std::uint64_t>(status2[1]));
        expect(status2[3] == 1, static_cast<std::uint64_t>(status2[3]));
      }
    });
  }
};

inline Result tests_read_signals_without_waiting(Runtime& rt) {
  Sym<std::uint64_t> sigs(rt, 4);
  litmus::Words tally(rt, 4);
  rt.barrier();
  for (int phase = 0; phase < 3; ++phase) {
    run(rt, TestsWithoutWaiting{}, sigs.get(), tally.tally(), phase);
    rt.barrier();
  }
  Checker ck;
  add_tally(rt, tally, ck, "step (round), phase (word), what the test returned");
  return ck.res;
}

// Epoch's counting on the device: a mismatch is tallied as (step, 0, value).
struct EpochCounts {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, litmus::Tally* tally) const {
    litmus::as_group<td::Thread>(blk, [&](td::Thread) {
      std::uint64_t step = 0;
      const auto expect = [&](std::uint64_t got, std::uint64_t want) {
        ++step;
        if (got != want) litmus::record(ctx, tally, step, 0, got);
      };
      td::Epoch e;
      expect(e.current(), 0);
      expect(e.next(), 1);
      expect(e.advance(4), 5);
      expect(e.current(), 5);
      expect(e.next(), 6);
      expect(e.advance(0), 6);
    });
  }
};

inline Result epoch_advance_skips_ahead_by_n(Runtime& rt) {
  litmus::Words tally(rt, 4);
  rt.barrier();
  run(rt, EpochCounts{}, tally.tally());
  Checker ck;
  add_tally(rt, tally, ck, "step (round), value returned");
  rt.barrier();
  return ck.res;
}

// Every PE adds to the float and double words of every PE whose heap it maps (all of them on one
// node; the fabric suites split the PEs into nodes) kAdds times, then as often to its own with
// narrower scopes and other orders; the values are exact in binary, so the sums are exact in any
// order. A fetch_add result outside [0, total) is tallied as (add, target PE, 4 x the result).
struct FloatAdds {
  static constexpr int kAdds = 200;
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, float* f, double* d,
                                      litmus::Tally* tally, double total) const {
    litmus::as_group<td::Thread>(blk, [&](td::Thread) {
      for (int i = 0; i < kAdds; ++i) {
        for (int p = 0; p < ctx.n_pes; ++p) {
          if (!ctx.is_mapped(p)) continue;
          td::atomic_add(ctx, f, 0.5f, p);
          const double before = td::atomic_fetch_add(ctx, d, 0.25, p);
          if (!(before >= 0.0 && before < total))
            litmus::record(ctx, tally, static_cast<std::uint64_t>(i), static_cast<std::uint64_t>(p),
                           static_cast<std::uint64_t>(before * 4));
        }
        td::atomic_add(ctx, f, 0.5f, ctx.my_pe, td::Sem::relaxed, td::Scope::device);
        (void)td::atomic_fetch_add(ctx, d, 0.25, ctx.my_pe, td::Sem::release, td::Scope::block);
      }
    });
  }
};

inline Result float_and_double_atomic_adds_sum_exactly_across_pes(Runtime& rt) {
  const auto ctx = rt.device_context();
  int mapped_peers = 0;  // the same from both sides: mapping follows the node
  for (int p = 0; p < ctx.n_pes; ++p)
    if (p != ctx.my_pe && ctx.is_mapped(p)) ++mapped_peers;
  const double adds = static_cast<double>(FloatAdds::kAdds) * (mapped_peers + 2);
  Sym<float> f(rt, 1);
  Sym<double> d(rt, 1);
  litmus::Words tally(rt, 4);
  rt.barrier();
  run(rt, FloatAdds{}, f.get(), d.get(), tally.tally(), 0.25 * adds);
  rt.barrier();
  Checker ck;
  const float fsum = f.read()[0];
  const double dsum = d.read()[0];
  ck.expect(fsum == static_cast<float>(0.5 * adds), "float sum " + std::to_string(fsum));
  ck.expect(dsum == 0.25 * adds, "double sum " + std::to_string(dsum));
  add_tally(rt, tally, ck, "fetch_add out of range: add (round), target PE (word), 4 x result");
  rt.barrier();
  return ck.res;
}

// ---------------------------------------------------------------------------------------------
// The cases: the group forms for Thread, Warp and Block each, then the one-thread calls. `pes`: how
// many PEs the thread-PE host tests run each with (the job's size decides across processes and on a
// GPU; any size >= 1 works).

}  // namespace calls

inline constexpr Case kCallsCases[] = {
    {"Thread_PointerPutAndGetMoveContiguousRunsOfAnyLength",
     calls::pointer_put_and_get_move_contiguous_runs_of_any_length<td::Thread>, 3},
    {"Warp_PointerPutAndGetMoveContiguousRunsOfAnyLength",
     calls::pointer_put_and_get_move_contiguous_runs_of_any_length<td::Warp>, 3},
    {"Block_PointerPutAndGetMoveContiguousRunsOfAnyLength",
     calls::pointer_put_and_get_move_contiguous_runs_of_any_length<td::Block>, 3},
    {"Thread_PutmemAndGetmemMoveOddByteCountsAtOddOffsets",
     calls::putmem_and_getmem_move_odd_byte_counts_at_odd_offsets<td::Thread>, 2},
    {"Warp_PutmemAndGetmemMoveOddByteCountsAtOddOffsets",
     calls::putmem_and_getmem_move_odd_byte_counts_at_odd_offsets<td::Warp>, 2},
    {"Block_PutmemAndGetmemMoveOddByteCountsAtOddOffsets",
     calls::putmem_and_getmem_move_odd_byte_counts_at_odd_offsets<td::Block>, 2},
    {"Thread_PointerPutSignalDeliversTheRunBeforeTheSignal",
     calls::pointer_put_signal_delivers_the_run_before_the_signal<td::Thread>, 3},
    {"Warp_PointerPutSignalDeliversTheRunBeforeTheSignal",
     calls::pointer_put_signal_delivers_the_run_before_the_signal<td::Warp>, 3},
    {"Block_PointerPutSignalDeliversTheRunBeforeTheSignal",
     calls::pointer_put_signal_delivers_the_run_before_the_signal<td::Block>, 3},
    {"Thread_WaitUntilReturnsTheValueThatSatisfiedIt",
     calls::wait_until_returns_the_value_that_satisfied_it<td::Thread>, 2},
    {"Warp_WaitUntilReturnsTheValueThatSatisfiedIt",
     calls::wait_until_returns_the_value_that_satisfied_it<td::Warp>, 2},
    {"Block_WaitUntilReturnsTheValueThatSatisfiedIt",
     calls::wait_until_returns_the_value_that_satisfied_it<td::Block>, 2},
    {"Thread_WaitUntilSomeAndAnyDrainEveryArrivalOnceWithoutResets",
     calls::wait_until_some_and_any_drain_every_arrival_once_without_resets<td::Thread>, 4},
    {"Warp_WaitUntilSomeAndAnyDrainEveryArrivalOnceWithoutResets",
     calls::wait_until_some_and_any_drain_every_arrival_once_without_resets<td::Warp>, 4},
    {"Block_WaitUntilSomeAndAnyDrainEveryArrivalOnceWithoutResets",
     calls::wait_until_some_and_any_drain_every_arrival_once_without_resets<td::Block>, 4},
    {"Thread_GroupedWaitUntilAnyReturnsTheLowestSatisfiedIndex",
     calls::grouped_wait_until_any_returns_the_lowest_satisfied_index<td::Thread>, 2},
    {"Warp_GroupedWaitUntilAnyReturnsTheLowestSatisfiedIndex",
     calls::grouped_wait_until_any_returns_the_lowest_satisfied_index<td::Warp>, 2},
    {"Block_GroupedWaitUntilAnyReturnsTheLowestSatisfiedIndex",
     calls::grouped_wait_until_any_returns_the_lowest_satisfied_index<td::Block>, 2},
    {"ScalarPAndGMoveOneValueOfEveryWidth", calls::scalar_p_and_g_move_one_value_of_every_width, 3},
    {"TestsReadSignalsWithoutWaiting", calls::tests_read_signals_without_waiting, 2},
    {"EpochAdvanceSkipsAheadByN", calls::epoch_advance_skips_ahead_by_n, 1},
    {"FloatAndDoubleAtomicAddsSumExactlyAcrossPes",
     calls::float_and_double_atomic_adds_sum_exactly_across_pes, 4},
};

}  // namespace tessera::suites
