#include "base/logger.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace urlsieve {
namespace {

// Everything written to a temporary file (not a terminal: no line-clearing prefix).
std::string Contents(std::FILE* file) {
  std::fflush(file);
  std::rewind(file);
  std::string text;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), file)) > 0;) text.append(buffer, n);
  return text;
}

TEST(LoggerTest, LevelsFilterLines) {
  for (LogLevel level : {LogLevel::kQuiet, LogLevel::kInfo, LogLevel::kDebug}) {
    std::FILE* file = std::tmpfile();
    ASSERT_NE(file, nullptr);
    {
      Logger log(file, level);
      log.Info("retrying");
      log.Debug("fetched");
    }
    const std::string text = Contents(file);
    std::fclose(file);
    switch (level) {
      case LogLevel::kQuiet:
        EXPECT_EQ(text, "");
        break;
      case LogLevel::kInfo:
        EXPECT_EQ(text, "urlsieve: retrying\n");
        break;
      case LogLevel::kDebug:
        EXPECT_EQ(text, "urlsieve: retrying\nurlsieve: debug: fetched\n");
        break;
    }
  }
}

TEST(LoggerTest, EnabledAndNames) {
  Logger info(nullptr, LogLevel::kInfo);
  EXPECT_TRUE(info.enabled(LogLevel::kInfo));
  EXPECT_FALSE(info.enabled(LogLevel::kDebug));
  EXPECT_FALSE(info.enabled(LogLevel::kQuiet));  // nothing is logged "at quiet"
  info.Info("no stream: ignored, no crash");
  for (LogLevel level : {LogLevel::kQuiet, LogLevel::kInfo, LogLevel::kDebug}) {
    Result<LogLevel> parsed = ParseLogLevel(LogLevelName(level));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, level);
  }
  EXPECT_FALSE(ParseLogLevel("verbose").ok());
}

TEST(LoggerTest, ConcurrentLinesNeverInterleave) {
  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  constexpr int kThreads = 4;
  constexpr int kLines = 500;
  {
    Logger log(file, LogLevel::kInfo);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&log, t] {
        const std::string body(200, static_cast<char>('a' + t));
        for (int i = 0; i < kLines; ++i) log.Info(std::to_string(t) + " " + body);
      });
    }
    for (std::thread& thread : threads) thread.join();
  }
  std::istringstream in(Contents(file));
  std::fclose(file);
  int count = 0;
  for (std::string line; std::getline(in, line); ++count) {
    ASSERT_EQ(line.size(), std::string("urlsieve: 0 ").size() + 200) << line;
    const int t = line[10] - '0';
    EXPECT_EQ(line.substr(12), std::string(200, static_cast<char>('a' + t)));
  }
  EXPECT_EQ(count, kThreads * kLines);
}

}  // namespace
}  // namespace urlsieve
