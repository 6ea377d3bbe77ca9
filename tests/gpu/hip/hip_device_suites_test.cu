// The written-once device suites on the hip backend: the litmus suite (tests/device/litmus.hpp)
// and the typed suites (device_suites.hpp and its _sync, _calls and _checked siblings) that
// the host backend runs as gtest cases and gpu_device_suites_test runs on CUDA, compiled by hipcc
// for gfx90a and gfx940 (tests/gpu/hip/CMakeLists.txt) and linked with the HIP build of the
// library. No gtest: clang 15 crashes on gtest's headers in its device pass, so this program runs
// the cases itself, one line per case, and exits 1 when any failed. Each process is one PE;
// ctest starts 2 and 4 under tessera-run with TESSERA_BACKEND=hip. Without an AMD GPU it says
// "no HIP device visible" and exits 0, which ctest reports as skipped.
//
//   hip_device_suites_test [SUBSTRING]   runs the cases whose name contains SUBSTRING
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>

#include "../../device/device_suites_all.hpp"
#include "../../device/litmus.hpp"
#include "tessera/tessera.hpp"

namespace {

namespace td = tessera::device;

struct Tally {
  std::string filter;
  int passed = 0, failed = 0;

  bool wanted(const std::string& name) const {
    return filter.empty() || name.find(filter) != std::string::npos;
  }
  void report(tessera::Runtime& rt, const std::string& name, const tessera::litmus::Result& r) {
    if (r.violations == 0) {
      ++passed;
      if (rt.pe() == 0) std::printf("ok      %s\n", name.c_str());
    } else {
      ++failed;
      std::printf("FAILED  %s on PE %d of %d: %llu mismatches, first: %s\n", name.c_str(), rt.pe(),
                  rt.n_pes(), static_cast<unsigned long long>(r.violations), r.detail.c_str());
    }
    std::fflush(stdout);
  }
};

void run_table(tessera::Runtime& rt, Tally& t, const tessera::suites::Table& table) {
  for (std::size_t i = 0; i < table.size; ++i) {
    const tessera::suites::Case& c = table.cases[i];
    const std::string name = std::string(table.suite) + "_" + c.name;
    if (!t.wanted(name)) continue;
    rt.barrier();
    t.report(rt, name, c.run(rt));
  }
}

template <class G>
void run_litmus(tessera::Runtime& rt, Tally& t, std::uint64_t iterations) {
  for (const auto& c : tessera::litmus::kCases<G>) {
    const std::string name =
        std::string("Litmus_") + tessera::litmus::group_name<G>() + "_" + c.name;
    if (!t.wanted(name)) continue;
    rt.barrier();
    t.report(rt, name, c.run(rt, iterations));
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (!tessera::backend_available(tessera::Backend::hip)) {
    std::printf("no HIP device visible: every case skipped\n");
    return 0;
  }
  Tally t;
  if (argc > 1) t.filter = argv[1];
  try {
    tessera::Options o = tessera::Options::from_env();
    o.backend = tessera::Backend::hip;
    o.heap_size = std::size_t{64} << 20;
    o.timeout = std::chrono::milliseconds(30000);
    auto rt = tessera::Runtime::init(o);
    for (const tessera::suites::Table& table : tessera::suites::kTables) run_table(rt, t, table);
    run_litmus<td::Block>(rt, t, 200);
    run_litmus<td::Warp>(rt, t, 20);
    run_litmus<td::Thread>(rt, t, 20);
    rt.barrier();
  } catch (const std::exception& e) {
    std::printf("FAILED  on an error: %s\n", e.what());
    return 1;
  }
  std::printf("hip device suites: %d passed, %d failed\n", t.passed, t.failed);
  if (t.passed + t.failed == 0) {
    std::printf("no case matches '%s'\n", t.filter.c_str());
    return 2;
  }
  return t.failed == 0 ? 0 : 1;
}
