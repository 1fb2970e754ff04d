// UrlsieveChild / CrawlChild: a `urlsieve` child process for the tests that run crawls (and
// `urlsieve cluster status`) as separate processes, as users do: several crawl nodes at once, a
// node killed with SIGKILL or stopped with SIGINT, then resumed. Its stdout and stderr go to files
// of the test's (stdout to /dev/null unless given), appended to, so that a resumed node's stderr
// follows its first run's.
//
// The child dies with the test process (PR_SET_PDEATHSIG), so a test that crashes leaves no crawl
// behind. Wait() has a deadline: a child still running past it is killed and the test fails,
// rather than hanging the suite. The destructor kills a child not waited for.
//
// Thread-safety: a test fixture's; one thread.
#ifndef URLSIEVE_TESTS_CRAWLER_CRAWL_PROCESS_H_
#define URLSIEVE_TESTS_CRAWLER_CRAWL_PROCESS_H_

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/file_contents.h"

namespace urlsieve::testing {

class UrlsieveChild {
 public:
  // Runs `urlsieve args...`; stderr is appended to `err`, stdout to `out` (or discarded).
  UrlsieveChild(const std::vector<std::string>& args, std::filesystem::path err,
                std::filesystem::path out = "/dev/null")
      : err_(std::move(err)), out_(std::move(out)) {
    std::vector<std::string> strings = {URLSIEVE_BINARY};
    strings.insert(strings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : strings) argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::string err_path = err_.string();
    const std::string out_path = out_.string();
    pid_ = ::fork();
    if (pid_ == 0) {  // only async-signal-safe calls until exec
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
      const int out_fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
      const int err_fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
      if (in < 0 || out_fd < 0 || err_fd < 0) ::_exit(126);
      ::dup2(in, STDIN_FILENO);
      ::dup2(out_fd, STDOUT_FILENO);
      ::dup2(err_fd, STDERR_FILENO);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    EXPECT_GT(pid_, 0) << "fork failed";
  }
  ~UrlsieveChild() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  UrlsieveChild(const UrlsieveChild&) = delete;
  UrlsieveChild& operator=(const UrlsieveChild&) = delete;

  pid_t pid() const { return pid_; }
  void Signal(int signal) { ASSERT_EQ(::kill(pid_, signal), 0); }
  // The exit code, or 128 + the signal that ended it. A child still running after `deadline` is
  // killed (a test failure): 128 + SIGKILL.
  int Wait(std::chrono::seconds deadline = std::chrono::seconds(180)) {
    if (pid_ <= 0) {
      ADD_FAILURE() << "waited for a child already waited for";
      return -1;
    }
    const auto until = std::chrono::steady_clock::now() + deadline;
    int status = 0;
    while (true) {
      const pid_t done = ::waitpid(pid_, &status, WNOHANG);
      if (done == pid_) break;
      if (done < 0) {
        ADD_FAILURE() << "waitpid failed for " << pid_;
        pid_ = -1;
        return -1;
      }
      if (std::chrono::steady_clock::now() > until) {
        ADD_FAILURE() << "urlsieve (pid " << pid_ << ") still running after " << deadline.count()
                      << " s: killed; its stderr:\n"
                      << err();
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // polling for its exit
    }
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  // Whether it has ended (without reaping it: Wait() still returns how).
  bool exited() const {
    if (pid_ <= 0) return true;
    siginfo_t info{};
    return ::waitid(P_PID, pid_, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid_;
  }
  std::string err() const { return ReadFile(err_); }
  std::string out() const { return ReadFile(out_); }

 private:
  std::filesystem::path err_;
  std::filesystem::path out_;
  pid_t pid_ = -1;
};

// A `urlsieve crawl args...` child; its stderr is appended to `err`, its stdout to `out` (or
// discarded).
class CrawlChild : public UrlsieveChild {
 public:
  CrawlChild(const std::filesystem::path& err, std::vector<std::string> args,
             const std::filesystem::path& out = "/dev/null")
      : UrlsieveChild(Prepend("crawl", std::move(args)), err, out) {}

 private:
  static std::vector<std::string> Prepend(std::string command, std::vector<std::string> args) {
    args.insert(args.begin(), std::move(command));
    return args;
  }
};

}  // namespace urlsieve::testing

#endif  // URLSIEVE_TESTS_CRAWLER_CRAWL_PROCESS_H_
