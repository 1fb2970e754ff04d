// Runs the real `urlsieve filter` and `urlsieve stats` binaries on files and pipes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct CommandRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

class FilterCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/urlsieve_filter_test_XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    state_ = (dir_ / "state").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs `urlsieve <command> <args>` with `input` on stdin.
  CommandRun Urlsieve(const std::string& command, const std::string& input,
                      const std::string& args) {
    std::ofstream(dir_ / "in.txt", std::ios::binary) << input;
    const std::string cmd = std::string(URLSIEVE_BINARY) + " " + command + " " + args + " < '" +
                            (dir_ / "in.txt").string() + "' > '" + (dir_ / "out.txt").string() +
                            "' 2> '" + (dir_ / "err.txt").string() + "'";
    CommandRun run;
    const int status = std::system(cmd.c_str());
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    run.out = ReadFile(dir_ / "out.txt");
    run.err = ReadFile(dir_ / "err.txt");
    return run;
  }
  CommandRun Filter(const std::string& input, const std::string& args = "") {
    return Urlsieve("filter", input, "--state '" + state_ + "' " + args);
  }

  fs::path dir_;
  std::string state_;
};

TEST_F(FilterCommandTest, PrintsNewUrlsOnceInInputOrderAndNothingOnTheSecondRun) {
  const std::string input =
      "http://b.example/1\n"
      "HTTP://A.EXAMPLE/x\n"
      "http://b.example/1\n"
      "http://a.example/x#frag\n"
      "http://c.example:80/\n"
      "http://a.example/y";  // no final newline
  for (const char* mode : {"", "--exact"}) {
    SCOPED_TRACE(mode);
    fs::remove_all(state_);
    CommandRun first = Filter(input, mode);
    EXPECT_EQ(first.exit_code, 0) << first.err;
    EXPECT_EQ(first.out,
              "http://b.example/1\nHTTP://A.EXAMPLE/x\nhttp://c.example:80/\nhttp://a.example/y\n");
    CommandRun second = Filter(input, mode);
    EXPECT_EQ(second.exit_code, 0) << second.err;
    EXPECT_EQ(second.out, "");
    CommandRun third = Filter(input + "\nhttp://d.example/\n", mode);
    EXPECT_EQ(third.out, "http://d.example/\n");
  }
}

TEST_F(FilterCommandTest, ReportsInvalidLinesOnStderrAndSkipsEmptyLines) {
  CommandRun run = Filter("http://a.example/\n\nnot a url\nftp://x.example/\nhttp://b.example/\n");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.out, "http://a.example/\nhttp://b.example/\n");
  const auto errors = Lines(run.err);
  ASSERT_EQ(errors.size(), 2u) << run.err;
  EXPECT_EQ(errors[0].rfind("line 3: ", 0), 0u) << errors[0];
  EXPECT_NE(errors[0].find(": not a url"), std::string::npos) << errors[0];
  EXPECT_EQ(errors[1].rfind("line 4: ", 0), 0u) << errors[1];
  EXPECT_NE(errors[1].find("ftp://x.example/"), std::string::npos) << errors[1];
}

TEST_F(FilterCommandTest, RejectedLinesAreQuotedShortAndEscaped) {
  // A 10 MB line, terminal control bytes and invalid UTF-8: stderr gets one short line for each,
  // with the right line number and nothing raw.
  const std::string huge = "http://a.example/" + std::string(10 << 20, 'x');
  const std::string input =
      "http://ok.example/\n\n" + huge + "\nhttp://a.example/\x1b]0;pwned\x07\xff\n" + "\x1b[2J\n";
  CommandRun run = Filter(input);
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.out, "http://ok.example/\n");
  const auto errors = Lines(run.err);
  ASSERT_EQ(errors.size(), 3u) << run.err.substr(0, 1000);
  EXPECT_LT(run.err.size(), 1000u);
  EXPECT_EQ(
      errors[0].rfind("line 3: url too long (10485777 > 2083 bytes): http://a.example/xxx", 0), 0u)
      << errors[0];
  EXPECT_NE(errors[0].find("... (10485777 bytes)"), std::string::npos) << errors[0];
  EXPECT_EQ(errors[1], "line 4: invalid UTF-8: http://a.example/\\x1B]0;pwned\\x07\\xFF");
  EXPECT_EQ(errors[2], "line 5: relative URL without a base: \\x1B[2J");
  for (char c : run.err) {
    const auto byte = static_cast<unsigned char>(c);
    EXPECT_TRUE(c == '\n' || (byte >= 0x20 && byte < 0x7f)) << static_cast<int>(byte);
  }
}

TEST_F(FilterCommandTest, CanonicalPrintsKeys) {
  CommandRun run =
      Filter("HTTP://Example.COM:80/a/./b?x=1#f\nhttp://example.com/a/b?x=1\n", "--canonical");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "http://example.com/a/b?x=1\n");
}

