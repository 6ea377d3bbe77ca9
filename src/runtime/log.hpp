// One line per event on stderr, prefixed with the PE: "tessera[PE 3] INFO: ...".
#pragma once

#include <sstream>
#include <string>

#include "tessera/runtime.hpp"

namespace tessera::detail {

// Parses WARN|INFO|TRACE|OFF (any case); throws Error(invalid_argument).
LogLevel parse_log_level(const std::string& text);

class Logger {
 public:
  Logger() = default;
  Logger(LogLevel level, int pe) : level_(level), pe_(pe) {}
  bool enabled(LogLevel level) const { return level != LogLevel::off && level <= level_; }
  void write(LogLevel level, const std::string& message) const;

 private:
  LogLevel level_ = LogLevel::warn;
  int pe_ = -1;
};

}  // namespace tessera::detail

// Streams `expr` into one log line when `level` is enabled: TESSERA_LOG(log, info, "x=" << x).
#define TESSERA_LOG(logger, level, expr)                                   \
  do {                                                                     \
    if ((logger).enabled(::tessera::LogLevel::level)) {                    \
      std::ostringstream tessera_log_line_;                                \
      tessera_log_line_ << expr;                                           \
      (logger).write(::tessera::LogLevel::level, tessera_log_line_.str()); \
    }                                                                      \
  } while (0)
