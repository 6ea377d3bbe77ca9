// all_reduce: every PE contributes a buffer of floats, tessera::ops::all_reduce sums them on
// every PE of the world team, and each PE checks the result against the sum it computes itself
// from what every PE sent; then prints the median time per call for each algorithm. Last, the
// even and odd PEs each reduce over their own stride-2 team.
//
//   mpirun -np 4 --oversubscribe ./all_reduce [bytes_per_pe]   (MPI bootstrap)
//   ./all_reduce                                                (one PE)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

#include "example.hpp"
#include "tessera/ops/all_reduce.hpp"
#include "tessera/tessera.hpp"

namespace {

namespace ops = tessera::ops;

// The value PE `pe` sends at index i of call `call`: small integers, so float sums are exact.
float value_of(int pe, int call, std::size_t i) {
  return static_cast<float>(
      static_cast<int>((static_cast<std::size_t>(pe) * 7 + static_cast<std::size_t>(call) * 3 + i) %
                       17) -
      8);
}

// Runs `calls` sums on `team` and checks each; returns false on the first wrong element.
bool reduce_and_check(tessera::Runtime& rt, const tessera::Team& team, float* recv,
                      std::vector<float>& send, ops::AllReduceAlgo algo, int calls,
                      std::vector<double>& times) {
  const std::size_t count = send.size();
  for (int call = 0; call < calls; ++call) {
    for (std::size_t i = 0; i < count; ++i) send[i] = value_of(rt.pe(), call, i);
    const auto t0 = std::chrono::steady_clock::now();
    ops::all_reduce(rt, rt.stream(), team, send.data(), recv, count, ops::Dtype::f32,
                    ops::ReduceOp::sum, algo);
    rt.stream().synchronize();
    times.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    for (std::size_t i = 0; i < count; ++i) {
      float want = 0;
      for (int r = 0; r < team.n_pes(); ++r) want += value_of(team.pe(r), call, i);
      if (recv[i] != want) {
        std::fprintf(stderr, "PE %d: %s call %d: element %zu is %g, expected %g\n", rt.pe(),
                     ops::to_string(algo), call, i, static_cast<double>(recv[i]),
                     static_cast<double>(want));
        return false;
      }
    }
  }
  return true;
}

bool run(tessera::Runtime& rt, std::size_t bytes) {
  const int me = rt.pe(), n = rt.n_pes();
  const std::size_t count = std::max<std::size_t>(1, bytes / sizeof(float));
  const tessera::Team world = tessera::team_world(rt);
  const tessera::Team evens = tessera::team_split_strided(rt, world, 0, 2, (n + 1) / 2);
  const tessera::Team odds =
      n > 1 ? tessera::team_split_strided(rt, world, 1, 2, n / 2) : tessera::Team{};
  auto recv = rt.alloc<float>(count);
  std::vector<float> send(count);
  bool ok = true;
  for (auto algo :
       {ops::AllReduceAlgo::automatic, ops::AllReduceAlgo::one_shot, ops::AllReduceAlgo::two_shot,
        ops::AllReduceAlgo::ring, ops::AllReduceAlgo::atomic}) {
    std::vector<double> times;
    ok = ok && reduce_and_check(rt, world, recv.get(), send, algo, 20, times);
    std::sort(times.begin(), times.end());
    std::printf("PE %d of %d: all_reduce %s (runs %s) of %zu bytes: median %.1f us, %s\n", me, n,
                ops::to_string(algo),
                ops::to_string(ops::resolve_all_reduce_algo(count, ops::Dtype::f32, n, algo)),
                count * sizeof(float), times.empty() ? 0.0 : times[times.size() / 2],
                ok ? "verified" : "WRONG");
  }
  std::vector<double> times;
  const tessera::Team& mine = evens.is_member() ? evens : odds;
  ok = ok && reduce_and_check(rt, mine, recv.get(), send, ops::AllReduceAlgo::automatic, 5, times);
  std::printf("PE %d of %d: all_reduce on the stride-2 team of PE %d (%d members): %s\n", me, n,
              mine.pe(0), mine.n_pes(), ok ? "verified" : "WRONG");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  return example::run("all_reduce", [&](tessera::Runtime& rt) {
    return run(rt, argc > 1 ? tessera::parse_size(argv[1]) : std::size_t{1} << 20);
  });
}
