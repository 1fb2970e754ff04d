#include "base/logger.h"

#include <unistd.h>

#include <string>

namespace urlsieve {

std::string_view LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kQuiet:
      return "quiet";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kDebug:
      return "debug";
  }
  return "?";
}

Result<LogLevel> ParseLogLevel(std::string_view name) {
  for (LogLevel level : {LogLevel::kQuiet, LogLevel::kInfo, LogLevel::kDebug}) {
    if (name == LogLevelName(level)) return level;
  }
  return Status::InvalidArgument("log level must be \"quiet\", \"info\" or \"debug\", not \"" +
                                 std::string(name) + "\"");
}

Logger::Logger(std::FILE* out, LogLevel level)
    : out_(out), level_(level), terminal_(out != nullptr && ::isatty(::fileno(out)) == 1) {}

void Logger::Write(LogLevel level, std::string_view message) {
  if (out_ == nullptr || !enabled(level)) return;
  std::string line;
  line.reserve(message.size() + 32);
  if (terminal_) line += "\r\033[K";  // erase a progress line in the making
  line += "urlsieve: ";
  if (level == LogLevel::kDebug) line += "debug: ";
  line += message;
  line += '\n';
  std::lock_guard<std::mutex> lock(mu_);
  std::fwrite(line.data(), 1, line.size(), out_);
  std::fflush(out_);
}

}  // namespace urlsieve
