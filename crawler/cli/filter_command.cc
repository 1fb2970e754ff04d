// `urlsieve filter`: prints each URL read from stdin that was never seen before, once, in input
// order: the original line, or its canonical key with --canonical. The seen set persists in a
// state directory (dedup/seen_filter.h), so a second run over the same input prints nothing.
//
// Streaming in batches: memory is the filter plus one batch of lines. On SIGINT/SIGTERM it stops
// reading, finishes the batch, saves the state and exits 0.
//
// Durability: output is at-least-once. A URL's "seen" mark must never become durable before the
// line itself is written, or a kill -9 in between would lose the URL for good. So the state is
// saved at the end (and on a stop signal) after stdout is flushed, and with --exact the run is
// checkpointed (SeenFilterOptions::checkpointed) every --checkpoint-keys URLs, after a flush:
// committing each batch (standalone mode) would mark URLs seen whose lines still sit in the output
// buffer. After a kill -9 the next run prints again the URLs printed since the last save or
// checkpoint, and nothing is lost.
//
// The state directory is locked for the whole run (dedup/state_lock.h): a second `filter` on it
// exits 1 naming the first one's pid. A damaged or mixed-up state is an error (exit 1) and is left
// as it is; --rebuild is the explicit way to rebuild an exact state's Bloom filter.
#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "crawler/cli/commands.h"
#include "crawler/cli/line_excerpt.h"
#include "crawler/cli/line_io.h"
#include "crawler/cli/option_flags.h"
#include "dedup/seen_filter.h"

