#include "crawler/cli/line_io.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

namespace urlsieve::cli {
namespace {

std::vector<std::string> ReadAllThroughPipe(const std::string& input, size_t buffer_size) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  std::thread writer([&] {
    LineWriter out(fds[1], 7);
    out.Write(input);
    out.Flush();
    ::close(fds[1]);
  });
  LineReader reader(fds[0], buffer_size);
  std::vector<std::string> lines;
  std::string_view line;
  while (reader.Next(&line)) lines.emplace_back(line);
  writer.join();
  ::close(fds[0]);
  EXPECT_FALSE(reader.error());
  return lines;
}

TEST(LineIoTest, SplitsLinesAndKeepsALastLineWithoutNewline) {
  EXPECT_EQ(ReadAllThroughPipe("a\nbb\n\nccc", 4),
            (std::vector<std::string>{"a", "bb", "", "ccc"}));
}

TEST(LineIoTest, LinesLongerThanTheBufferArriveWhole) {
  const std::string long_line(10000, 'x');
  EXPECT_EQ(ReadAllThroughPipe("s\n" + long_line + "\nt\n", 16),
            (std::vector<std::string>{"s", long_line, "t"}));
}

TEST(LineIoTest, EmptyInputHasNoLines) { EXPECT_TRUE(ReadAllThroughPipe("", 8).empty()); }

}  // namespace
}  // namespace urlsieve::cli
