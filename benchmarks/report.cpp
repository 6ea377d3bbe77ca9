#include "report.hpp"

#include <algorithm>
#include <cmath>

namespace tessera::bench {
namespace {

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  char text[32];
  std::snprintf(text, sizeof(text), "%.4f", value);
  return text;
}

std::string json_number(const std::optional<double>& value) {
  return value ? json_number(*value) : "null";
}

std::string field_text(const Field& field, bool json) {
  if (const auto* i = std::get_if<std::int64_t>(&field.value)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&field.value)) return json_number(*d);
  const auto& s = std::get<std::string>(field.value);
  return json ? json_string(s) : s;
}

std::string table_number(const std::optional<double>& value, const char* format) {
  if (!value) return "n/a";
  char text[32];
  std::snprintf(text, sizeof(text), format, *value);
  return text;
}

std::string bytes_text(std::size_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB"};
  int unit = 0;
  auto value = bytes;
  while (unit < 3 && value >= 1024 && value % 1024 == 0) {
    value /= 1024;
    ++unit;
  }
  return std::to_string(value) + " " + kUnits[unit];
}

}  // namespace

double median(std::vector<double> samples) {
  if (samples.empty()) return 0;
  const std::size_t mid = samples.size() / 2;
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(mid),
                   samples.end());
  const double upper = samples[mid];
  if (samples.size() % 2 == 1) return upper;
  const double lower =
      *std::max_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2;
}

std::optional<double> Row::fraction_of_limit() const {
  if (!limit_time_us || time_us <= 0) return std::nullopt;
  return *limit_time_us / time_us;
}

std::optional<double> Row::speedup_vs_peer() const {
  if (!peer_time_us || time_us <= 0) return std::nullopt;
  return *peer_time_us / time_us;
}

std::string Report::to_json(const Row& row) {
  std::string line =
      "{\"bench\": " + json_string(row.bench) + ", \"variant\": " + json_string(row.variant) +
      ", \"pes\": " + std::to_string(row.pes) + ", \"bytes\": " + std::to_string(row.bytes) +
      ", \"iters\": " + std::to_string(row.iters) + ", \"time_us\": " + json_number(row.time_us) +
      ", \"limit_time_us\": " + json_number(row.limit_time_us) +
      ", \"peer_time_us\": " + json_number(row.peer_time_us) +
      ", \"fraction_of_limit\": " + json_number(row.fraction_of_limit()) +
      ", \"speedup_vs_peer\": " + json_number(row.speedup_vs_peer());
  if (!row.peer_time_us && !row.peer_note.empty()) {
    line += ", \"peer_note\": " + json_string(row.peer_note);
  }
  for (const Field& field : row.extra) {
    line += ", " + json_string(field.name) + ": " + field_text(field, true);
  }
  return line + "}";
}

void Report::note(const std::string& text) {
  if (json_) return;
  std::fprintf(out_, "# %s\n", text.c_str());
  std::fflush(out_);
}

void Report::print_table_header() {
  std::fprintf(out_, "%-8s %-10s %10s %12s %12s %12s %9s %9s %9s  %s\n", "bench", "variant",
               "bytes", "time_us", "limit_us", "peer_us", "of_limit", "vs_peer", "GB/s", "extra");
  header_printed_ = true;
}

void Report::add(const Row& row) {
  if (json_) {
    std::fprintf(out_, "%s\n", to_json(row).c_str());
    std::fflush(out_);
    return;
  }
  if (!header_printed_) print_table_header();
  std::string extra;
  for (const Field& field : row.extra) {
    extra += (extra.empty() ? "" : " ") + field.name + "=" + field_text(field, false);
  }
  const double gb_per_s = row.time_us > 0 ? static_cast<double>(row.bytes) / row.time_us / 1e3 : 0;
  std::fprintf(out_, "%-8s %-10s %10s %12.3f %12s %12s %9s %9s %9.2f  %s\n", row.bench.c_str(),
               row.variant.c_str(), bytes_text(row.bytes).c_str(), row.time_us,
               table_number(row.limit_time_us, "%.3f").c_str(),
               table_number(row.peer_time_us, "%.3f").c_str(),
               table_number(row.fraction_of_limit(), "%.3f").c_str(),
               table_number(row.speedup_vs_peer(), "%.3f").c_str(), gb_per_s, extra.c_str());
  std::fflush(out_);
}

}  // namespace tessera::bench