namespace urlsieve::cli {
namespace {

struct FilterFlags {
  std::string state_dir;
  bool exact = false;
  uint64_t capacity = SeenFilterOptions().capacity;
  double fp_rate = SeenFilterOptions().fp_rate;
  bool canonical = false;
  bool rebuild = false;
  size_t batch = 4096;
  uint64_t checkpoint_keys = uint64_t{1} << 20;  // --exact: URLs between checkpoints
  CanonicalizeOptions canonicalize;
  bool parameters_given = false;  // set after parsing: print which stored parameters win
};

volatile std::sig_atomic_t g_stop = 0;
int g_devnull = -1;

// Async-signal-safe: marks the stop and turns stdin into /dev/null, so a read blocked on a quiet
// pipe or terminal returns end-of-file instead of waiting for input that may never come.
extern "C" void OnStopSignal(int) {
  g_stop = 1;
  if (g_devnull >= 0) dup2(g_devnull, STDIN_FILENO);
}

void InstallStopHandlers() {
  g_devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  // A closed stdout is reported as a write error (exit 1, the state not saved past the last line
  // written out), not a silent death.
  std::signal(SIGPIPE, SIG_IGN);
}

int RunFilter(const FilterFlags& flags) {
  // Before Open, which may take a while (a rebuild): a stop then ends the run before any input.
  InstallStopHandlers();
  SeenFilterOptions options;
  options.state_dir = flags.state_dir;
  options.exact = flags.exact;
  options.checkpointed = flags.exact;
  options.capacity = flags.capacity;
  options.fp_rate = flags.fp_rate;
  options.canonicalize = flags.canonicalize;
  options.rebuild_bloom = flags.rebuild;
  auto opened = SeenFilter::Open(options);
  if (!opened.ok()) {
    fprintf(stderr, "urlsieve filter: %s\n", opened.status().ToString().c_str());
    return kExitFailure;
  }
  SeenFilter& filter = **opened;
  for (const SeenNotice& notice : filter.notices()) {
    if (notice.kind != SeenNotice::Kind::kStoredParameters || flags.parameters_given) {
      fprintf(stderr, "urlsieve filter: note: %s\n", notice.text.c_str());
    }
  }

  const UrlCanonicalizer& canonicalizer = filter.canonicalizer();
  LineReader reader(STDIN_FILENO);
  LineWriter writer(STDOUT_FILENO);
  LineWriter errors(STDERR_FILENO);
  // One batch: the lines' bytes back to back (LineReader's views do not outlive the next line),
  // and, per valid line, its end offset and key.
  std::string lines;
  std::vector<size_t> line_ends;
  std::vector<std::string> keys(flags.batch);
  std::vector<std::string_view> key_views;
  std::vector<uint8_t> is_new;
  uint64_t line_number = 0;
  uint64_t since_checkpoint = 0;
  bool more = true;
  Status status;
  while (more && status.ok() && writer.ok() && !g_stop) {
    lines.clear();
    line_ends.clear();
    key_views.clear();
    std::string_view line;
    while (key_views.size() < flags.batch && (more = reader.Next(&line))) {
      ++line_number;
      if (line.empty()) continue;
      std::string& key = keys[key_views.size()];
      Status valid = canonicalizer.CanonicalizeTo(line, &key);
      if (!valid.ok()) {
        // Never the raw line: it may be huge or hold terminal escapes.
        errors.WriteLine("line " + std::to_string(line_number) + ": " +
                         EscapedExcerpt(valid.message()) + ": " + EscapedExcerpt(line));
        continue;
      }
      key_views.push_back(key);
      if (!flags.canonical) {
        lines.append(line);
        line_ends.push_back(lines.size());
      }
    }
    status = filter.InsertKeysIfNew(key_views, &is_new);
    if (!status.ok()) break;
    size_t begin = 0;
    for (size_t i = 0; i < key_views.size(); ++i) {
      if (is_new[i]) {
        writer.WriteLine(flags.canonical
                             ? key_views[i]
                             : std::string_view(lines).substr(begin, line_ends[i] - begin));
      }
      if (!flags.canonical) begin = line_ends[i];
    }
    since_checkpoint += key_views.size();
    if (flags.exact && since_checkpoint >= flags.checkpoint_keys) {
      // Printed lines first: a checkpoint must never cover URLs that were not yet written out,
      // so a failed flush ends the run without one.
      if (!writer.Flush()) break;
      status = filter.Checkpoint();
      since_checkpoint = 0;
    }
  }
  const bool flushed = writer.Flush();
  errors.Flush();
  // Save even after a failure elsewhere (every URL printed so far must stay seen), unless stdout
  // failed: then some URLs marked seen were never printed, and not saving lets the next run print
  // them.
  Status saved = flushed ? filter.Save() : Status::Ok();
  int code = kExitOk;
  if (!status.ok()) {
    fprintf(stderr, "urlsieve filter: %s\n", status.ToString().c_str());
    code = kExitFailure;
  }
  if (reader.error()) {
    fprintf(stderr, "urlsieve filter: error reading stdin\n");
    code = kExitFailure;
  }
  if (!flushed) {
    fprintf(stderr, "urlsieve filter: error writing stdout\n");
    code = kExitFailure;
  }
  if (!saved.ok()) {
    fprintf(stderr, "urlsieve filter: saving the state: %s\n", saved.ToString().c_str());
    code = kExitFailure;
  }
  return code;
}

}  // namespace

void AddFilterCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<FilterFlags>();
  CLI::App* cmd = app.add_subcommand(
      "filter",
      "Print each URL from stdin never seen before (in this run or earlier runs with the same "
      "--state), once, in input order");
  cmd->add_option("--state", flags->state_dir, "State directory (created on first use)")
      ->required();
  auto* exact = cmd->add_flag("--exact", flags->exact,
                              "Confirm every Bloom 'maybe seen' in SQLite: no false positives");
  auto* capacity = cmd->add_option("--capacity", flags->capacity,
                                   "Expected number of distinct URLs (new state only)")
                       ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  auto* fp_rate = cmd->add_option("--fp-rate", flags->fp_rate,
                                  "Bloom false-positive rate bound (new state only)")
                      ->check(CLI::Range(1e-12, 0.5));
  cmd->add_flag("--canonical", flags->canonical, "Print the canonical key instead of the line");
  cmd->add_flag("--rebuild", flags->rebuild,
                "Rebuild the Bloom filter from the exact store (an --exact state whose bloom.snap "
                "is missing, stale or corrupt)");
  cmd->add_option("--batch", flags->batch, "URLs per batch")
      ->check(CLI::Range(size_t{1}, size_t{1} << 20));
  cmd->add_option("--checkpoint-keys", flags->checkpoint_keys,
                  "With --exact: URLs between checkpoints (after a kill -9, the next run prints "
                  "again at most the URLs since the last one)")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  std::vector<CLI::Option*> canon = AddCanonicalizeRuleFlags(cmd, &flags->canonicalize);
  cmd->callback([flags, exit_code, exact, capacity, fp_rate, canon] {
    flags->parameters_given = exact->count() + capacity->count() + fp_rate->count() > 0;
    for (const CLI::Option* o : canon) flags->parameters_given |= o->count() > 0;
    *exit_code = RunFilter(*flags);
  });
}

}  // namespace urlsieve::cli
