// tessera-info: what a job looks like from the inside. Run it under a launcher (tessera-run,
// mpirun); every PE reports, PE 0 prints one table (tessera::job_report):
//   PEs, backend, bootstrap and heap size; the nodes and their PEs; per PE its node, NUMA node,
//   the cores its proxy thread runs on, the fabric provider and NIC, and how it reaches each PE
//   (self, mapped, proxy, unreachable).
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "tessera/job_report.hpp"
#include "tessera/tessera.hpp"

int main() {
  try {
    auto options = tessera::Options::from_env();
    if (std::getenv("TESSERA_HEAP_SIZE") == nullptr) options.heap_size = std::size_t{64} << 20;
    auto rt = tessera::Runtime::init(options);
    const std::string report = tessera::job_report(rt);
    std::fputs(report.c_str(), stdout);
    std::fflush(stdout);
    rt.finalize();
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera-info: %s\n", e.what());
    return 1;
  }
}
