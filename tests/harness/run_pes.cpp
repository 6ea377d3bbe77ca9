#include "harness/run_pes.hpp"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>

namespace tessera::harness {

Options pe_options(const std::shared_ptr<ThreadsGroup>& group, int rank, const PeOptions& o) {
  Options opts;
  opts.backend = Backend::host;
  opts.bootstrap = make_threads_bootstrap(group, rank, o.timeout);
  opts.heap_size = o.heap_size;
  opts.timeout = o.timeout;
  opts.checked = o.checked;
  if (!o.node_ids.empty()) {
    opts.node_id = o.node_ids.at(static_cast<std::size_t>(rank));
  } else if (const char* size = std::getenv("TESSERA_TEST_NODE_SIZE")) {
    // The fabric-labelled runs of the suites: consecutive PEs form nodes of this size.
    opts.node_id = "node-" + std::to_string(rank / std::max(1, std::atoi(size)));
  }
  // ... and reach the other nodes through the transport the environment names.
  const Options env = Options::from_env();
  opts.fabric = env.fabric;
  opts.fabric_provider = env.fabric_provider;
  opts.p2p = env.p2p;
  return opts;
}

void run_threads(int n, const std::function<void(int rank)>& fn) {
  std::mutex mu;
  std::exception_ptr first;
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(n));
  for (int rank = 0; rank < n; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        fn(rank);
      } catch (...) {
        std::lock_guard lock(mu);
        if (!first) first = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  if (first) std::rethrow_exception(first);
}

void run_pes(int n, const std::function<void(Runtime&)>& fn, const PeOptions& options) {
  auto group = make_threads_group(n);
  run_threads(n, [&](int rank) {
    Runtime rt = Runtime::init(pe_options(group, rank, options));
    fn(rt);
    rt.finalize();
  });
}

}  // namespace tessera::harness
