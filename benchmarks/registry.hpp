// The subcommands of tessera-bench. Adding one: write bench_<name>.cpp with a
// `void run_<name>(BenchEnv&)`, list it in registry.cpp, add the file to CMakeLists.txt.
#pragma once

#include <string_view>
#include <vector>

#include "idle_barrier.hpp"
#include "options.hpp"
#include "report.hpp"
#include "tessera/runtime.hpp"
#include "tessera/stream.hpp"

namespace tessera::bench {

// What a subcommand runs with. run() is called on every PE with the same options; it does
// collective work (allocations, MPI peer calls) in the same order on every PE.
struct BenchEnv {
  Runtime& rt;
  Stream& stream;     // the Runtime's stream, for tessera::launch
  IdleBarrier& idle;  // separates phases without spinning on the cores being measured
  const BenchOptions& options;
  Report* report;  // PE 0 only; null elsewhere
};

struct Benchmark {
  const char* name;
  const char* summary;  // one line for --help
  void (*run)(BenchEnv& env);
  // Runs on a GPU backend too. The others pass host buffers to kernels and ops, so on the cuda
  // backend tessera-bench refuses them with a message instead of faulting.
  bool gpu = false;
  // Runs over the OpenSHMEM default runtime: tessera-bench calls shmem_init (instead of
  // Runtime::init) and shmem_finalize, and BenchEnv::rt is the runtime behind the C API.
  bool shmem = false;
};

// Every subcommand, in --help order.
const std::vector<Benchmark>& benchmarks();
// The subcommand called `name`, or null.
const Benchmark* find_benchmark(std::string_view name);

}  // namespace tessera::bench
