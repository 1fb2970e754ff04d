// ChildProcess: a program run as a child of the test, as users run it — `urlsieve` subcommands,
// several crawl nodes at once, a crawl killed with SIGKILL or stopped with SIGINT and resumed.
// Its stdin reads a file (/dev/null unless given); its stdout and stderr are appended to files of
// the test's (/dev/null unless given), so that a resumed crawl's stderr follows its first run's.
// RunProgram (RunShell, RunUrlsieve) runs one to its end and returns its exit code, stdout and
// stderr.
//
// The child dies with the test process (PR_SET_PDEATHSIG), so a test that crashes leaves no child
// behind. Wait() has a deadline: a child still running past it is killed and the test fails,
// rather than hanging the suite. The destructor kills a child not waited for.
//
// UrlsieveChild and CrawlChild are the `urlsieve args...` and `urlsieve crawl args...` children
// (URLSIEVE_BINARY, defined by tests/CMakeLists.txt).
//
// Thread-safety: a test's; one thread.
#ifndef URLSIEVE_TESTS_SUPPORT_CHILD_PROCESS_H_
#define URLSIEVE_TESTS_SUPPORT_CHILD_PROCESS_H_

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "tests/support/file_contents.h"

namespace urlsieve::testing {

// Where a child's standard streams go.
struct ChildStreams {
  std::filesystem::path in = "/dev/null";   // read (unless stdin_pipe)
  std::filesystem::path out = "/dev/null";  // appended to
  std::filesystem::path err = "/dev/null";  // appended to
  bool stdin_pipe = false;                  // stdin is a pipe the test writes (WriteStdin)
};

// A child run to its end.
struct ProgramRun {
  int exit_code = -1;  // or 128 + the signal that ended it
  std::string out;
  std::string err;
};

class ChildProcess {
 public:
  // Runs argv[0] (a path, or a name searched in PATH) with argv.
  ChildProcess(std::vector<std::string> argv, ChildStreams streams) : streams_(std::move(streams)) {
    std::vector<char*> args;
    for (std::string& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    const std::string in_path = streams_.in.string();
    const std::string out_path = streams_.out.string();
    const std::string err_path = streams_.err.string();
    int pipe_fds[2] = {-1, -1};
    if (streams_.stdin_pipe) {
      EXPECT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
    }
    pid_ = ::fork();
    if (pid_ == 0) {  // only async-signal-safe calls until exec
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      const int in = pipe_fds[0] >= 0 ? pipe_fds[0] : ::open(in_path.c_str(), O_RDONLY | O_CLOEXEC);
      const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
      const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
      if (in < 0 || out < 0 || err < 0) ::_exit(126);
      ::dup2(in, STDIN_FILENO);
      ::dup2(out, STDOUT_FILENO);
      ::dup2(err, STDERR_FILENO);
      ::execvp(args[0], args.data());
      ::_exit(127);
    }
    EXPECT_GT(pid_, 0) << "fork failed";
    if (pipe_fds[0] >= 0) ::close(pipe_fds[0]);
    stdin_ = pipe_fds[1];
  }
  ~ChildProcess() {
    CloseStdin();
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // With stdin_pipe: writes to the child's stdin, and closes it (the child reads its end).
  void WriteStdin(std::string_view text) {
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::write(stdin_, text.data() + done, text.size() - done);
      ASSERT_GT(n, 0);
      done += static_cast<size_t>(n);
    }
  }
  void CloseStdin() {
    if (stdin_ >= 0) ::close(stdin_);
    stdin_ = -1;
  }
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
        ADD_FAILURE() << "child (pid " << pid_ << ") still running after " << deadline.count()
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
  std::string err() const { return ReadFile(streams_.err); }
  std::string out() const { return ReadFile(streams_.out); }
  // Wait(), then what it wrote.
  ProgramRun Finish(std::chrono::seconds deadline = std::chrono::seconds(180)) {
    ProgramRun run;
    run.exit_code = Wait(deadline);
    run.out = out();
    run.err = err();
    return run;
  }

 private:
  ChildStreams streams_;
  pid_t pid_ = -1;
  int stdin_ = -1;  // the write end of the stdin pipe
};

// Runs argv with `input` on its stdin and waits for it; its streams pass through files in `dir`
// (stdin.txt, stdout.txt, stderr.txt, replaced on every run).
inline ProgramRun RunProgram(std::vector<std::string> argv, const std::filesystem::path& dir,
                             std::string_view input = {},
                             std::chrono::seconds deadline = std::chrono::seconds(180)) {
  ChildStreams streams{dir / "stdin.txt", dir / "stdout.txt", dir / "stderr.txt"};
  WriteFile(streams.in, std::string(input));
  std::filesystem::remove(streams.out);
  std::filesystem::remove(streams.err);
  ChildProcess child(std::move(argv), streams);
  return child.Finish(deadline);
}

// `/bin/sh -c command` run to its end with `input` on its stdin (RunProgram), for the tests whose
// command lines use the shell: quoted arguments, redirections.
inline ProgramRun RunShell(const std::string& command, const std::filesystem::path& dir,
                           std::string_view input = {}) {
  return RunProgram({"/bin/sh", "-c", command}, dir, input);
}

#ifdef URLSIEVE_BINARY  // test binaries that run urlsieve (tests/CMakeLists.txt)
// `urlsieve args...`; stderr is appended to `err`, stdout to `out` (or discarded).
class UrlsieveChild : public ChildProcess {
 public:
  UrlsieveChild(std::vector<std::string> args, std::filesystem::path err,
                std::filesystem::path out = "/dev/null")
      : ChildProcess(Prepend({URLSIEVE_BINARY}, std::move(args)),
                     ChildStreams{"/dev/null", std::move(out), std::move(err)}) {}

 protected:
  static std::vector<std::string> Prepend(std::vector<std::string> head,
                                          std::vector<std::string> args) {
    head.insert(head.end(), std::make_move_iterator(args.begin()),
                std::make_move_iterator(args.end()));
    return head;
  }
};

// `urlsieve crawl args...`; stderr is appended to `err`, stdout to `out` (or discarded).
class CrawlChild : public UrlsieveChild {
 public:
  CrawlChild(const std::filesystem::path& err, std::vector<std::string> args,
             const std::filesystem::path& out = "/dev/null")
      : UrlsieveChild(Prepend({"crawl"}, std::move(args)), err, out) {}
};

// `urlsieve args...` run to its end with `input` on its stdin (RunProgram).
inline ProgramRun RunUrlsieve(std::vector<std::string> args, const std::filesystem::path& dir,
                              std::string_view input = {}) {
  args.insert(args.begin(), URLSIEVE_BINARY);
  return RunProgram(std::move(args), dir, input);
}
#endif  // URLSIEVE_BINARY

}  // namespace urlsieve::testing

#endif  // URLSIEVE_TESTS_SUPPORT_CHILD_PROCESS_H_
