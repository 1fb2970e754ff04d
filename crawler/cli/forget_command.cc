// `urlsieve forget`: forgets each URL read from stdin (docs/features/forgetting.md, "Forgetting"),
// so that the next insert of it, by `filter` or by a crawl, is told new and the URL is printed or
// fetched again. The set is a state directory (--state DIR: a `filter` state, or a crawl's
// OUT/state; OUT itself is taken to mean OUT/state) or a set shared in Redis (--redis URL --name
// NAME).
//
// Only a set that can delete a key forgets: an exact one (--exact: the exact store deletes the
// record; the Bloom filter then answers "maybe" and the store "no") or a deletable Bloom filter
// (--deletable, a counting filter). A plain Bloom filter is refused (exit 1, nothing changed), as
// is a state locked by a running crawl or filter (exit 1, naming its pid).
//
// Output: per URL, one line on stdout, "forgotten<TAB>URL" or "absent<TAB>URL" (it was not in the
// set); a line that is not a valid URL is reported on stderr with its line number and skipped,
// and the others are still forgotten; at the end a summary on stderr. The state is saved once
// at the end (on SIGINT/SIGTERM too, after the current batch), so every URL reported forgotten is
// forgotten durably once the command exits 0 or 3.
//
// Exit codes: 0 every line was forgotten or absent; 3 the same, but some lines were invalid
// (reported); 1 an error (the state cannot be opened or is locked, a plain Bloom filter, a
// failure to read stdin, write stdout or save: the summary says what was saved); 2 usage.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "crawler/cli/commands.h"
#include "crawler/cli/line_excerpt.h"
#include "crawler/cli/line_io.h"
#include "crawler/cli/option_flags.h"
#include "crawler/cli/stop_signals.h"
#include "crawler/cluster/cluster_forget.h"
#include "dedup/seen_filter.h"
#include "redis/redis_address.h"

namespace urlsieve::cli {
namespace {

constexpr int kExitSomeInvalid = 3;

struct ForgetFlags {
  std::string state_dir;
  std::string redis_url;
  std::string redis_name;
  std::string cluster_url;  // a crawl cluster's seen set (with cluster_name)
  std::string cluster_name;
  RedisFlagValues redis;
  size_t batch = 4096;
  bool quiet = false;  // no per-URL lines, the summary only
};

// A crawl's output directory holds its state in OUT/state: `--state OUT` means that.
std::string StateDirOf(const std::string& given) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(fs::path(given) / "state.db", ec) &&
      fs::exists(fs::path(given) / "state" / "state.db", ec)) {
    return (fs::path(given) / "state").string();
  }
  return given;
}

// The set to forget in: the shared one, or the state directory (which must hold a state).
Result<SeenFilterOptions> ForgetOptions(const ForgetFlags& flags) {
  SeenFilterOptions options;
  if (!flags.redis_url.empty()) {
    options.redis_url = flags.redis_url;
    options.redis_name = flags.redis_name;
    options.redis_accept_loss = flags.redis.accept_loss;
    return options;
  }
  options.state_dir = StateDirOf(flags.state_dir);
  if (!std::filesystem::exists(std::filesystem::path(options.state_dir) / "state.db")) {
    return Status::NotFound("no state in " + options.state_dir +
                            " (no state.db): nothing to forget");
  }
  return options;
}

struct ForgetCounts {
  uint64_t forgotten = 0;
  uint64_t absent = 0;
  uint64_t invalid = 0;
};

// One batch of input: the lines' bytes back to back, with their end offsets and line numbers.
struct ForgetBatch {
  // Reads up to `size` non-empty lines; false once the input has ended.
  bool Read(LineReader& reader, size_t size, uint64_t* line_number) {
    lines.clear();
    line_ends.clear();
    line_numbers.clear();
    bool more = true;
    std::string_view line;
    while (line_ends.size() < size && (more = reader.Next(&line))) {
      ++*line_number;
      if (line.empty()) continue;
      lines.append(line);
      line_ends.push_back(lines.size());
      line_numbers.push_back(*line_number);
    }
    urls.clear();
    for (size_t i = 0, begin = 0; i < line_ends.size(); begin = line_ends[i], ++i) {
      urls.push_back(std::string_view(lines).substr(begin, line_ends[i] - begin));
    }
    return more;
  }

  std::string lines;
  std::vector<size_t> line_ends;
  std::vector<uint64_t> line_numbers;
  std::vector<std::string_view> urls;
  std::vector<ForgetResult> results;
};

// Per URL: "forgotten" or "absent" on stdout (unless quiet), or the reason it is invalid on
// stderr.
void ReportBatch(const ForgetBatch& batch, bool quiet, LineWriter& writer, LineWriter& errors,
                 ForgetCounts* counts) {
  for (size_t i = 0; i < batch.urls.size(); ++i) {
    switch (batch.results[i].outcome) {
      case ForgetOutcome::kForgotten:
        ++counts->forgotten;
        if (!quiet) writer.WriteLine(std::string("forgotten\t").append(batch.urls[i]));
        break;
      case ForgetOutcome::kNotThere:
        ++counts->absent;
        if (!quiet) writer.WriteLine(std::string("absent\t").append(batch.urls[i]));
        break;
      case ForgetOutcome::kInvalid:
        ++counts->invalid;
        // Never the raw line: it may be huge or hold terminal escapes.
        errors.WriteLine("line " + std::to_string(batch.line_numbers[i]) + ": " +
                         EscapedExcerpt(batch.results[i].error.message()) + ": " +
                         EscapedExcerpt(batch.urls[i]));
        break;
    }
  }
}

