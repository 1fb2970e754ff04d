// SpawnCrawl / WaitExit: a `urlsieve crawl` child process, for the tests that kill a crawl with
// SIGKILL and resume it (crawler_test.cc, crawl_resume_test.cc). The child crawls the seeds in
// dir/seeds.txt into `out`, checkpointing after every page, with dir/crawl.toml for the options
// that have no flag.
#ifndef URLSIEVE_TESTS_CRAWLER_CRAWL_CHILD_H_
#define URLSIEVE_TESTS_CRAWLER_CRAWL_CHILD_H_

#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

extern char** environ;

namespace urlsieve::testing {

inline pid_t SpawnCrawl(const std::filesystem::path& dir, const std::filesystem::path& out,
                        bool resume, int threads, int delay_ms) {
  std::vector<std::string> args = {URLSIEVE_BINARY,
                                   "crawl",
                                   "--seeds",
                                   (dir / "seeds.txt").string(),
                                   "--out",
                                   out.string(),
                                   "--threads",
                                   std::to_string(threads),
                                   "--delay-ms",
                                   std::to_string(delay_ms),
                                   "--max-depth",
                                   "8",
                                   "--timeout-ms",
                                   "1000",
                                   "--max-body-bytes",
                                   "262144",
                                   "--checkpoint-s",
                                   "0",
                                   "--config",
                                   (dir / "crawl.toml").string()};
  if (resume) args.push_back("--resume");
  std::ofstream(dir / "crawl.toml") << "[crawl]\nexpected_urls = 10000\n"
                                    << "[politeness]\nbackoff_ms = 50\n"
                                    << "[fetch]\nconnect_timeout_ms = 1000\n";
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  EXPECT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ), 0);
  return pid;
}

// The child's exit code, or 128 + the signal that ended it.
inline int WaitExit(pid_t pid) {
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace urlsieve::testing

#endif  // URLSIEVE_TESTS_CRAWLER_CRAWL_CHILD_H_
