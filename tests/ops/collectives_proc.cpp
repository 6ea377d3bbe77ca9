// reduce_scatter, all_to_all, all_to_all_v and broadcast as real processes, one per PE (run under
// mpirun): on the world team and on this PE's stride-2 team, 10 calls of each with fresh data and
// no barrier between them, checked exactly (small integers, which every dtype holds). Exits 0
// when every PE verified every call.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "tessera/ops/all_to_all.hpp"
#include "tessera/ops/broadcast.hpp"
#include "tessera/ops/reduce_scatter.hpp"
#include "tessera/tessera.hpp"

namespace {

using namespace tessera;

constexpr int kCalls = 10;

// Element i of world PE `pe`'s data in call `call`: an integer in [-8, 8].
int value(int pe, int call, std::size_t i) {
  const std::size_t h = static_cast<std::size_t>(pe) * 7919u +
                        static_cast<std::size_t>(call) * 131u + i * 2654435761u;
  return static_cast<int>((h >> 7) & 15) - 8;
}

bool report(int pe, const std::string& what, bool ok) {
  if (!ok) std::fprintf(stderr, "PE %d: %s: wrong result\n", pe, what.c_str());
  return ok;
}

bool check_team(Runtime& rt, const Team& team, const std::string& name) {
  const int me = rt.pe(), r = team.my_rank;
  const auto m = static_cast<std::size_t>(team.size);
  constexpr std::size_t kCount = 3001;
  auto heap = rt.alloc<std::int32_t>(m * kCount);
  auto heap_f = rt.alloc<float>(kCount);
  bool ok = true;
  for (int call = 0; call < kCalls; ++call) {
    const std::string tag = name + " call " + std::to_string(call);
    // reduce_scatter, f32 sum, alternating algorithms.
    std::vector<float> send_f(m * kCount);
    for (std::size_t i = 0; i < send_f.size(); ++i)
      send_f[i] = static_cast<float>(value(me, call, i));
    ops::reduce_scatter(
        rt, rt.stream(), team, send_f.data(), heap_f.get(), kCount, ops::Dtype::f32,
        ops::ReduceOp::sum,
        call % 2 == 0 ? ops::ReduceScatterAlgo::one_shot : ops::ReduceScatterAlgo::ring);
    rt.stream().synchronize();
    bool good = true;
    for (std::size_t i = 0; i < kCount; ++i) {
      int want = 0;
      for (int j = 0; j < team.size; ++j)
        want += value(team.pe(j), call, static_cast<std::size_t>(r) * kCount + i);
      good = good && heap_f[i] == static_cast<float>(want);
    }
    ok = report(me, "reduce_scatter " + tag, good) && ok;
    // all_to_all, i32, in place every third call.
    std::vector<std::int32_t> send(m * kCount);
    std::int32_t* src = call % 3 == 0 ? heap.get() : send.data();
    for (std::size_t i = 0; i < m * kCount; ++i) src[i] = value(me, call, i);
    ops::all_to_all(rt, rt.stream(), team, src, heap.get(), kCount, ops::Dtype::i32);
    rt.stream().synchronize();
    good = true;
    for (std::size_t i = 0; i < m * kCount; ++i) {
      const int from = team.pe(static_cast<int>(i / kCount));
      good =
          good && heap[i] == value(from, call, static_cast<std::size_t>(r) * kCount + i % kCount);
    }
    ok = report(me, "all_to_all " + tag, good) && ok;
    // all_to_all_v: 1 + (s + j + call) % 5 elements from rank s to rank j.
    std::vector<std::size_t> counts(m), got(m), offsets(m);
    std::size_t total = 0;
    for (std::size_t j = 0; j < m; ++j)
      total += counts[j] =
          1 + (static_cast<std::size_t>(r) + j + static_cast<std::size_t>(call)) % 5;
    for (std::size_t i = 0; i < total; ++i) send[i] = value(me, call, i);
    ops::all_to_all_v(rt, rt.stream(), team, send.data(), counts.data(), heap.get(), m * kCount,
                      got.data(), offsets.data(), ops::Dtype::i32);
    rt.stream().synchronize();
    good = true;
    std::size_t at = 0;
    for (std::size_t s = 0; s < m; ++s) {
      const std::size_t n =
          1 + (s + static_cast<std::size_t>(r) + static_cast<std::size_t>(call)) % 5;
      std::size_t first = 0;
      for (std::size_t j = 0; j < static_cast<std::size_t>(r); ++j)
        first += 1 + (s + j + static_cast<std::size_t>(call)) % 5;
      good = good && got[s] == n && offsets[s] == at;
      for (std::size_t i = 0; i < n && good; ++i)
        good = heap[at + i] == value(team.pe(static_cast<int>(s)), call, first + i);
      at += n;
    }
    ok = report(me, "all_to_all_v " + tag, good) && ok;
    // broadcast from every rank in turn; from the heap (read in place by members) or privately.
    const int root = call % team.size;
    std::int32_t* bsrc = call % 2 == 0 ? heap.get() : send.data();
    if (r == root) {
      for (std::size_t i = 0; i < kCount; ++i) bsrc[i] = value(me, call, i);
    }
    ops::broadcast(rt, rt.stream(), team, bsrc, heap.get(), kCount, ops::Dtype::i32, root);
    rt.stream().synchronize();
    good = true;
    for (std::size_t i = 0; i < kCount; ++i)
      good = good && heap[i] == value(team.pe(root), call, i);
    ok = report(me, "broadcast " + tag, good) && ok;
  }
  return ok;
}

}  // namespace

int main() {
  try {
    Runtime rt = Runtime::init(Options::from_env());
    const Team world = team_world(rt);
    const int n = rt.n_pes();
    const Team evens = team_split_strided(rt, world, 0, 2, (n + 1) / 2);
    const Team odds = n > 1 ? team_split_strided(rt, world, 1, 2, n / 2) : Team{};
    bool ok = check_team(rt, world, "world");
    ok = check_team(rt, evens.is_member() ? evens : odds, "stride 2") && ok;
    rt.barrier();
    if (rt.pe() == 0 && ok) std::printf("collectives: every call verified on %d PEs\n", n);
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "collectives_proc: %s\n", e.what());
    return 1;
  }
}
