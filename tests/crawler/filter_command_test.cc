// Runs the real `urlsieve filter` and `urlsieve stats` binaries on files and pipes.
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/child_process.h"
#include "tests/support/file_contents.h"
#include "tests/support/jsonl.h"
#include "tests/support/scratch_dir.h"

namespace {

namespace fs = std::filesystem;
using urlsieve::testing::Lines;
using urlsieve::testing::ReadFile;

using CommandRun = urlsieve::testing::ProgramRun;

class FilterCommandTest : public ::testing::Test {
 protected:
  void SetUp() override { state_ = (dir_ / "state").string(); }

  // Runs `urlsieve <command> <args>` (a shell command line) with `input` on stdin.
  CommandRun Urlsieve(const std::string& command, const std::string& input,
                      const std::string& args) {
    return urlsieve::testing::RunShell(std::string(URLSIEVE_BINARY) + " " + command + " " + args,
                                       dir_, input);
  }
  CommandRun Filter(const std::string& input, const std::string& args = "") {
    return Urlsieve("filter", input, "--state '" + state_ + "' " + args);
  }

  urlsieve::testing::ScratchDir scratch_{"urlsieve_filter_test"};
  const fs::path dir_ = scratch_.path();
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

// With --exact the run checkpoints every --checkpoint-keys URLs, after flushing stdout. When that
// flush fails (here: /dev/full, a full disk), the checkpoint must not happen: it would make durable
// "seen" marks of URLs whose lines never reached the output, and the next run would not print
// them. The first write of the run is that flush (100 lines fit the output buffer).
TEST_F(FilterCommandTest, AFailedFlushBeforeACheckpointMarksNothingSeen) {
  std::string input;
  for (int i = 0; i < 1000; ++i) input += "http://a/" + std::to_string(i) + "\n";
  std::ofstream(dir_ / "in.txt", std::ios::binary) << input;
  const std::string cmd = std::string(URLSIEVE_BINARY) + " filter --exact --batch 100 " +
                          "--checkpoint-keys 100 --state '" + state_ + "' < '" +
                          (dir_ / "in.txt").string() + "' > /dev/full 2> '" +
                          (dir_ / "err.txt").string() + "'";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_NE(ReadFile(dir_ / "err.txt").find("error writing stdout"), std::string::npos)
      << ReadFile(dir_ / "err.txt");

  CommandRun again = Filter(input, "--exact");
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(again.out == input) << "printed " << Lines(again.out).size() << " of 1000 URLs";
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

// strip_tracking_params and its exceptions are stored with the state: a later run without the
// flags keys as the first did, and stats shows them.
TEST_F(FilterCommandTest, TrackingParamsAreStoredWithTheState) {
  CommandRun first =
      Filter("http://a.example/p?id=1&utm_source=x\nhttp://keep.example/?utm_source=y\n",
             "--strip-tracking-params --keep-tracking-param keep.example:utm_source");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.out, "http://a.example/p?id=1&utm_source=x\nhttp://keep.example/?utm_source=y\n");
  CommandRun again = Filter(
      "http://a.example/p?id=1&fbclid=2\nhttp://keep.example/\nhttp://keep.example/"
      "?utm_source=y&gclid=1\n"
      "http://keep.example/?utm_source=z\n",
      "--canonical");
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, "http://keep.example/\nhttp://keep.example/?utm_source=z\n");
  EXPECT_EQ(again.err, "");
  CommandRun stats = Urlsieve("stats", "", "--state '" + state_ + "' --json");
  EXPECT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_NE(stats.out.find("\"canonicalize\":\"strip-tracking-params,keep-tracking-param="
                           "keep.example:utm_source\""),
            std::string::npos)
      << stats.out;
  EXPECT_EQ(Filter("", "--keep-tracking-param a.example:ref").exit_code, 2);
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

// A deletable state says so: `urlsieve forget` works on it and it costs 4x the bits.
TEST_F(FilterCommandTest, StatsSaysWhetherTheSetIsDeletable) {
  ASSERT_EQ(Filter("http://a.example/\n", "--deletable").exit_code, 0);
  CommandRun table = Urlsieve("stats", "", "--state '" + state_ + "'");
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("Bloom only, deletable"), std::string::npos) << table.out;
  CommandRun json = Urlsieve("stats", "", "--state '" + state_ + "' --json");
  EXPECT_NE(json.out.find("\"deletable\":true"), std::string::npos) << json.out;

