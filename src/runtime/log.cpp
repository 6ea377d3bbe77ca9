#include "runtime/log.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace tessera::detail {

LogLevel parse_log_level(const std::string& text) {
  std::string upper = text;
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  if (upper == "OFF" || upper == "NONE") return LogLevel::off;
  if (upper == "WARN" || upper == "WARNING") return LogLevel::warn;
  if (upper == "INFO") return LogLevel::info;
  if (upper == "TRACE") return LogLevel::trace;
  throw Error(ErrorCode::invalid_argument, -1,
              "TESSERA_DEBUG: expected WARN, INFO, TRACE or OFF, saw '" + text + "'");
}

void Logger::write(LogLevel level, const std::string& message) const {
  const char* name = level == LogLevel::warn ? "WARN" : level == LogLevel::info ? "INFO" : "TRACE";
  // One fprintf per line so lines from several PEs interleave whole.
  std::fprintf(stderr, "tessera[PE %d] %s: %s\n", pe_, name, message.c_str());
}

}  // namespace tessera::detail
