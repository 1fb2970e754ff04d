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
// The state directory is locked for the whole run (dedup/state/state_lock.h): a second `filter` on
// it exits 1 naming the first one's pid. A damaged or mixed-up state is an error (exit 1) and is
// left as it is; --rebuild is the explicit way to rebuild an exact state's Bloom filter.
//
// --redis URL --name NAME: the seen set is shared in Redis (dedup/redis_seen_set.h) instead of a
// state directory, so any number of `filter` processes (and crawls, Scrapy spiders...) on the same
// set print each URL once in total. Each batch is one call; while Redis does not answer
// (kUnavailable) the same batch is asked again with back-off (crawler/crawl/seen_retry.h: stderr
// says so once per outage and when it is back), and the set answers a retried batch as it answered
// the first run, so the output is the one of an undisturbed run. A non-transient error (a wrong
// password, a name holding another type) ends the run (exit 1). Redis has every insert at once:
// a kill -9 between a batch's insert and its output loses that batch's new URLs (they are seen,
// never printed); a stop (SIGINT) while Redis is away prints the unanswered batch's URLs as new
// (at-least-once, as the local filter: some may have been printed before) and exits 1. A set that
// refuses a batch (it lost data: docs/features/redis-seen-set.md, "A set that lost data") writes
// nothing: that batch is not printed, and the run exits 1 naming the server and the key.
// --accept-loss repairs such a set at open (its lost parts made again, empty).
//
// --revisit-after D [--generations G]: a URL told new longer ago than D is new again, stored with
// the state like --capacity (then URLs per D). Bloom-only, a generational Bloom filter
// (dedup/generational_seen_set.h; at most D/G late); with --exact, to the second by each URL's
// first-seen time in the exact store (dedup/exact_seen_set.h; --generations unused).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/duration.h"
#include "crawler/cli/commands.h"
#include "crawler/cli/line_excerpt.h"
#include "crawler/cli/line_io.h"
#include "crawler/cli/option_flags.h"
#include "crawler/cli/stop_signals.h"
#include "crawler/crawl/seen_retry.h"
#include "dedup/seen_filter.h"
#include "redis/redis_address.h"

namespace urlsieve::cli {
namespace {

struct FilterFlags {
  std::string state_dir;
  std::string redis_url;  // with redis_name: the shared set instead of state_dir
  std::string redis_name;
  RedisFlagValues redis;
  bool exact = false;
  bool deletable = false;  // a counting Bloom filter, for `urlsieve forget` (new state only)
  uint64_t capacity = SeenFilterOptions().capacity;
  double fp_rate = SeenFilterOptions().fp_rate;
  bool canonical = false;
  bool rebuild = false;
  size_t batch = 4096;
  uint64_t checkpoint_keys = uint64_t{1} << 20;  // --exact: URLs between checkpoints
  CanonicalizeOptions canonicalize;
  std::string revisit_after;  // a duration (base/duration.h); empty: URLs are never new again
  uint32_t generations = kDefaultGenerations;
  bool parameters_given = false;  // set after parsing: print which stored parameters win
};

SeenFilterOptions FilterOptions(const FilterFlags& flags) {
  SeenFilterOptions options;
  options.capacity = flags.capacity;
  options.fp_rate = flags.fp_rate;
  options.exact = flags.exact;
  options.deletable = flags.deletable;
  options.canonicalize = flags.canonicalize;
  if (!flags.revisit_after.empty()) {
    options.revisit_after = *ParseDuration(flags.revisit_after);  // checked by the flag
    options.generations = flags.generations;
  }
  if (!flags.redis_url.empty()) {
    options.redis_url = flags.redis_url;
    options.redis_name = flags.redis_name;
    options.redis_accept_loss = flags.redis.accept_loss;
  } else {
    options.state_dir = flags.state_dir;
    options.checkpointed = flags.exact;
    options.rebuild_bloom = flags.rebuild;
  }
  return options;
}

// The shared set's retry of a batch while Redis does not answer (null for a local set), and
// `shared_set` its name for messages: "the seen set 'NAME' at redis://host:port/db".
std::unique_ptr<SeenRetry> MakeRetry(const FilterFlags& flags, std::string* shared_set) {
  if (flags.redis_url.empty()) return nullptr;
  *shared_set = "the seen set '" + flags.redis_name + "' at " +
                RedisAddress::Parse(flags.redis_url)->ToString();  // parsed by Open
  SeenRetryOptions retry_options;
  retry_options.what = *shared_set;
  retry_options.stop_requested = [] { return StopRequested(); };
  return std::make_unique<SeenRetry>(retry_options, [](const std::string& message) {
    fprintf(stderr, "urlsieve filter: %s\n", message.c_str());
  });
}

void PrintNotices(const SeenFilter& filter, const FilterFlags& flags) {
  for (const SeenNotice& notice : filter.notices()) {
    if (notice.kind != SeenNotice::Kind::kStoredParameters || flags.parameters_given) {
      fprintf(stderr, "urlsieve filter: %s: %s\n",
              notice.kind == SeenNotice::Kind::kWarning ? "warning" : "note", notice.text.c_str());
    }
  }
}

// One batch of input: the lines' bytes back to back (LineReader's views do not outlive the next
// line), and, per valid line, its end offset (without --canonical), its key and its answer.
struct FilterBatch {
  explicit FilterBatch(size_t size) : keys(size) {}

