// Resource hygiene (DESIGN §8): a Runtime gives back every file descriptor, thread and memory
// mapping at finalize. 20 init/finalize cycles of a threads job must end where they began.
#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdint>
#include <cstring>

#include "harness/run_pes.hpp"
#include "reliability/resource_counts.hpp"

namespace tessera::harness {
namespace {

constexpr int kCycles = 20;

// One job's life: init, a heap block used by every PE, a barrier, finalize.
void one_job(int n_pes) {
  run_pes(n_pes, [](Runtime& rt) {
    auto block = rt.alloc<std::uint64_t>(1024);
    std::memset(block.get(), rt.pe(), block.bytes());
    rt.barrier();
    std::uint64_t seen = 0;
    rt.get(&seen, block.get(), sizeof(seen), (rt.pe() + 1) % rt.n_pes());
    rt.barrier();
  });
}

void expect_no_growth(int n_pes) {
  // glibc gives each new thread a malloc arena (a 64 MiB mapping) and keeps it for the life of
  // the process, more of them the more threads ran at once: one arena keeps that out of the
  // count. A first job then creates what the C library keeps after first use (cached thread
  // stacks, the resolver, locale data); none of it is Tessera's to give back.
  mallopt(M_ARENA_MAX, 1);
  one_job(n_pes);
  const ResourceCounts before = count_resources();
  for (int cycle = 1; cycle <= kCycles; ++cycle) {
    one_job(n_pes);
    const ResourceCounts after = count_resources_within(before);
    ASSERT_TRUE(after.within(before))
        << "after init/finalize cycle " << cycle << " of " << n_pes << " PEs: " << after.to_string()
        << "; before the cycles: " << before.to_string() << "; new mappings:\n"
        << after.new_mappings(before);
  }
}

TEST(Hygiene, ThreadsJobOfOnePeReleasesFdsThreadsAndMappings) { expect_no_growth(1); }

TEST(Hygiene, ThreadsJobOfFourPesReleasesFdsThreadsAndMappings) { expect_no_growth(4); }

}  // namespace
}  // namespace tessera::harness
