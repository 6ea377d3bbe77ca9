// The litmus tests across processes: `mpirun -np N device_litmus [iterations]` (default 100000
// per test). Prints one line per test and PE; exits non-zero on any violation or error.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "litmus.hpp"

int main(int argc, char** argv) {
  const std::uint64_t iterations = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 100000;
  try {
    auto options = tessera::Options::from_env();
    if (std::getenv("TESSERA_HEAP_SIZE") == nullptr) options.heap_size = std::size_t{64} << 20;
    auto rt = tessera::Runtime::init(options);
    std::uint64_t total = 0;
    tessera::litmus::run_all(rt, iterations,
                             [&](const char* group, const tessera::litmus::Case& c,
                                 std::uint64_t it, const tessera::litmus::Result& res) {
                               total += res.violations;
                               std::printf(
                                   "litmus %-30s %-6s PE %d/%d: %llu iterations, %llu "
                                   "violations%s%s\n",
                                   c.name, group, rt.pe(), rt.n_pes(),
                                   static_cast<unsigned long long>(it),
                                   static_cast<unsigned long long>(res.violations),
                                   res.detail.empty() ? "" : "; first: ", res.detail.c_str());
                               std::fflush(stdout);
                             });
    rt.finalize();
    return total == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "device_litmus: %s\n", e.what());
    return 2;
  }
}
