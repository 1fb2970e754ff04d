#include "crawler/cli/stop_signals.h"

#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <string>

#include "crawler/cli/commands.h"

namespace urlsieve::cli {
namespace {

volatile std::sig_atomic_t g_stop = 0;
int g_devnull = -1;

// Async-signal-safe.
extern "C" void OnStopSignal(int) {
  g_stop = 1;
  if (g_devnull >= 0) dup2(g_devnull, STDIN_FILENO);
}

}  // namespace

void InstallStopHandlers() {
  g_devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

bool StopRequested() { return g_stop != 0; }

int ReportStreamEnd(std::string_view command, int code, const Status& status, bool read_failed,
                    bool flushed, const Status& saved, std::string_view saved_note) {
  const std::string name(command);
  if (!status.ok()) {
    fprintf(stderr, "urlsieve %s: %s\n", name.c_str(), status.ToString().c_str());
    code = kExitFailure;
  }
  if (read_failed) {
    fprintf(stderr, "urlsieve %s: error reading stdin\n", name.c_str());
    code = kExitFailure;
  }
  if (!flushed) {
    fprintf(stderr, "urlsieve %s: error writing stdout\n", name.c_str());
    code = kExitFailure;
  }
  if (!saved.ok()) {
    fprintf(stderr, "urlsieve %s: saving the state: %s%s\n", name.c_str(), saved.ToString().c_str(),
            std::string(saved_note).c_str());
    code = kExitFailure;
  }
  return code;
}

}  // namespace urlsieve::cli
