// tessera-bench <name> [--sizes LIST] [--iters N] [--blocks LIST] [--graph] [--json]
//
// Runs under any launcher (mpirun, tessera-run, or alone); the Runtime comes from
// Options::from_env(). Every subcommand measures PE 0 -> PE 1, so with fewer than 2 PEs it prints
// why and exits with status 2. PE 0 prints the results: a table, or one JSON object per line.
#include <cstdio>
#include <exception>
#include <optional>

#include "idle_barrier.hpp"
#include "options.hpp"
#include "registry.hpp"
#include "report.hpp"
#include "shmem/state.hpp"
#include "tessera/runtime.hpp"
#include "tessera/shmem.h"
#include "tessera/stream.hpp"

namespace {

using tessera::bench::Benchmark;

void print_usage(std::FILE* out) {
  std::fprintf(out,
               "usage: tessera-bench <name> [--sizes LIST] [--iters N] [--blocks LIST] [--graph] "
               "[--json]\n"
               "  --sizes LIST   comma-separated byte counts, K/M/G suffixes (e.g. 8,64K,1M)\n"
               "  --iters N      timed iterations per point (after an untimed warm-up)\n"
               "  --blocks LIST  grid sizes for put (default 1,4)\n"
               "  --shapes LIST  MxNxK for ag_gemm, gemm_rs, taxonomy (e.g. 2048x2048x2048)\n"
               "  --graph        all_reduce, all_gather, moe and the other collectives: also time\n"
               "                 the call captured once and replayed (variant <name>/graph)\n"
               "  --json         one JSON object per line instead of a table\n"
               "Run with 2 or more PEs: mpirun -np 2 tessera-bench put, or tessera-run -np 2 ...\n"
               "benchmarks:\n");
  for (const Benchmark& b : tessera::bench::benchmarks()) {
    std::fprintf(out, "  %-8s %s\n", b.name, b.summary);
  }
}

}  // namespace

int main(int argc, char** argv) {
  tessera::bench::BenchOptions options;
  try {
    options = tessera::bench::parse_options(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    print_usage(stderr);
    return 2;
  }
  if (options.help) {
    print_usage(stdout);
    return 0;
  }
  const Benchmark* bench = tessera::bench::find_benchmark(options.name);
  if (bench == nullptr) {
    if (options.name.empty()) {
      std::fprintf(stderr, "tessera-bench: no benchmark named\n");
    } else {
      std::fprintf(stderr, "tessera-bench: unknown benchmark '%s'\n", options.name.c_str());
    }
    print_usage(stderr);
    return 2;
  }

  try {
    // A benchmark of the OpenSHMEM C API runs on the runtime shmem_init makes (the C API's
    // default runtime); the others on their own.
    std::optional<tessera::Runtime> own;
    if (bench->shmem) {
      shmem_init();
    } else {
      own.emplace(tessera::Runtime::init(tessera::Options::from_env()));
    }
    tessera::Runtime& rt = bench->shmem ? tessera::shmem::g_state->runtime : *own;
    if (rt.n_pes() < 2) {
      std::fprintf(stderr,
                   "tessera-bench %s: needs at least 2 PEs (it measures PE 0 -> PE 1), got %d; "
                   "run it as `mpirun -np 2 tessera-bench %s` or `tessera-run -np 2 "
                   "tessera-bench %s`\n",
                   bench->name, rt.n_pes(), bench->name, bench->name);
      return 2;
    }
    if (rt.stream().native_handle() != nullptr && !bench->gpu) {
      std::fprintf(stderr,
                   "tessera-bench %s: runs on the host backend only so far (it hands host buffers "
                   "to kernels); on the %s backend only put and signal run. Use "
                   "TESSERA_BACKEND=host\n",
                   bench->name, tessera::to_string(rt.backend()));
      return 2;
    }
    tessera::bench::IdleBarrier idle(rt);
    std::optional<tessera::bench::Report> report;
    if (rt.pe() == 0) report.emplace(options.json);
    tessera::bench::BenchEnv env{rt, rt.stream(), idle, options, report ? &*report : nullptr};
    bench->run(env);
    if (bench->shmem) {
      shmem_finalize();  // its barrier, then the runtime's finalize
    } else {
      rt.barrier();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera-bench %s: %s\n", bench->name, e.what());
    return 1;
  }
  return 0;
}
