// One process of a job started by a launcher (tessera-run, mpirun): 20 init/finalize cycles of a
// Runtime from the environment, each with a heap block and a barrier; fails (exit 1) when the
// process holds more file descriptors, threads or mappings after a cycle than after the first.
#include <malloc.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>

#include "reliability/resource_counts.hpp"
#include "tessera/tessera.hpp"

namespace {

constexpr int kCycles = 20;

void one_job() {
  auto options = tessera::Options::from_env();
  options.heap_size = std::size_t{16} << 20;
  tessera::Runtime rt = tessera::Runtime::init(options);
  auto block = rt.alloc<std::uint64_t>(1024);
  std::memset(block.get(), rt.pe(), block.bytes());
  rt.barrier();
  block.reset();
  rt.finalize();
}

}  // namespace

int main() {
  try {
    // One malloc arena, as in hygiene_test.cpp: glibc keeps one per concurrent thread forever.
    // The first job creates what the libraries keep for the life of the process (MPI's and the
    // C library's state); every later one must give back all it took.
    mallopt(M_ARENA_MAX, 1);
    one_job();
    const auto before = tessera::harness::count_resources();
    for (int cycle = 1; cycle <= kCycles; ++cycle) {
      one_job();
      const auto after = tessera::harness::count_resources_within(before);
      if (!after.within(before)) {
        std::fprintf(stderr,
                     "hygiene_proc: after init/finalize cycle %d: %s; before: %s; new "
                     "mappings:\n%s",
                     cycle, after.to_string().c_str(), before.to_string().c_str(),
                     after.new_mappings(before).c_str());
        return 1;
      }
    }
    std::printf("hygiene_proc: %d init/finalize cycles, %s throughout\n", kCycles,
                before.to_string().c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hygiene_proc: %s\n", e.what());
    return 1;
  }
}