// What forgets a batch, and what saves it: a SeenFilter (a state, a shared set) or a crawl
// cluster's routed set (saved as it goes, in Redis).
struct Forgetter {
  std::function<Status(std::span<const std::string_view>, std::vector<ForgetResult>*)> forget;
  std::function<Status()> save;
  std::shared_ptr<void> owner;
};

Result<Forgetter> OpenForgetter(const ForgetFlags& flags) {
  if (!flags.cluster_url.empty()) {
    Result<RedisAddress> address = RedisAddress::Parse(flags.cluster_url);
    if (!address.ok()) return address.status();
    std::vector<SeenNotice> notices;
    auto cluster =
        ClusterForget::Open(*address, flags.cluster_name, flags.redis.accept_loss, &notices);
    for (const SeenNotice& notice : notices)
      fprintf(stderr, "urlsieve forget: %s\n", notice.text.c_str());
    if (!cluster.ok()) return cluster.status();
    std::shared_ptr<ClusterForget> set = std::move(*cluster);
    return Forgetter{[set](std::span<const std::string_view> urls, std::vector<ForgetResult>* out) {
                       return set->ForgetBatch(urls, out);
                     },
                     [] { return Status::Ok(); }, set};
  }
  auto options = ForgetOptions(flags);
  if (!options.ok()) return options.status();
  auto opened = SeenFilter::Open(*options);
  if (!opened.ok()) return opened.status();
  std::shared_ptr<SeenFilter> filter = std::move(*opened);
  return Forgetter{
      [filter](std::span<const std::string_view> urls, std::vector<ForgetResult>* out) {
        return filter->ForgetBatch(urls, out);
      },
      [filter] { return filter->Save(); }, filter};
}

int RunForget(const ForgetFlags& flags) {
  InstallStopHandlers();
  auto opened = OpenForgetter(flags);
  if (!opened.ok()) {
    fprintf(stderr, "urlsieve forget: %s\n", opened.status().ToString().c_str());
    return kExitFailure;
  }
  Forgetter& filter = *opened;
  LineReader reader(STDIN_FILENO);
  LineWriter writer(STDOUT_FILENO);
  LineWriter errors(STDERR_FILENO);
  ForgetBatch batch;
  ForgetCounts counts;
  uint64_t line_number = 0;
  bool more = true;
  Status status;
  while (more && status.ok() && writer.ok() && !StopRequested()) {
    more = batch.Read(reader, flags.batch, &line_number);
    status = filter.forget(batch.urls, &batch.results);
    if (!status.ok()) break;
    ReportBatch(batch, flags.quiet, writer, errors, &counts);
  }
  const bool flushed = writer.Flush();
  errors.Flush();
  // What was forgotten is saved even when stdout failed: a "forgotten" line that was not written
  // out loses nothing (forgetting again finds the URL absent).
  // Nothing forgotten: nothing to save (a crawl's state is left exactly as it was).
  Status saved = counts.forgotten > 0 ? filter.save() : Status::Ok();
  const int code =
      ReportStreamEnd("forget", counts.invalid > 0 ? kExitSomeInvalid : kExitOk, status,
                      reader.error(), flushed, saved, " (nothing of this run is forgotten)");
  fprintf(stderr, "urlsieve forget: %llu forgotten, %llu absent, %llu invalid%s\n",
          static_cast<unsigned long long>(counts.forgotten),
          static_cast<unsigned long long>(counts.absent),
          static_cast<unsigned long long>(counts.invalid),
          StopRequested() ? " (stopped early)" : "");
  return code;
}

}  // namespace

void AddForgetCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<ForgetFlags>();
  CLI::App* cmd = app.add_subcommand(
      "forget",
      "Forget each URL from stdin, so that a later filter or crawl takes it as new (an --exact or "
      "--deletable state or set). Prints 'forgotten<TAB>URL' or 'absent<TAB>URL' per URL. Exit "
      "0 ok, 3 some lines invalid (reported on stderr), 1 error, 2 usage");
  const SeenSetFlags set = AddSeenSetFlags(
      cmd, &flags->state_dir, &flags->redis_url, &flags->redis_name,
      {.state = "State directory: a filter's, or a crawl's OUT/state (or OUT)",
       .redis = "A seen set shared in Redis: redis://[[user]:password@]host:port[/db] (with "
                "--name)",
       .name = "The shared set's name in --redis",
       .name_flag = "--name,--redis-name"},
      &flags->redis);
  CLI::Option* cluster =
      cmd->add_option("--cluster", flags->cluster_url,
                      "A crawl cluster's seen set: redis://[[user]:password@]host:port[/db] (with "
                      "--cluster-name)")
          ->excludes(set.state)
          ->excludes(set.redis);
  CLI::Option* cluster_name =
      cmd->add_option("--cluster-name", flags->cluster_name, "The cluster's name");
  cluster->needs(cluster_name);
  cluster_name->needs(cluster);
  cmd->add_flag("--quiet,-q", flags->quiet, "Print only the summary (stderr)");
  cmd->add_option("--batch", flags->batch, "URLs per batch")
      ->check(CLI::Range(size_t{1}, size_t{1} << 20));
  cmd->callback([flags, exit_code, set] {
    if (flags->cluster_url.empty()) RequireSeenSet(set);
    *exit_code = RunForget(*flags);
  });
}

}  // namespace urlsieve::cli
