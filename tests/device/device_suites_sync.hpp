// The typed device tests of barriers and teams, written once for every backend in the style of
// device_suites.hpp (whose Case, run, Checker and add_tally they use): functor kernels launched
// with tessera::launch on the PE's stream, every buffer a kernel touches in the symmetric heap,
// mismatches tallied by the kernel into heap words (litmus::Tally) and read back by the host.
// The same text runs
//   - on the host backend: barrier_test.cpp and team_test.cpp (PEs as threads with checked mode
//     off and on, and the same binaries as processes under tessera-run);
//   - on the cuda backend, compiled by nvcc: tests/gpu/gpu_device_suites_test.cu;
//   - compiled by hipcc for gfx90a/gfx940: tests/gpu/device_suites_compile.cu.
// Every PE of a job runs the same cases in the same order; any number of PEs >= 1 works (a
// case's `pes` is only the thread-PE count of the host tests).
#pragma once

#include <cstdint>
#include <string>

#include "device_suites.hpp"
#include "tessera/team.hpp"

namespace tessera::suites {

// ---------------------------------------------------------------------------------------------
// The whole-job barrier.

// Rounds of: put base + r into my slot on my right neighbour with a plain put_nbi (only the
// barrier orders it), barrier, check that my slot holds what my left neighbour put; a sync_all
// keeps round r + 1's put from racing round r's check. A mismatch is tallied as (round, base,
// value seen).
template <class G>
struct BarrierRounds {
  static constexpr std::uint64_t kRounds = 300;
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, std::uint64_t* slot,
                                      std::uint64_t* staging, litmus::Tally* tally,
                                      std::uint64_t base) const {
    litmus::as_group<G>(blk, [&](auto g) {
      const int right = (ctx.my_pe + 1) % ctx.n_pes;
      for (std::uint64_t r = 1; r <= kRounds; ++r) {
        const std::uint64_t value = base + r;
        if (g.rank() == 0) staging[0] = value;
        g.sync();
        td::put_nbi(g, ctx, td::make_tile(slot, 1), td::make_tile<const std::uint64_t>(staging, 1),
                    right);
        td::barrier(g, ctx);
        if (g.rank() == 0) {
          const std::uint64_t seen = td::atomic_load(ctx, slot, ctx.my_pe, td::Sem::relaxed);
          if (seen != value) litmus::record(ctx, tally, r, base, seen);
        }
        td::sync_all(g, ctx);
      }
    });
  }
};

// Three kernels of 300 rounds each over the same barrier, never reset.
template <class G>
Result barrier_orders_every_round_of_writes(Runtime& rt) {
  litmus::Words slot(rt, 1), staging(rt, 1), tally(rt, 4);
  rt.barrier();
  for (std::uint64_t kernel = 0; kernel < 3; ++kernel)
    run(rt, BarrierRounds<G>{}, slot.get(), staging.get(), tally.tally(), kernel * 1000);
  Checker ck;
  add_tally(rt, tally, ck, "round, kernel's base, value seen after the barrier");
  std::uint64_t last = 0;
  rt.get(&last, slot.get(), sizeof(last), rt.pe());
  ck.expect(last == 2000 + BarrierRounds<G>::kRounds,
            "slot after the last kernel = " + std::to_string(last));
  rt.barrier();
  return ck.res;
}

// 1000 whole-job barriers (alone when the job has one PE), then 1000 barriers and team_syncs on
// `solo`, a team whose one member is the last PE, by that member only. passed[0] and passed[1]
// count the barriers each part returned from.
struct BarrierAlone {
  static constexpr std::uint64_t kBarriers = 1000;
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, td::Team solo,
                                      std::uint64_t* passed) const {
    for (std::uint64_t i = 0; i < kBarriers; ++i) {
      td::barrier(blk, ctx);
      if (blk.rank() == 0) ++passed[0];
    }
    if (!solo.is_member()) return;
    for (std::uint64_t i = 0; i < kBarriers; ++i) {
      td::barrier(blk, ctx, solo);
      td::team_sync(blk, ctx, solo);
      if (blk.rank() == 0) ++passed[1];
    }
  }
};

inline Result barrier_alone_returns_at_once(Runtime& rt) {
  const Team solo = team_split_strided(rt, team_world(rt), rt.n_pes() - 1, 1, 1);
  litmus::Words passed(rt, 2);
  rt.barrier();
  run(rt, BarrierAlone{}, solo, passed.get());
  std::uint64_t p[2] = {};
  rt.get(p, passed.get(), sizeof(p), rt.pe());
  Checker ck;
  ck.expect(p[0] == BarrierAlone::kBarriers, "whole-job barriers passed: " + std::to_string(p[0]));
  const std::uint64_t want = solo.is_member() ? BarrierAlone::kBarriers : 0;
  ck.expect(p[1] == want, "one-member team barriers passed: " + std::to_string(p[1]) + ", want " +
                              std::to_string(want));
  rt.barrier();
  return ck.res;
}

// ---------------------------------------------------------------------------------------------
// Team barriers.

