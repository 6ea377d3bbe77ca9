// The raw-write benchmark helper (fabric_raw_write_times, fabric.hpp): timed writes on a fresh
// endpoint of the proxy's provider, with no ring or proxy engine in the way, so the bench can
// quote the fabric's own limit next to the proxy's numbers.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "transport/fabric.hpp"
#include "transport/fabric_endpoint.hpp"

namespace tessera::detail {

std::vector<double> fabric_raw_write_times(Bootstrap& bootstrap, const std::string& provider,
                                           int from, int to, std::size_t bytes, int rounds,
                                           Timeout) {
  using Clock = std::chrono::steady_clock;
  const int pe = bootstrap.rank();
  const bool active = pe == from || pe == to;
  std::vector<char> buffer(active ? std::max<std::size_t>(bytes, 64) : 64, 1);
  FabricEndpoint endpoint(bootstrap, pe, bootstrap.size(), provider, buffer.data(), nullptr,
                          SegmentRegions{buffer.size(), 0, 0}, nullptr);
  std::vector<double> times;
  std::atomic<bool> done{false};
  std::thread progress;
  if (pe != from) {
    // Targets of manual-progress providers must read their queue for writes to land.
    progress = std::thread([&] {
      while (!done.load(std::memory_order_acquire)) {
        if (FabricEndpoint::again(endpoint.read_one())) std::this_thread::yield();
      }
    });
  }
  bootstrap.barrier();
  if (pe == from) {
    void* desc = endpoint.local_desc(buffer.data(), bytes);
    FabricOpContext context{};
    for (int r = 0; r < rounds; ++r) {
      const auto t0 = Clock::now();
      int rc;
      while (
          FabricEndpoint::again(rc = endpoint.write(&context, buffer.data(), bytes, desc, to, 0)))
        endpoint.read_one();
      if (rc != 0) endpoint.check(rc, "fi_writemsg");
      for (;;) {
        const int n = endpoint.read_one();
        if (n == 1) break;
        if (!FabricEndpoint::again(n)) endpoint.check(n, "fi_cq_read");
      }
      times.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
  }
  bootstrap.barrier();
  done.store(true, std::memory_order_release);
  if (progress.joinable()) progress.join();
  return times;
}

}  // namespace tessera::detail
