// Every written-once device suite by name: the one list that the programs running all of them
// walk (gpu_device_suites_test on CUDA, hip_device_suites_test on HIP, device_suites_compile for
// hipcc), so a new table is added here once. The host runs each table from its own gtest file.
#pragma once

#include <cstddef>

#include "device_suites.hpp"
#include "device_suites_calls.hpp"
#include "device_suites_checked.hpp"
#include "device_suites_sync.hpp"

namespace tessera::suites {

struct Table {
  const char* suite;  // the prefix of its cases' names in the GPU programs
  const Case* cases;
  std::size_t size;
};

template <std::size_t N>
constexpr Table table(const char* suite, const Case (&cases)[N]) {
  return {suite, cases, N};
}

inline constexpr Table kTables[] = {
    table("Rma", kRmaCases),
    table("LongTile", kLongTileCases),
    table("Signal", kSignalCases),
    table("Atomic", kAtomicCases),
    table("DeviceBarrier", kBarrierCases),
    table("DeviceTeamBarrier", kTeamCases),
    table("Calls", kCallsCases),
    table("Alignment", kAlignmentCases),
};

}  // namespace tessera::suites