  // Reads up to keys.size() valid lines; an invalid line is reported on `errors` and skipped.
  // False once the input has ended.
  bool Read(LineReader& reader, const UrlCanonicalizer& canonicalizer, bool canonical,
            LineWriter& errors, uint64_t* line_number) {
    lines.clear();
    line_ends.clear();
    key_views.clear();
    bool more = true;
    std::string_view line;
    while (key_views.size() < keys.size() && (more = reader.Next(&line))) {
      ++*line_number;
      if (line.empty()) continue;
      std::string& key = keys[key_views.size()];
      Status valid = canonicalizer.CanonicalizeTo(line, &key);
      if (!valid.ok()) {
        // Never the raw line: it may be huge or hold terminal escapes.
        errors.WriteLine("line " + std::to_string(*line_number) + ": " +
                         EscapedExcerpt(valid.message()) + ": " + EscapedExcerpt(line));
        continue;
      }
      key_views.push_back(key);
      if (!canonical) {
        lines.append(line);
        line_ends.push_back(lines.size());
      }
    }
    return more;
  }

  // Writes the line (or key) of each valid line i for which print(i) is true, in order.
  template <typename Print>
  void Write(LineWriter& writer, bool canonical, Print print) const {
    size_t begin = 0;
    for (size_t i = 0; i < key_views.size(); ++i) {
      if (print(i)) {
        writer.WriteLine(canonical ? key_views[i]
                                   : std::string_view(lines).substr(begin, line_ends[i] - begin));
      }
      if (!canonical) begin = line_ends[i];
    }
  }

