// Runs the backend-neutral device suites of device_suites.hpp as gtest cases on the host
// backend, in one of two modes:
//   - PEs as threads of this process (harness::run_pes), each case with checked mode off and
//     then on, with the case's own PE count;
//   - as processes under tessera-run (TESSERA_SUITES_AS_PROCESSES=1): every process is one PE,
//     one Runtime serves every case, and the job's size and TESSERA_CHECK decide.
// One gtest case per suite case, named after it (the same names as gpu_device_suites_test).
#pragma once

#include <cstdlib>
#include <optional>
#include <ostream>
#include <string>

#include "device_suites.hpp"
#include "device_test_util.hpp"

namespace tessera::suites {
// gtest prints a case by its name (ctest's test names then read well).
inline void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }
}  // namespace tessera::suites

namespace tessera::device_test {

inline bool suites_as_processes() { return env_flag("TESSERA_SUITES_AS_PROCESSES"); }

// The process's one PE when run as processes (ProcessPe).
[[maybe_unused]] inline ::testing::Environment* const kSuiteProcessEnv =
    process_pe_environment("TESSERA_SUITES_AS_PROCESSES");

inline void expect_no_mismatch(Runtime& rt, const suites::Case& c) {
  const suites::Result res = c.run(rt);
  EXPECT_EQ(res.violations, 0u) << c.name << " on PE " << rt.pe() << " of " << rt.n_pes()
                                << ": first mismatch: " << res.detail;
}

// Runs case c on every PE in the mode above.
inline void run_suite_case(const suites::Case& c) {
  if (suites_as_processes()) {
    Runtime& rt = ProcessPe::get();
    rt.barrier();
    expect_no_mismatch(rt, c);
    rt.barrier();
    return;
  }
  for (bool checked : {false, true}) {
    SCOPED_TRACE(checked ? "TESSERA_CHECK=1" : "TESSERA_CHECK=0");
    harness::PeOptions o;
    o.checked = checked;
    harness::run_pes(
        c.pes, [&](Runtime& rt) { expect_no_mismatch(rt, c); }, o);
  }
}

// gtest's parameter name of a case.
inline std::string suite_case_name(const ::testing::TestParamInfo<suites::Case>& info) {
  return info.param.name;
}

// For host-only cases (they make thread PEs of their own): skipped across processes.
#define TESSERA_SKIP_ACROSS_PROCESSES()                                                      \
  do {                                                                                       \
    if (::tessera::device_test::suites_as_processes())                                       \
      GTEST_SKIP() << "host-only case: runs with PEs as threads (device_suites.hpp's cases " \
                      "run across processes)";                                               \
  } while (0)

}  // namespace tessera::device_test
