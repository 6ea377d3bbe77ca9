// tessera-info: what a job looks like from the inside. Run it under a launcher (tessera-run,
// mpirun); every PE reports, PE 0 prints one table (tessera::job_report):
//   PEs, backend, bootstrap and heap size; the nodes and their PEs; per PE its node, NUMA node,
//   the cores its proxy thread runs on, the fabric provider and NIC, and how it reaches each PE
//   (self, mapped, proxy, unreachable).
// tessera-info --gpu: the GPU preflight, in one process, no job: per GPU runtime its driver and
//   runtime versions (and the true cause when no device is usable: not built, no driver, driver
//   too old, no device), MPS, and per device compute mode, MIG, cooperative launch, host native
//   atomics, VMM + POSIX fd, GPUDirect RDMA; per device pair peer access and native atomics.
//   Exits 1 with the cause when no GPU can run Tessera here, 0 otherwise.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "runtime/backend_selection.hpp"
#include "tessera/job_report.hpp"
#include "tessera/tessera.hpp"

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--gpu") {
    bool ok = false;
    const std::string report = tessera::detail::gpu_preflight_report(ok);
    std::fputs(report.c_str(), stdout);
    std::fflush(stdout);
    return ok ? 0 : 1;
  }
  if (argc > 1) {
    std::fprintf(stderr, "usage: tessera-info [--gpu]\n");
    return 2;
  }
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
