// Command line of tessera-bench: `tessera-bench <name> [--sizes LIST] [--iters N] [--blocks LIST]
// [--graph] [--json]`. Parsed the same way on every PE, so every PE runs the same measurement
// sequence.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace tessera::bench {

// A global GEMM shape M x N x K, as `--shapes 2048x2048x2048,8192x256x2048` spells it.
struct GemmShape {
  std::size_t m = 0, n = 0, k = 0;
};

struct BenchOptions {
  std::string name;                // the subcommand
  std::vector<std::size_t> sizes;  // bytes per point; empty = the subcommand's default
  int iters = 0;                   // timed iterations per point; 0 = the subcommand's default
  std::vector<int> blocks;         // grid sizes (put); empty = the subcommand's default
  std::vector<GemmShape> shapes;   // global GEMM shapes (ag_gemm, gemm_rs); empty = default
  bool graph = false;              // also time each call captured once and replayed (Graph)
  bool json = false;               // one JSON object per line instead of a table
  bool help = false;
};

// Parses argv[1..]; throws tessera::Error(invalid_argument) naming the offending argument.
BenchOptions parse_options(int argc, char** argv);

// "8,64K,1M" -> {8, 65536, 1048576} (suffixes K/M/G, as tessera::parse_size).
std::vector<std::size_t> parse_size_list(const std::string& text);

// "2048x2048x2048,8192x256x2048" -> {{2048, 2048, 2048}, {8192, 256, 2048}}; every extent must
// be a positive integer.
std::vector<GemmShape> parse_shape_list(const std::string& text);

// "1,4" -> {1, 4}; every entry must be a positive integer.
std::vector<int> parse_int_list(const std::string& text, const char* what);

}  // namespace tessera::bench
