// Results of tessera-bench: one Row per measured point, printed by PE 0 as a table row or as one
// JSON object per line (--json). Every row carries tessera's time, the physical limit's and the
// peer's (all medians measured in the same run), and the two ratios derived from them.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace tessera::bench {

// The median of `samples` (the mean of the two middle values for an even count); 0 when empty.
double median(std::vector<double> samples);

// A subcommand-specific column (m, n, k, tokens, blocks, ...): a name and a number or a string.
struct Field {
  std::string name;
  std::variant<std::int64_t, double, std::string> value;
};

struct Row {
  std::string bench;    // subcommand: "put", "signal", ...
  std::string variant;  // e.g. "blocks4", "pingpong"
  int pes = 0;
  std::size_t bytes = 0;
  int iters = 0;
  double time_us = 0;                   // tessera, median
  std::optional<double> limit_time_us;  // the physical limit, median
  std::optional<double> peer_time_us;   // the peer (MPI), median; empty when not measurable
  std::string peer_note;                // why peer_time_us is empty
  std::vector<Field> extra;             // printed after the standard fields, in order

  // limit_time_us / time_us: 1 means tessera reaches the limit.
  std::optional<double> fraction_of_limit() const;
  // peer_time_us / time_us: above 1 means tessera is faster than the peer.
  std::optional<double> speedup_vs_peer() const;
};

// Prints rows as they are measured. Only PE 0 makes one; the other PEs print nothing.
class Report {
 public:
  explicit Report(bool json, std::FILE* out = stdout) : json_(json), out_(out) {}

  // A line of context above the table ("limit = ..."); table mode only (JSON rows carry it).
  void note(const std::string& text);
  void add(const Row& row);

  // The JSON object of a row on one line, without the newline.
  static std::string to_json(const Row& row);

 private:
  void print_table_header();
  bool json_;
  std::FILE* out_;
  bool header_printed_ = false;
};

}  // namespace tessera::bench
