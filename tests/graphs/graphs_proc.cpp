// Capture and replay with the PEs as processes (run by tessera-run or mpirun): every op captured
// once and replayed, its inputs rewritten before and every result checked after each replay, the
// same cases as the thread programs (collectives_cases.hpp, fused_cases.hpp, moe_cases.hpp).
// PE 0 prints "<op>: captured and replayed N times: ok" for each op once every PE has passed it;
// a wrong replay is printed by the PE that saw it ("PE 1, replay 7 of 1000: ...") and fails the
// run.
//
//   graphs_proc [REPLAYS]   # default 1000
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <string>

#include "collectives_cases.hpp"
#include "fused_cases.hpp"
#include "moe_cases.hpp"
#include "tessera/tessera.hpp"

namespace {

using namespace tessera;
using namespace tessera::graphs_test;

// This PE's stride-2 team (the even or the odd PEs).
Team stride2_team(Runtime& rt) {
  const Team world = team_world(rt);
  const int n = rt.n_pes();
  const Team evens = team_split_strided(rt, world, 0, 2, (n + 1) / 2);
  const Team odds = team_split_strided(rt, world, 1, 2, n / 2);
  return evens.is_member() ? evens : odds;
}

// Runs one case on every PE; after a barrier PE 0 reports it. A failure propagates (the PE that
// saw it names the replay), which ends the job.
void run_case(Runtime& rt, const std::string& name, int replays,
              const std::function<void()>& body) {
  body();
  rt.barrier();
  if (rt.pe() == 0) {
    std::printf("%s: captured and replayed %d times: ok\n", name.c_str(), replays);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Runtime rt = Runtime::init(Options::from_env());
    ReplayOptions opts;
    if (argc > 1) opts.replays = std::atoi(argv[1]);
    if (opts.replays < 1) {
      std::fprintf(stderr, "graphs_proc: REPLAYS must be a positive number\n");
      return 2;
    }
    const int n = opts.replays;
    const Team world = team_world(rt);
    const Team strided = stride2_team(rt);

    for (auto algo : {ops::AllReduceAlgo::one_shot, ops::AllReduceAlgo::two_shot,
                      ops::AllReduceAlgo::ring, ops::AllReduceAlgo::atomic}) {
      run_case(rt, std::string("all_reduce ") + ops::to_string(algo), n,
               [&] { replay_all_reduce(rt, world, algo, opts); });
    }
    for (auto algo : {ops::ReduceScatterAlgo::one_shot, ops::ReduceScatterAlgo::ring}) {
      run_case(rt, std::string("reduce_scatter ") + ops::to_string(algo), n,
               [&] { replay_reduce_scatter(rt, world, algo, opts); });
    }
    run_case(rt, "all_to_all", n, [&] { replay_all_to_all(rt, world, opts); });
    run_case(rt, "all_to_all_v", n, [&] { replay_all_to_all_v(rt, world, opts); });
    run_case(rt, "broadcast", n, [&] { replay_broadcast(rt, world, opts); });
    run_case(rt, "every collective on stride-2 teams", n,
             [&] { replay_every_collective(rt, strided, opts); });
    run_case(rt, "all_reduce + reduce_scatter + broadcast in one graph", n,
             [&] { replay_three_collectives(rt, opts); });

    for (auto algo : {ops::AllGatherAlgo::oneshot, ops::AllGatherAlgo::ring}) {
      run_case(rt, std::string("all_gather ") + ops::to_string(algo), n,
               [&] { replay_all_gather(rt, algo, 300, opts); });
    }
    for (auto pattern :
         {ops::OverlapPattern::fused_sequential, ops::OverlapPattern::bulk_synchronous}) {
      run_case(rt, std::string("all_reduce_rmsnorm ") + ops::to_string(pattern), n,
               [&] { replay_all_reduce_rmsnorm(rt, pattern, opts); });
    }
    run_case(rt, "moe dispatch + combine f32", n, [&] { replay_moe(rt, MoeReplayCase{}, opts); });
    MoeReplayCase bf16;
    bf16.dtype = ops::MoeDtype::bf16;
    run_case(rt, "moe dispatch + combine bf16", n, [&] { replay_moe(rt, bf16, opts); });

    for (const FusedVariant& v : kFusedVariants) {
      const std::string tag = " " + to_string(v);
      run_case(rt, "ag_gemm" + tag, n, [&] { replay_ag_gemm(rt, v, opts); });
      run_case(rt, "gemm_rs" + tag, n, [&] { replay_gemm_rs(rt, v, opts); });
      run_case(rt, "gemm_ar" + tag, n, [&] { replay_gemm_ar(rt, v, opts); });
      run_case(rt, "gemm_as" + tag, n, [&] { replay_gemm_as(rt, v, opts); });
    }

    // One PE late into every op's waits.
    ReplayOptions late = opts;
    late.replays = opts.replays < 100 ? opts.replays : 100;
    late.delayed_pe = 1 % rt.n_pes();
    late.delay = std::chrono::microseconds(200);
    run_case(rt, "every collective with PE 1 delayed", late.replays,
             [&] { replay_every_collective(rt, world, late); });
    run_case(rt, "moe dispatch + combine with PE 1 delayed", late.replays,
             [&] { replay_moe(rt, MoeReplayCase{}, late); });

    if (rt.pe() == 0) std::printf("graphs: every case passed on %d PEs\n", rt.n_pes());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "graphs_proc: %s\n", e.what());
    return 1;
  }
}
