// Logger: the crawl's diagnostic lines on stderr — retries, back-offs, hosts given up, warnings —
// filtered by a LogLevel (--log-level quiet|info|debug).
//
// A line is "urlsieve: <message>" ("urlsieve: debug: <message>" at debug level), written whole by
// one fwrite, so lines from concurrent threads never interleave. When the stream is a terminal the
// line first clears the progress line (ProgressReporter) it would otherwise be glued to.
// Thread-safety: all methods are safe to call concurrently; one mutex serializes the writes (a
// few lines per failed fetch at most, so it is never contended on the hot path: below the
// configured level a call returns before formatting anything).
#ifndef URLSIEVE_BASE_LOGGER_H_
#define URLSIEVE_BASE_LOGGER_H_

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string_view>

#include "base/status.h"

namespace urlsieve {

enum class LogLevel : uint8_t {
  kQuiet,  // nothing (fatal errors are still reported by the command, not by the logger)
  kInfo,   // warnings and every retry, back-off or host given up (the default)
  kDebug,  // also every fetch and robots.txt decision
};
std::string_view LogLevelName(LogLevel level);
Result<LogLevel> ParseLogLevel(std::string_view name);

class Logger {
 public:
  // Writes to `out` (which must outlive the logger) the lines at or below `level`.
  Logger(std::FILE* out, LogLevel level);

  bool enabled(LogLevel level) const { return level != LogLevel::kQuiet && level <= level_; }
  void Info(std::string_view message) { Write(LogLevel::kInfo, message); }
  void Debug(std::string_view message) { Write(LogLevel::kDebug, message); }

 private:
  void Write(LogLevel level, std::string_view message);

  std::FILE* const out_;
  const LogLevel level_;
  const bool terminal_;
  std::mutex mu_;  // serializes writes to out_
};

}  // namespace urlsieve

#endif  // URLSIEVE_BASE_LOGGER_H_