  std::string lines;
  std::vector<size_t> line_ends;
  std::vector<std::string> keys;
  std::vector<std::string_view> key_views;
  std::vector<uint8_t> is_new;
};

// The batch's answers from the shared set, asked again while Redis does not answer. A batch left
// unanswered is printed as new and is the error.
Status InsertShared(SeenFilter& filter, SeenRetry& retry, const std::string& shared_set,
                    uint64_t line_number, bool canonical, FilterBatch& batch, LineWriter& writer) {
  std::chrono::steady_clock::duration retried_for{};
  Status status = retry.Run([&] { return filter.InsertKeysIfNew(batch.key_views, &batch.is_new); },
                            &retried_for);
  if (status.ok() && retried_for > kSeenReplayWindow) {
    // Answered too late to be the lost first run's answers: "seen" may be wrong.
    std::set<std::string_view> distinct(batch.key_views.begin(), batch.key_views.end());
    for (size_t i = 0; i < batch.key_views.size(); ++i) {
      batch.is_new[i] = distinct.erase(batch.key_views[i]) > 0;
    }
    fprintf(stderr,
            "urlsieve filter: %s answered after an outage longer than it replays answers: "
            "the batch ending at line %llu is printed as new (some may be printed again)\n",
            shared_set.c_str(), static_cast<unsigned long long>(line_number));
  }
  if (status.ok()) return status;
  if (status.code() != StatusCode::kUnavailable) {
    // The set refused the batch (it lost data, or holds something else): it wrote nothing, and a
    // URL printed as new here could be one it held. Nothing is printed; the run can be repeated.
    return Status(status.code(), status.message() + "; the " +
                                     std::to_string(batch.key_views.size()) +
                                     " URLs of that batch (up to line " +
                                     std::to_string(line_number) + ") were not printed");
  }
  // Unanswered, the batch may be in part seen now: its URLs are printed (each once), so none is
  // lost; some may have been printed by an earlier run.
  std::set<std::string_view> printed;
  batch.Write(writer, canonical,
              [&](size_t i) { return printed.insert(batch.key_views[i]).second; });
  std::string why = status.message();
  why += retry.stopped() ? " (stopped while waiting for it)" : "";
  return Status(status.code(), why + "; the " + std::to_string(printed.size()) +
                                   " URLs of the unanswered batch were printed as new");
}

// Reads stdin in batches and prints the new URLs, until the input ends, an error or a stop.
Status FilterLines(const FilterFlags& flags, SeenFilter& filter, SeenRetry* retry,
                   const std::string& shared_set, LineReader& reader, LineWriter& writer,
                   LineWriter& errors) {
  const bool shared = retry != nullptr;
  const UrlCanonicalizer& canonicalizer = filter.canonicalizer();
  FilterBatch batch(flags.batch);
  uint64_t line_number = 0;
  uint64_t since_checkpoint = 0;
  bool more = true;
  Status status;
  while (more && status.ok() && writer.ok() && !StopRequested()) {
    more = batch.Read(reader, canonicalizer, flags.canonical, errors, &line_number);
    status = shared ? InsertShared(filter, *retry, shared_set, line_number, flags.canonical, batch,
                                   writer)
                    : filter.InsertKeysIfNew(batch.key_views, &batch.is_new);
    if (!status.ok()) break;
    batch.Write(writer, flags.canonical, [&](size_t i) { return batch.is_new[i] != 0; });
    since_checkpoint += batch.key_views.size();
    if (flags.exact && !shared && since_checkpoint >= flags.checkpoint_keys) {
      // Printed lines first: a checkpoint must never cover URLs that were not yet written out,
      // so a failed flush ends the run without one.
      if (!writer.Flush()) break;
      status = filter.Checkpoint();
      since_checkpoint = 0;
    }
  }
  return status;
}

int RunFilter(const FilterFlags& flags) {
  // Before Open, which may take a while (a rebuild): a stop then ends the run before any input.
  InstallStopHandlers();
  auto opened = SeenFilter::Open(FilterOptions(flags));
  if (!opened.ok()) {
    fprintf(stderr, "urlsieve filter: %s\n", opened.status().ToString().c_str());
    return kExitFailure;
  }
  SeenFilter& filter = **opened;
  std::string shared_set;
  std::unique_ptr<SeenRetry> retry = MakeRetry(flags, &shared_set);
  PrintNotices(filter, flags);
  LineReader reader(STDIN_FILENO);
  LineWriter writer(STDOUT_FILENO);
  LineWriter errors(STDERR_FILENO);
  Status status = FilterLines(flags, filter, retry.get(), shared_set, reader, writer, errors);
  const bool flushed = writer.Flush();
  errors.Flush();
  // Save even after a failure elsewhere (every URL printed so far must stay seen), unless stdout
  // failed: then some URLs marked seen were never printed, and not saving lets the next run print
  // them.
  Status saved = flushed ? filter.Save() : Status::Ok();
  return ReportStreamEnd("filter", kExitOk, status, reader.error(), flushed, saved);
}

}  // namespace

void AddFilterCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<FilterFlags>();
  CLI::App* cmd = app.add_subcommand(
      "filter",
      "Print each URL from stdin never seen before (in this run or earlier runs with the same "
      "--state, or by anyone on the same --redis set), once, in input order");
  const SeenSetFlags set =
      AddSeenSetFlags(cmd, &flags->state_dir, &flags->redis_url, &flags->redis_name,
                      {.state = "State directory (created on first use)",
                       .redis = "Share the seen set in Redis instead of a state directory: "
                                "redis://[[user]:password@]host:port[/db] (with --name)",
                       .name = "The shared set's name in --redis (1-64 of A-Z a-z 0-9 _ . -)"},
                      &flags->redis);
  CLI::Option* redis = set.redis;
  auto* exact = cmd->add_flag("--exact", flags->exact,
                              "Confirm every Bloom 'maybe seen' in SQLite: no false positives");
  auto* deletable = cmd->add_flag(
      "--deletable", flags->deletable,
      "Bloom-only: keep 4-bit counters (4x the memory) so that `urlsieve forget` can remove URLs "
      "(new state only)");
  deletable->excludes(exact);
  auto* capacity = cmd->add_option("--capacity", flags->capacity,
                                   "Expected number of distinct URLs (new state only)")
                       ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  auto* fp_rate = cmd->add_option("--fp-rate", flags->fp_rate,
                                  "Bloom false-positive rate bound (new state only)")
                      ->check(CLI::Range(1e-12, 0.5));
  cmd->add_flag("--canonical", flags->canonical, "Print the canonical key instead of the line");
  auto* rebuild = cmd->add_flag(
      "--rebuild", flags->rebuild,
      "Rebuild the Bloom filter from the exact store (an --exact state whose bloom.snap "
      "is missing, stale or corrupt)");
  cmd->add_option("--batch", flags->batch, "URLs per batch")
      ->check(CLI::Range(size_t{1}, size_t{1} << 20));
  auto* checkpoint_keys =
      cmd->add_option(
             "--checkpoint-keys", flags->checkpoint_keys,
             "With --exact: URLs between checkpoints (after a kill -9, the next run prints "
             "again at most the URLs since the last one)")
          ->capture_default_str()
          ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  // docs/features/generational.md, "The generational seen set".
  auto* revisit_after =
      cmd->add_option("--revisit-after", flags->revisit_after,
                      "A URL told new longer ago than this (e.g. 7d, 12h) is new again (new "
                      "state only). --capacity is then URLs per revisit period")
          ->check([](const std::string& text) {
            auto parsed = ParseDuration(text);
            if (!parsed.ok()) return parsed.status().message();
            return parsed->count() > 0 ? std::string() : std::string("must be more than 0");
          });
  auto* generations =
      cmd->add_option("--generations", flags->generations,
                      "With --revisit-after, Bloom-only: generations the period is cut into (a "
                      "URL comes back new at most one generation late)")
          ->capture_default_str()
          ->check(CLI::Range(uint32_t{1}, uint32_t{256}));
  generations->needs(revisit_after);
  rebuild->excludes(redis);
  checkpoint_keys->excludes(redis);
  std::vector<CLI::Option*> canon = AddCanonicalizeRuleFlags(cmd, &flags->canonicalize);
  cmd->callback([flags, exit_code, exact, deletable, capacity, fp_rate, canon, set, revisit_after] {
    RequireSeenSet(set);
    flags->parameters_given = exact->count() + deletable->count() + capacity->count() +
                                  fp_rate->count() + revisit_after->count() >
                              0;
    for (const CLI::Option* o : canon) flags->parameters_given |= o->count() > 0;
    *exit_code = RunFilter(*flags);
  });
}

}  // namespace urlsieve::cli