// Rounds of: put base + r into my slot on the next member of `team` (ranks wrap), barrier on the
// team, check my slot; a team_sync keeps round r + 1's put from racing round r's check. A
// mismatch is tallied as (round, base, value seen).
template <class G>
struct TeamRounds {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, td::Team team,
                                      std::uint64_t* slot, std::uint64_t* staging,
                                      litmus::Tally* tally, std::uint64_t rounds,
                                      std::uint64_t base) const {
    litmus::as_group<G>(blk, [&](auto g) {
      const int next = team.pe((team.my_rank + 1) % team.size);
      for (std::uint64_t r = 1; r <= rounds; ++r) {
        const std::uint64_t value = base + r;
        if (g.rank() == 0) staging[0] = value;
        g.sync();
        td::put_nbi(g, ctx, td::make_tile(slot, 1), td::make_tile<const std::uint64_t>(staging, 1),
                    next);
        td::barrier(g, ctx, team);
        if (g.rank() == 0) {
          const std::uint64_t seen = td::atomic_load(ctx, slot, ctx.my_pe, td::Sem::relaxed);
          if (seen != value) litmus::record(ctx, tally, r, base, seen);
        }
        td::team_sync(g, ctx, team);
      }
    });
  }
};

// After the sub-teams' rounds: every PE stores 5000 + its PE into its slot, barriers on the world
// team, and gets every PE's slot into got[pe]; the values must be there. A mismatch is tallied as
// (0, PE read, value got).
template <class G>
struct TeamWorldSeesEveryStore {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, td::Team world,
                                      std::uint64_t* slot, std::uint64_t* got,
                                      litmus::Tally* tally) const {
    litmus::as_group<G>(blk, [&](auto g) {
      if (g.rank() == 0) slot[0] = 5000 + static_cast<std::uint64_t>(ctx.my_pe);
      td::barrier(g, ctx, world);
      for (int pe = 0; pe < ctx.n_pes; ++pe)
        td::get(g, ctx, td::make_tile(got + pe, 1), td::make_tile<const std::uint64_t>(slot, 1),
                pe);
      g.sync();
      if (g.rank() == 0) {
        for (int pe = 0; pe < ctx.n_pes; ++pe) {
          const std::uint64_t v = static_cast<const volatile std::uint64_t*>(got)[pe];
          if (v != 5000 + static_cast<std::uint64_t>(pe))
            litmus::record(ctx, tally, 0, static_cast<std::uint64_t>(pe), v);
        }
      }
      td::barrier(g, ctx, world);
    });
  }
};

// The even and the odd world PEs form two teams that run different numbers of rounds at the same
// time, so their barriers must be independent; then the world team's barrier. With one PE the
// odd team is empty and the PE's team is the even one alone.
template <class G>
Result team_barrier_orders_each_teams_writes(Runtime& rt) {
  const int me = rt.pe(), n = rt.n_pes();
  const Team world = team_world(rt);
  const Team even = team_split_strided(rt, world, 0, 2, n - n / 2);
  const Team odd = n >= 2 ? team_split_strided(rt, world, 1, 2, n / 2) : even;
  const Team mine = me % 2 == 0 ? even : odd;
  Checker ck;
  ck.expect(mine.is_member(), "PE " + std::to_string(me) + " is not in its team");
  litmus::Words slot(rt, 1), staging(rt, 1), got(rt, static_cast<std::size_t>(n)), tally(rt, 4),
      world_tally(rt, 4);
  rt.barrier();
  const std::uint64_t rounds = me % 2 == 0 ? 200 : 70;
  for (std::uint64_t kernel = 0; kernel < 2; ++kernel)
    run(rt, TeamRounds<G>{}, mine, slot.get(), staging.get(), tally.tally(), rounds, kernel * 1000);
  add_tally(rt, tally, ck, "round, kernel's base, value seen after the team barrier");
  std::uint64_t last = 0;
  rt.get(&last, slot.get(), sizeof(last), me);
  ck.expect(last == 1000 + rounds, "slot after the last kernel = " + std::to_string(last));
  // The other team may still be in its rounds, putting into its members' slots only.
  run(rt, TeamWorldSeesEveryStore<G>{}, world, slot.get(), got.get(), world_tally.tally());
  add_tally(rt, world_tally, ck, "world barrier: -, PE read, value got");
  rt.barrier();
  return ck.res;
}

// ---------------------------------------------------------------------------------------------
// The cases. `pes`: how many PEs the thread-PE host tests run each with (the job's size decides
// across processes and on a GPU).

inline constexpr Case kBarrierCases[] = {
    {"Thread_OrdersEveryRoundOfWrites", barrier_orders_every_round_of_writes<td::Thread>, 4},
    {"Warp_OrdersEveryRoundOfWrites", barrier_orders_every_round_of_writes<td::Warp>, 4},
    {"Block_OrdersEveryRoundOfWrites", barrier_orders_every_round_of_writes<td::Block>, 4},
    {"Block_AloneReturnsAtOnce", barrier_alone_returns_at_once, 1},
};

inline constexpr Case kTeamCases[] = {
    {"Thread_OrdersEachTeamsWritesIndependently", team_barrier_orders_each_teams_writes<td::Thread>,
     4},
    {"Warp_OrdersEachTeamsWritesIndependently", team_barrier_orders_each_teams_writes<td::Warp>, 4},
    {"Block_OrdersEachTeamsWritesIndependently", team_barrier_orders_each_teams_writes<td::Block>,
     4},
};

}  // namespace tessera::suites
