// all_gather: every PE contributes a buffer of floats, tessera::ops::all_gather gathers them on
// every PE, and each PE checks the result against the values it knows every PE sent; then
// prints the median time per call for both algorithms.
//
//   mpirun -np 4 --oversubscribe ./all_gather [bytes_per_pe]   (MPI bootstrap)
//   ./all_gather                                                (one PE)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

#include "example.hpp"
#include "tessera/ops/all_gather.hpp"
#include "tessera/tessera.hpp"

namespace {

// The value PE `pe` sends at index i of call `call`.
float value_of(int pe, int call, std::size_t i) {
  return static_cast<float>(pe * 1000003 + call * 7919) + static_cast<float>(i % 4099);
}

bool run(tessera::Runtime& rt, std::size_t bytes) {
  const int me = rt.pe(), n = rt.n_pes();
  const std::size_t count = std::max<std::size_t>(1, bytes / sizeof(float));
  auto recv = rt.alloc<float>(count * static_cast<std::size_t>(n));
  std::vector<float> send(count);
  bool ok = true;
  constexpr int kCalls = 20;
  for (auto algo : {tessera::ops::AllGatherAlgo::oneshot, tessera::ops::AllGatherAlgo::ring}) {
    std::vector<double> times;
    for (int call = 0; call < kCalls; ++call) {
      for (std::size_t i = 0; i < count; ++i) send[i] = value_of(me, call, i);
      times.push_back(1000.0 * example::time_ms(rt, [&] {
                        tessera::ops::all_gather(rt, rt.stream(), send.data(), recv.get(),
                                                 count * sizeof(float), algo);
                      }));
      for (int p = 0; p < n && ok; ++p) {
        for (std::size_t i = 0; i < count; ++i) {
          if (recv[static_cast<std::size_t>(p) * count + i] != value_of(p, call, i)) {
            std::fprintf(stderr, "PE %d: %s call %d: element %zu from PE %d is wrong\n", me,
                         tessera::ops::to_string(algo), call, i, p);
            ok = false;
            break;
          }
        }
      }
    }
    std::sort(times.begin(), times.end());
    std::printf("PE %d of %d: all_gather %s of %zu bytes per PE: median %.1f us, %s\n", me, n,
                tessera::ops::to_string(algo), count * sizeof(float), times[times.size() / 2],
                ok ? "verified" : "WRONG");
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  return example::run("all_gather", [&](tessera::Runtime& rt) {
    return run(rt, argc > 1 ? tessera::parse_size(argv[1]) : std::size_t{1} << 20);
  });
}
