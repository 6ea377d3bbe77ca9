// Test harness: n PEs as threads of the test process, each with its own Runtime over a shared
// threads bootstrap.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace tessera::harness {

struct PeOptions {
  std::size_t heap_size = std::size_t{64} << 20;
  std::vector<std::string> node_ids;  // per PE; empty = all on one node
  std::chrono::milliseconds timeout{30000};
  bool checked = false;
};

// Options for PE `rank` of a threads job on `group`.
Options pe_options(const std::shared_ptr<ThreadsGroup>& group, int rank, const PeOptions& o);

// Runs fn(rank) on n threads and joins them; rethrows the first exception any thread threw.
void run_threads(int n, const std::function<void(int rank)>& fn);

// Starts n PEs as threads, each calling fn with its initialized Runtime, then finalizes.
// Rethrows the first exception a PE threw (the other PEs then see PeerLost or finish).
void run_pes(int n, const std::function<void(Runtime&)>& fn, const PeOptions& options = {});

}  // namespace tessera::harness