  const std::string plain = "--state '" + (dir_ / "plain").string() + "'";
  ASSERT_EQ(Urlsieve("filter", "http://a.example/\n", plain).exit_code, 0);
  json = Urlsieve("stats", "", plain + " --json");
  EXPECT_NE(json.out.find("\"deletable\":false"), std::string::npos) << json.out;
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

// --revisit-after (docs/features/generational.md, "The generational seen set"): stored with the
// state like --capacity, shown by stats, and a bad duration is a usage error. (Ageing under a fake
// clock: tests/dedup/generational_seen_set_test.cc.)
TEST_F(FilterCommandTest, RevisitAfterIsStoredAndShown) {
  CommandRun first = Filter("http://a.example/\nhttp://b.example/\nhttp://a.example/\n",
                            "--revisit-after 7d --generations 7 --capacity 1000");
  EXPECT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.out, "http://a.example/\nhttp://b.example/\n");
  EXPECT_TRUE(fs::exists(fs::path(state_) / "state.db"));
  EXPECT_FALSE(fs::exists(fs::path(state_) / "bloom.snap"));
  CommandRun again = Filter("http://a.example/\nhttp://c.example/\n", "--revisit-after 1d");
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, "http://c.example/\n");
  EXPECT_NE(again.err.find("stored revisit-after 7d in 7 generations"), std::string::npos)
      << again.err;
  CommandRun table = Urlsieve("stats", "", "--state '" + state_ + "'");
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("revisit after     7d in 7 generations"), std::string::npos)
      << table.out;
  CommandRun json = Urlsieve("stats", "", "--state '" + state_ + "' --json");
  EXPECT_NE(json.out.find("\"revisit_after_seconds\":604800"), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"keys\":3"), std::string::npos) << json.out;

  const std::string other = "--state '" + (dir_ / "other").string() + "' ";
  EXPECT_EQ(Urlsieve("filter", "", other + "--revisit-after 7 days").exit_code, 2);
  EXPECT_EQ(Urlsieve("filter", "", other + "--revisit-after 0").exit_code, 2);
  EXPECT_EQ(Urlsieve("filter", "", other + "--generations 4").exit_code, 2);  // needs the period
  EXPECT_EQ(Urlsieve("filter", "", other + "--revisit-after 1d --generations 0").exit_code, 2);
  EXPECT_FALSE(fs::exists(dir_ / "other"));
}

// --exact --revisit-after: the exact store ages URLs by their first-seen time (no generations).
TEST_F(FilterCommandTest, ExactRevisitAfterIsStoredAndShown) {
  CommandRun first = Filter("http://a.example/\nhttp://b.example/\nhttp://a.example/\n",
                            "--exact --revisit-after 2h");
  EXPECT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.out, "http://a.example/\nhttp://b.example/\n");
  CommandRun again = Filter("http://b.example/\nhttp://c.example/\n", "--exact");
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, "http://c.example/\n");
  CommandRun table = Urlsieve("stats", "", "--state '" + state_ + "'");
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("revisit after     2h (by each key's first-seen time)"),
            std::string::npos)
      << table.out;
  CommandRun json = Urlsieve("stats", "", "--state '" + state_ + "' --json");
  EXPECT_NE(json.out.find("\"revisit_after_seconds\":7200"), std::string::npos) << json.out;
  EXPECT_EQ(json.out.find("generations\""), std::string::npos) << json.out;
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

// The identity `urlsieve stats --json` reports for a state directory.
std::string IdentityOf(const std::string& stats_json) {
  const std::string key = "\"identity\":\"";
  const size_t at = stats_json.find(key);
  return at == std::string::npos ? "" : stats_json.substr(at + key.size(), 32);
}

