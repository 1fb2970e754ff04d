// What the subcommands that stream stdin (filter, forget) share: a graceful stop on SIGINT or
// SIGTERM (the current batch is finished and the state saved), and the report of how the stream
// ended.
//
// Thread-safety: InstallStopHandlers once, from the main thread, before reading; StopRequested
// from any thread; ReportStreamEnd from one thread.
#ifndef URLSIEVE_CRAWLER_CLI_STOP_SIGNALS_H_
#define URLSIEVE_CRAWLER_CLI_STOP_SIGNALS_H_

#include <string_view>

#include "base/status.h"

namespace urlsieve::cli {

// A stop signal marks the stop and turns stdin into /dev/null, so that a read blocked on a quiet
// pipe or terminal returns end-of-file instead of waiting for input that may never come. SIGPIPE
// is ignored: a closed stdout is a write error (exit 1), not a silent death.
void InstallStopHandlers();
bool StopRequested();

// Prints "urlsieve COMMAND: ..." on stderr for each failure of the run (its status, a read error
// on stdin, a write error on stdout, a failed save: "saving the state: ERROR<saved_note>") and
// returns kExitFailure if there was one, else `code`.
int ReportStreamEnd(std::string_view command, int code, const Status& status, bool read_failed,
                    bool flushed, const Status& saved, std::string_view saved_note = {});

}  // namespace urlsieve::cli

#endif  // URLSIEVE_CRAWLER_CLI_STOP_SIGNALS_H_