TEST_F(FilterCommandTest, KeepsOrderAcrossManyBatches) {
  std::string input, expected;
  for (int i = 0; i < 5000; ++i) {
    const std::string url = "http://h" + std::to_string(i % 13) + ".example/" + std::to_string(i);
    input += url + "\n" + "http://h0.example/" + std::to_string(i / 2) + "\n";
  }
  // Expected: each distinct canonical URL at its first occurrence.
  std::set<std::string> seen;
  for (const auto& line : Lines(input)) {
    if (seen.insert(line).second) expected += line + "\n";
  }
  for (const char* mode : {"--batch 7", "--batch 7 --exact"}) {
    SCOPED_TRACE(mode);
    fs::remove_all(state_);
    CommandRun run = Filter(input, mode);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(run.out, expected);
  }
}

TEST_F(FilterCommandTest, ReusesStoredParametersAndSaysSo) {
  ASSERT_EQ(Filter("http://a.example/?b=1&a=2\n", "--capacity 1000 --fp-rate 0.01 --sort-query")
                .exit_code,
            0);
  CommandRun quiet = Filter("http://a.example/?a=2&b=1\n");  // sort_query is stored: a duplicate
  EXPECT_EQ(quiet.exit_code, 0);
  EXPECT_EQ(quiet.out, "");
  EXPECT_EQ(quiet.err, "");
  CommandRun told = Filter("http://b.example/\n", "--capacity 5");
  EXPECT_EQ(told.out, "http://b.example/\n");
  EXPECT_NE(told.err.find("stored capacity 1000"), std::string::npos) << told.err;
  CommandRun stats = Urlsieve("stats", "", "--state '" + state_ + "' --json");
  EXPECT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_NE(stats.out.find("\"capacity\":1000"), std::string::npos) << stats.out;
  EXPECT_NE(stats.out.find("\"keys\":2"), std::string::npos) << stats.out;
}

TEST_F(FilterCommandTest, StatsReportsTheExactStore) {
  ASSERT_EQ(
      Filter("http://a.example/\nhttp://b.example/\nhttp://a.example/\n", "--exact").exit_code, 0);
  CommandRun table = Urlsieve("stats", "", "--state '" + state_ + "'");
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("exact"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("stored keys       2"), std::string::npos) << table.out;
  CommandRun missing = Urlsieve("stats", "", "--state '" + (dir_ / "nowhere").string() + "'");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_FALSE(fs::exists(dir_ / "nowhere"));
}

TEST_F(FilterCommandTest, CorruptStateFailsAndIsLeftUnchanged) {
  ASSERT_EQ(Filter("http://a.example/\n").exit_code, 0);
  const fs::path snap = fs::path(state_) / "bloom.snap";
  std::string bytes = ReadFile(snap);
  bytes[bytes.size() / 3] ^= 0x01;
  { std::ofstream(snap, std::ios::binary | std::ios::trunc) << bytes; }
  CommandRun run = Filter("http://b.example/\n");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.out, "");
  EXPECT_NE(run.err.find("corruption"), std::string::npos) << run.err;
  EXPECT_EQ(ReadFile(snap), bytes);

  const fs::path db = fs::path(state_) / "state.db";
  { std::ofstream(db, std::ios::binary | std::ios::trunc) << "this is not SQLite"; }
  run = Filter("http://b.example/\n");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(ReadFile(db), "this is not SQLite");
}

TEST_F(FilterCommandTest, UsageErrorsExitTwo) {
  EXPECT_EQ(Urlsieve("filter", "", "").exit_code, 2);  // no --state
  EXPECT_EQ(Filter("", "--fp-rate 2").exit_code, 2);
  EXPECT_EQ(Filter("", "--batch 0").exit_code, 2);
}

// SIGTERM while stdin stays open: the filter stops, saves and exits 0; whatever it printed is
// remembered, so a second run prints exactly the rest.
TEST_F(FilterCommandTest, StopsCleanlyOnSigterm) {
  int in_pipe[2];
  ASSERT_EQ(pipe(in_pipe), 0);
  const fs::path out_path = dir_ / "out.txt";
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(in_pipe[0], STDIN_FILENO);
    close(in_pipe[0]);
    close(in_pipe[1]);
    const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, STDOUT_FILENO);
    execl(URLSIEVE_BINARY, URLSIEVE_BINARY, "filter", "--state", state_.c_str(), "--batch", "1",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(in_pipe[0]);
  std::string input;
  for (int i = 0; i < 100; ++i) input += "http://s.example/" + std::to_string(i) + "\n";
  ASSERT_EQ(write(in_pipe[1], input.data(), input.size()), static_cast<ssize_t>(input.size()));
  // The handlers are installed before the state is created: wait for the state, not for time.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!fs::exists(fs::path(state_) / "state.db") &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  close(in_pipe[1]);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  const std::string printed = ReadFile(out_path);
  CommandRun rest = Filter(input);
  EXPECT_EQ(rest.exit_code, 0);
  std::vector<std::string> all = Lines(printed), second = Lines(rest.out);
  all.insert(all.end(), second.begin(), second.end());
  std::sort(all.begin(), all.end());
  std::vector<std::string> expected = Lines(input);
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(all, expected);
}

}  // namespace