// Issue 10: two `urlsieve filter --state S` at once both exited 0 and one run's updates were lost.
TEST_F(FilterCommandTest, SecondRunOnTheSameStateExitsOneNamingThePid) {
  int in_pipe[2];
  ASSERT_EQ(pipe(in_pipe), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(in_pipe[0], STDIN_FILENO);
    close(in_pipe[0]);
    close(in_pipe[1]);
    const int out = open((dir_ / "first.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, STDOUT_FILENO);
    execl(URLSIEVE_BINARY, URLSIEVE_BINARY, "filter", "--state", state_.c_str(), "--exact",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(in_pipe[0]);
  // The first run holds the lock once its pid is in LOCK: wait for that, not for time.
  const fs::path lock = fs::path(state_) / "LOCK";
  const std::string pid_line = std::to_string(pid) + "\n";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (ReadFile(lock) != pid_line && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(ReadFile(lock), pid_line);
  CommandRun second = Filter("http://b.example/\n", "--exact");
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_EQ(second.out, "");
  EXPECT_NE(second.err.find(state_), std::string::npos) << second.err;
  EXPECT_NE(second.err.find("process " + std::to_string(pid)), std::string::npos) << second.err;
  CommandRun stats = Urlsieve("stats", "", "--state '" + state_ + "'");
  EXPECT_EQ(stats.exit_code, 1);  // a reader waits for no writer: it says who has the state
  EXPECT_NE(stats.err.find("process " + std::to_string(pid)), std::string::npos) << stats.err;

  const std::string input = "http://a.example/\n";
  ASSERT_EQ(write(in_pipe[1], input.data(), input.size()), static_cast<ssize_t>(input.size()));
  close(in_pipe[1]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(ReadFile(dir_ / "first.txt"), input);
  CommandRun after = Filter("http://a.example/\nhttp://b.example/\n");
  EXPECT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(after.out, "http://b.example/\n");
}

// Issue 10: a 0-byte state.db was reported as "bloom.snap is stale" and the state was reset.
TEST_F(FilterCommandTest, EmptyStateDbIsAnErrorAndNothingIsChanged) {
  for (const char* mode : {"", "--exact"}) {
    SCOPED_TRACE(mode);
    fs::remove_all(state_);
    ASSERT_EQ(Filter("http://a.example/\n", mode).exit_code, 0);
    const fs::path db = fs::path(state_) / "state.db", snap = fs::path(state_) / "bloom.snap";
    const std::string snapshot = ReadFile(snap);
    fs::resize_file(db, 0);
    CommandRun run = Filter("http://a.example/\nhttp://b.example/\n", mode);
    EXPECT_EQ(run.exit_code, 1);
    EXPECT_EQ(run.out, "");
    EXPECT_NE(run.err.find(db.string() + " is empty"), std::string::npos) << run.err;
    EXPECT_EQ(fs::file_size(db), 0u);
    EXPECT_EQ(ReadFile(snap), snapshot);
  }
}

// Issue 10: 1 byte cut off an exact state.db gave exit 0 and a seen URL reported new again.
TEST_F(FilterCommandTest, TruncatedStateDbIsAnErrorNamingTheFile) {
  std::string input;
  for (int i = 0; i < 300; ++i) input += "http://t.example/" + std::to_string(i) + "\n";
  ASSERT_EQ(Filter(input, "--exact").exit_code, 0);
  const fs::path db = fs::path(state_) / "state.db";
  fs::resize_file(db, fs::file_size(db) - 1);
  CommandRun run = Filter("http://t.example/1\n", "--exact");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.out, "");
  EXPECT_NE(run.err.find(db.string() + ": truncated"), std::string::npos) << run.err;
}

// Issue 10: "step: database disk image is malformed" named neither the file nor the operation.
TEST_F(FilterCommandTest, DamagedStateDbMessageNamesTheFile) {
  std::string input;
  for (int i = 0; i < 300; ++i) {
    input += "http://d.example/" + std::to_string(i) + "/" + std::string(300, 'x') + "\n";
  }
  ASSERT_EQ(Filter(input, "--exact").exit_code, 0);
  // The exact store's keys are in its shards (page 3 of a shard holds its rows).
  const fs::path db = fs::path(state_) / "seen-00.db";
  ASSERT_GE(fs::file_size(db), 4096u * 3);
  {
    std::fstream f(db, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(4096 * 2);
    const std::string garbage(4096, '\x5a');
    f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  CommandRun run = Filter("http://d.example/new\n", "--exact");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.out, "");
  EXPECT_NE(run.err.find(db.string() + ": "), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("malformed"), std::string::npos) << run.err;
}

// Issue 10: a bloom.snap copied from another state directory was accepted with exit 0.
TEST_F(FilterCommandTest, SnapshotOfAnotherStateIsRefusedNamingBothIdentities) {
  const std::string other = (dir_ / "other").string();
  ASSERT_EQ(Filter("http://a.example/\n").exit_code, 0);
  ASSERT_EQ(Urlsieve("filter", "http://z.example/\n", "--state '" + other + "'").exit_code, 0);
  const std::string mine = IdentityOf(Urlsieve("stats", "", "--json --state '" + state_ + "'").out);
  const std::string theirs =
      IdentityOf(Urlsieve("stats", "", "--json --state '" + other + "'").out);
  ASSERT_EQ(mine.size(), 32u);
  ASSERT_EQ(theirs.size(), 32u);
  ASSERT_NE(mine, theirs);
  const fs::path snap = fs::path(state_) / "bloom.snap";
  fs::copy_file(fs::path(other) / "bloom.snap", snap, fs::copy_options::overwrite_existing);
  const std::string foreign = ReadFile(snap);
  CommandRun run = Filter("http://a.example/\nhttp://b.example/\n");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.out, "");
  for (const std::string& needle : {snap.string(), mine, theirs}) {
    EXPECT_NE(run.err.find(needle), std::string::npos) << needle << " in " << run.err;
  }
  EXPECT_EQ(ReadFile(snap), foreign);
}

// A stale snapshot of an exact state is an error; --rebuild rebuilds the Bloom filter from the
// exact store, and the run then prints only what is really new.
TEST_F(FilterCommandTest, StaleSnapshotNeedsAnExplicitRebuild) {
  ASSERT_EQ(Filter("http://a.example/\n", "--exact").exit_code, 0);
  const fs::path snap = fs::path(state_) / "bloom.snap";
  const std::string old_snapshot = ReadFile(snap);
  // A run usually appends to bloom.delta; after --rebuild it writes a whole new snapshot, so
  // old_snapshot is then stale.
  ASSERT_EQ(Filter("http://b.example/\n", "--exact --rebuild").exit_code, 0);
  ASSERT_NE(ReadFile(snap), old_snapshot);
  { std::ofstream(snap, std::ios::binary | std::ios::trunc) << old_snapshot; }
  const std::string input = "http://a.example/\nhttp://b.example/\nhttp://c.example/\n";
  CommandRun refused = Filter(input, "--exact");
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_EQ(refused.out, "");
  EXPECT_NE(refused.err.find("--rebuild"), std::string::npos) << refused.err;
  EXPECT_EQ(ReadFile(snap), old_snapshot);
  CommandRun rebuilt = Filter(input, "--rebuild");
  EXPECT_EQ(rebuilt.exit_code, 0) << rebuilt.err;
  EXPECT_EQ(rebuilt.out, "http://c.example/\n");
  EXPECT_NE(rebuilt.err.find("note: rebuilt the Bloom filter from 2 keys"), std::string::npos)
      << rebuilt.err;
  CommandRun after = Filter(input);
  EXPECT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(after.out, "");
}

// Issue 10: `urlsieve stats --state` failed on a read-only directory although it only reads.
// Root ignores permissions, so as root the command runs as `nobody` (65534).
TEST_F(FilterCommandTest, StatsWorksOnAReadOnlyStateAndWritesNothing) {
  ASSERT_EQ(Filter("http://a.example/\nhttp://b.example/\n", "--exact").exit_code, 0);
  std::map<std::string, std::string> before;
  for (const auto& e : fs::directory_iterator(state_)) before[e.path().filename()] = ReadFile(e);
  const fs::path out = dir_ / "out";
  fs::create_directories(out);
  fs::permissions(dir_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(out, fs::perms::all);
  fs::permissions(state_, fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                  fs::perm_options::remove);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (geteuid() == 0 &&
        (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0)) {
      _exit(126);
    }
    const int stdout_fd = open((out / "stdout").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
    const int stderr_fd = open((out / "stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
    dup2(stdout_fd, STDOUT_FILENO);
    dup2(stderr_fd, STDERR_FILENO);
    execl(URLSIEVE_BINARY, URLSIEVE_BINARY, "stats", "--state", state_.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  fs::permissions(state_, fs::perms::owner_write, fs::perm_options::add);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << ReadFile(out / "stderr");
  EXPECT_NE(ReadFile(out / "stdout").find("stored keys       2"), std::string::npos)
      << ReadFile(out / "stdout") << ReadFile(out / "stderr");
  std::map<std::string, std::string> after;
  for (const auto& e : fs::directory_iterator(state_)) after[e.path().filename()] = ReadFile(e);
  EXPECT_EQ(after, before);
}

}  // namespace
