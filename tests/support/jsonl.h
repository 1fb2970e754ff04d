// Lines / ReadJsonl: text split into its lines, and a JSON Lines file (pages.jsonl, rejected.jsonl,
// a listing's output) read into one JSON value a line, for tests that check what the code under
// test printed or wrote. A line that is not JSON fails the test (and reads as a discarded value,
// so that counts still see it); a missing file reads as no lines.
// Thread-safety: free functions; the caller owns the file.
#ifndef URLSIEVE_TESTS_SUPPORT_JSONL_H_
#define URLSIEVE_TESTS_SUPPORT_JSONL_H_

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace urlsieve::testing {

// The lines of `text`, without their '\n'; a last line without one counts.
inline std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

inline std::vector<nlohmann::json> ReadJsonl(const std::filesystem::path& path) {
  std::vector<nlohmann::json> values;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    values.push_back(nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false));
    EXPECT_FALSE(values.back().is_discarded()) << path.string() << ": " << line;
  }
  return values;
}

}  // namespace urlsieve::testing

#endif  // URLSIEVE_TESTS_SUPPORT_JSONL_H_
