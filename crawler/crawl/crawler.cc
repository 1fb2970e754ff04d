#include "crawler/crawl/crawler.h"

#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>
#include <unordered_set>

#include "base/duration.h"
#include "crawler/config/component_options.h"
#include "crawler/config/rules_file.h"
#include "crawler/crawl/admission.h"
#include "crawler/crawl/decision_message.h"
#include "crawler/crawl/deployment.h"
#include "crawler/crawl/rule_exchange.h"
#include "crawler/crawl/scope.h"
#include "crawler/crawl/url_router.h"
#include "crawler/crawl/work_source.h"
#include "crawler/fetch/curl_share.h"
#include "crawler/fetch/fetcher.h"
#include "crawler/metrics/metrics_server.h"
#include "crawler/metrics/progress_reporter.h"
#include "crawler/output/jsonl_writer.h"
#include "crawler/output/warc_writer.h"
#include "crawler/page/link_extractor.h"
#include "crawler/page/page_processor.h"
#include "crawler/sitemap/sitemap_store.h"
#include "crawler/state/claim_record.h"
#include "crawler/state/crawl_checkpoint.h"
#include "crawler/state/crawl_state.h"
#include "crawler/state/dust_rule_store.h"
#include "crawler/state/fetch_record.h"
#include "crawler/state/recrawl_schedule.h"
#include "dedup/seen_filter.h"
#include "dedup/seen_set.h"
#include "frontier/frontier.h"
#include "url/url_canonicalizer.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;

constexpr auto kMonitorTick = std::chrono::milliseconds(250);
// How often a crawl on a shared seen set shares its URL rules (rule_exchange.h): a rule one crawl
// adopts applies in the others within about this long.
constexpr auto kRuleExchangeInterval = std::chrono::seconds(1);

// The progress line's sample, with a re-crawl's re-fetches by what they found.
ProgressSample Progress(const CrawlStatsSnapshot& s, uint64_t queued, uint64_t hosts,
                        uint64_t errors) {
  ProgressSample sample{s.pages, queued, hosts, errors};
  auto count = [&](std::string_view result) {
    auto it = s.refetches.find(std::string(result));
    return it == s.refetches.end() ? uint64_t{0} : it->second;
  };
  sample.not_modified = count(RefetchResultName(RefetchResult::kNotModified));
  sample.unchanged = count(RefetchResultName(RefetchResult::kUnchanged));
  sample.changed = count(RefetchResultName(RefetchResult::kChanged));
  return sample;
}

// Whether `out` holds a crawl, and whether that crawl is whole. A crawl is there when its
// state.db is; outputs or a Bloom snapshot without a (non-empty) state.db are the remains of a
// crawl whose state was lost or damaged: starting afresh would refetch everything and truncate
// the old outputs, and resuming has nothing to resume from. Both are errors; nothing is touched.
Result<bool> CrawlIsThere(const fs::path& out, const fs::path& state) {
  std::error_code ec;
  const fs::path db = state / "state.db";
  const bool db_exists = fs::exists(db, ec);
  const bool db_empty =
      db_exists && fs::file_size(db, ec) == 0 && !ec &&
      !(fs::exists(state / "state.db-wal", ec) && fs::file_size(state / "state.db-wal", ec) > 0);
  if (db_exists && !db_empty) return true;
  std::string remains;
  for (const fs::path& file : {state / "bloom.snap", state / "bloom.snap.next", out / "pages.jsonl",
                               out / "rejected.jsonl", out / "crawl.warc.gz"}) {
    if (!fs::exists(file, ec)) continue;
    remains += remains.empty() ? "" : ", ";
    remains += file.string();
  }
  if (remains.empty()) return false;  // at most an empty state.db: a crawl that never began
  return Status::Corruption(
      db.string() + (db_exists ? " is empty (0 bytes)" : " is missing") + " but " + out.string() +
      " holds the rest of a crawl (" + remains +
      "): its state is lost or damaged. Restore state.db from a backup, or choose another --out "
      "directory (nothing was changed)");
}

// At most 200 bytes of an untrusted string, control bytes escaped.
std::string EscapedForMessage(std::string_view text) {
  std::string out;
  for (unsigned char c : text.substr(0, 200)) {
    if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02X", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (text.size() > 200) out += "...";
  return out;
}

}  // namespace

Crawler::Crawler(const CrawlConfig& config)
    : config_(config), log_(stderr, config.output.log_level) {}

Crawler::~Crawler() = default;

Result<std::unique_ptr<Crawler>> Crawler::Create(const CrawlConfig& config,
                                                 const DeploymentMaker& make_deployment) {
  URLSIEVE_RETURN_IF_ERROR(config.Validate());
  std::unique_ptr<Crawler> crawler(new Crawler(config));
  URLSIEVE_RETURN_IF_ERROR(crawler->Open(make_deployment));
  return crawler;
}

Status Crawler::Open(const DeploymentMaker& make_deployment) {
  // docs/features/metrics.md, "Metrics": bound before anything is made.
  URLSIEVE_RETURN_IF_ERROR(BindMetrics());
  Result<bool> continuing = CheckOutDir();
  if (!continuing.ok()) return continuing.status();
  deployment_ = make_deployment(config_, &notices_);
  URLSIEVE_RETURN_IF_ERROR(OpenState());
  URLSIEVE_RETURN_IF_ERROR(OpenFrontier());
  Restored restored;
  if (*continuing) URLSIEVE_RETURN_IF_ERROR(Restore(&restored));
  URLSIEVE_RETURN_IF_ERROR(OpenContentSet());
  URLSIEVE_RETURN_IF_ERROR(OpenDust());
  std::vector<CanonicalUrl> seeds;
  URLSIEVE_RETURN_IF_ERROR(ReadSeeds(&seeds));
  URLSIEVE_RETURN_IF_ERROR(OpenPageParts(seeds));
  URLSIEVE_RETURN_IF_ERROR(OpenOutputs());
  stats_ = std::make_unique<CrawlStats>(&clock_);
  if (restored.counters) stats_->Resume(*restored.counters);
  URLSIEVE_RETURN_IF_ERROR(QueueClaims());
  if (config_.crawl.recrawl && deployment_->RecrawlsFromState()) {
    URLSIEVE_RETURN_IF_ERROR(QueueDue(restored.due));
  }
  URLSIEVE_RETURN_IF_ERROR(BuildDeployment(seeds));
  URLSIEVE_RETURN_IF_ERROR(QueueSeeds(std::move(seeds)));
  return QueueStartSitemaps(restored.sitemap_roots);
}

Result<bool> Crawler::CheckOutDir() const {
  const fs::path out(config_.crawl.out_dir);
  Result<bool> there = CrawlIsThere(out, out / "state");
  if (!there.ok()) return there.status();
  const bool exists = *there;
  // A re-crawl continues the crawl in `out` as --resume does, then queues what is due.
  const bool continuing = config_.crawl.resume || config_.crawl.recrawl;
  if (exists && !continuing) {
    return Status::FailedPrecondition(out.string() +
                                      " already holds a crawl: pass --resume to continue it "
                                      "(or --recrawl to fetch it again), or choose another --out "
                                      "directory");
  }
  if (!exists && config_.crawl.recrawl) {
    return Status::FailedPrecondition("--recrawl: " + out.string() +
                                      " holds no crawl to re-crawl (crawl into it first, "
                                      "without --recrawl)");
  }
  if (!exists && config_.crawl.resume) {
    return Status::FailedPrecondition("--resume: no crawl state in " + out.string());
  }
  if (config_.crawl.rebuild_bloom && !continuing) {
    return Status::FailedPrecondition("--rebuild applies to a crawl continued with --resume");
  }
  return continuing;
}

Status Crawler::OpenState() {
  // CrawlState creates the directories (after a shared seen set's server has answered, so that
  // a wrong address or password leaves nothing behind).
  CrawlStateOptions state_options;
  state_options.dir = (fs::path(config_.crawl.out_dir) / "state").string();
  state_options.capacity = config_.crawl.expected_urls;
  state_options.fp_rate = config_.crawl.false_positive_rate;
  state_options.exact = config_.crawl.exact;
  state_options.deletable = config_.crawl.deletable;
  state_options.canonicalize = config_.canonicalize;
  Result<SeenSetSource*> source = deployment_->PrepareSeenSet(state_options);
  if (!source.ok()) return source.status();
  Result<std::unique_ptr<CrawlState>> opened = CrawlState::Open(state_options, **source);
  if (!opened.ok()) return opened.status();
  state_ = std::move(*opened);
  seen_ = &state_->seen();
  // Without opt-in rules the fetch form is the key, so it keeps the state's key version.
  CanonicalizeOptions fetch_form;
  fetch_form.max_length = config_.canonicalize.max_length;
  fetch_form.key_version = seen_->options().canonicalize.key_version;
  fetch_form_ = std::make_unique<UrlCanonicalizer>(fetch_form);
  for (const SeenNotice& notice : state_->notices()) notices_.push_back(notice.text);
  return Status::Ok();
}

Status Crawler::OpenFrontier() {
  FrontierOptions frontier_options = FrontierOptionsFrom(
      config_, (fs::path(config_.crawl.out_dir) / "state" / "spill.db").string());
  deployment_->PrepareFrontier(&frontier_options);
  Result<std::unique_ptr<Frontier>> frontier = Frontier::Open(frontier_options, &clock_);
  if (!frontier.ok()) return frontier.status();
  frontier_ = std::move(*frontier);
  router_ = std::make_unique<LocalUrlRouter>(frontier_.get());
  RecrawlScheduleOptions schedule_options;
  schedule_options.revisit_after = config_.recrawl.revisit_after;
  schedule_options.min_interval = config_.recrawl.min_interval;
  schedule_options.max_interval = config_.recrawl.max_interval;
  schedule_options.unchanged_factor = config_.recrawl.unchanged_factor;
  schedule_options.changed_factor = config_.recrawl.changed_factor;
  schedule_ = std::make_unique<RecrawlSchedule>(schedule_options);
  records_ = std::make_unique<FetchRecordStore>();
  sitemaps_ = std::make_unique<SitemapStore>();
  return Status::Ok();
}

Status Crawler::Restore(Restored* restored) {
  // A resumed crawl continues the counters it recorded, and its outputs are checked against the
  // checkpoint (OpenOutputs) before any is cut back to it.
  return state_->Restore([&](SqliteDb& db) -> Status {
    URLSIEVE_RETURN_IF_ERROR(deployment_->RestorePending(db, frontier_.get()));
    Result<CrawlCheckpointRecord> record = ReadCrawlCheckpoint(db, &notices_);
    if (!record.ok()) return record.status();
    recorded_marks_ = record->marks;
    restored->counters = std::move(record->counters);
    // The re-fetches a stopped re-crawl left pending (the frontier holds them again).
    URLSIEVE_RETURN_IF_ERROR(records_->LoadQueued(db));
    URLSIEVE_RETURN_IF_ERROR(sitemaps_->Load(db, config_.crawl.recrawl, &restored->sitemap_roots));
    if (config_.crawl.recrawl && deployment_->RecrawlsFromState()) {
      const int64_t now =
          std::chrono::duration_cast<std::chrono::seconds>(clock_.WallNow().time_since_epoch())
              .count();
      Result<std::vector<FetchRecord>> taken =
          records_->TakeDue(db, now, config_.recrawl.revisit_after.count());
      if (!taken.ok()) return taken.status();
      restored->due = std::move(*taken);
    }
    return Status::Ok();
  });
}

Status Crawler::OpenContentSet() {
  if (!config_.content.seen) return Status::Ok();
  ContentSeenOptions options;
  options.max_distance = config_.content.near_distance;
  options.near = config_.content.near;
  Result<std::unique_ptr<ContentSeenSet>> shared = deployment_->OpenContentSet(options);
  if (!shared.ok()) return shared.status();
  if (*shared != nullptr) {
    content_ = std::move(*shared);
    return Status::Ok();
  }
  // The state's own, in state.db: the database lives as long as the state, which outlives it.
  return state_->Restore([&](SqliteDb& db) -> Status {
    Result<std::unique_ptr<LocalContentSeenSet>> local = LocalContentSeenSet::Open(&db, options);
    if (!local.ok()) return local.status();
    local_content_ = local->get();
    content_ = std::move(*local);
    return Status::Ok();
  });
}

Status Crawler::OpenDust() {
  Result<DustMode> mode = ParseDustMode(config_.dust.mode);
  if (!mode.ok()) return mode.status();
  if (*mode == DustMode::kOff) return Status::Ok();
  DustOptions options;
  options.mode = *mode;
  options.min_support = static_cast<uint32_t>(config_.dust.min_support);
  options.min_confidence = config_.dust.min_confidence;
  options.min_confidence_bound = config_.dust.min_confidence_bound;
  options.validation_sample = static_cast<uint32_t>(config_.dust.validation_sample);
  options.check_every = static_cast<uint32_t>(config_.dust.check_every);
  options.max_check_share = config_.dust.max_check_share;
  options.max_distance = config_.content.near_distance;
  dust_ = std::make_unique<DustLearner>(options);
  lease_filter_ = std::make_unique<DustLeaseFilter>(dust_.get());
  frontier_->SetLeaseFilter(lease_filter_.get());
  dust_store_ = std::make_unique<DustRuleStore>();
  URLSIEVE_RETURN_IF_ERROR(
      state_->Restore([&](SqliteDb& db) { return DustRuleStore::Load(db, dust_.get()); }));
  Result<std::unique_ptr<RuleExchange>> exchange = deployment_->OpenRuleExchange();
  if (!exchange.ok()) return exchange.status();
  rule_exchange_ = std::move(*exchange);
  // The other crawls' rules apply from the first page on (a crawl joining a set learned on).
  if (rule_exchange_) URLSIEVE_RETURN_IF_ERROR(rule_exchange_->Exchange(dust_.get()));
  if (config_.dust.rules_file.empty()) return Status::Ok();
  Result<std::vector<UserRule>> rules = ReadRulesFile(config_.dust.rules_file);
  if (!rules.ok()) return rules.status();
  for (const UserRule& rule : *rules) {
    URLSIEVE_RETURN_IF_ERROR(dust_->AddUserRule(rule.origin, rule.form, rule.pin));
  }
  notices_.push_back("--rules-file: " + std::to_string(rules->size()) + " URL rules from " +
                     config_.dust.rules_file);
  return Status::Ok();
}

Status Crawler::OpenPageParts(const std::vector<CanonicalUrl>& seeds) {
  ScopeOptions scope_options = ScopeOptions::FromConfig(config_);
  deployment_->PrepareScope(&scope_options);
  Result<std::unique_ptr<Scope>> scope = Scope::Create(scope_options, seeds);
  if (!scope.ok()) return scope.status();
  scope_ = std::move(*scope);
  LinkExtractor::Options link_options;
  link_options.obey_nofollow = config_.crawl.obey_nofollow;
  link_options.collect_text = content_ != nullptr && config_.content.near;
  extractor_ = std::make_unique<LinkExtractor>(fetch_form_.get(), link_options);
  default_encoding_ = EncodingForLabel(config_.crawl.default_encoding);
  if (default_encoding_ == nullptr) {
    return Status::InvalidArgument("crawl.default_encoding: \"" + config_.crawl.default_encoding +
                                   "\" is not an encoding label (--default-encoding)");
  }
  processor_ = std::make_unique<PageProcessor>(fetch_form_.get(), extractor_.get(),
                                               default_encoding_, schedule_.get());
  Result<std::unique_ptr<CurlShare>> share = CurlShare::Create();
  if (!share.ok()) return share.status();
  share_ = std::move(*share);
  return Status::Ok();
}

Status Crawler::OpenOutputs() {
  // A fresh crawl starts its outputs empty; a resumed one checks every output against its
  // checkpoint before cutting any back to it.
  const fs::path out(config_.crawl.out_dir);
  const OutputFiles files{config_.output.jsonl ? (out / "pages.jsonl").string() : "",
                          (out / "rejected.jsonl").string(),
                          config_.output.warc ? (out / "crawl.warc.gz").string() : ""};
  Result<VerifiedOutputs> outputs = VerifyOutputs(files, recorded_marks_, &notices_);
  if (!outputs.ok()) return outputs.status();
  if (config_.output.jsonl) {
    Result<std::unique_ptr<JsonlWriter>> pages =
        JsonlWriter::Open(files.pages, std::move(*outputs->pages));
    if (!pages.ok()) return pages.status();
    pages_ = std::move(*pages);
  }
  Result<std::unique_ptr<JsonlWriter>> rejected =
      JsonlWriter::Open(files.rejected, std::move(*outputs->rejected));
  if (!rejected.ok()) return rejected.status();
  rejected_ = std::move(*rejected);
  if (config_.output.warc) {
    WarcWriterOptions warc_options;
    warc_options.user_agent = config_.fetch.user_agent;
    Result<std::unique_ptr<WarcWriter>> warc =
        WarcWriter::Open(files.warc, warc_options, std::move(*outputs->warc));
    if (!warc.ok()) return warc.status();
    warc_ = std::move(*warc);
  }
  return Status::Ok();
}

Status Crawler::BuildDeployment(const std::vector<CanonicalUrl>& seeds) {
  CrawlParts parts;
  parts.config = &config_;
  parts.state = state_.get();
  parts.frontier = frontier_.get();
  parts.router = router_.get();
  parts.scope = scope_.get();
  parts.fetch_form = fetch_form_.get();
  parts.records = records_.get();
  parts.log = &log_;
  parts.checkpoint = [this] { return Checkpoint(); };
  parts.fail = [this](const Status& status) { Fail(status); };
  parts.record_rejections = [this] { RecordRejections(); };
  URLSIEVE_RETURN_IF_ERROR(deployment_->Build(parts, seeds));
  admission_ = &deployment_->admission();
  work_ = &deployment_->work();
  return Status::Ok();
}

const std::string& Crawler::node_id() const { return deployment_->node_id(); }

Status Crawler::QueueClaims() {
  const std::vector<std::string>& claims = state_->uncommitted_claims();
  if (claims.empty()) return Status::Ok();
  // Routed in runs of one depth and parent (a page's links were claimed together).
  std::shared_lock<std::shared_mutex> gate(state_->gate());
  std::vector<CanonicalUrl> run;
  ClaimRecord run_of;
  for (size_t i = 0; i <= claims.size(); ++i) {
    std::optional<ClaimRecord> record;
    if (i < claims.size()) {
      record = DecodeClaim(claims[i]);
      if (!record || record->sitemap) {
        return Status::Corruption(
            state_->shared_seen_set() + ": claim " + std::to_string(i + 1) +
            " of this crawl's claim log is not a URL record: " + EscapedForMessage(claims[i]));
      }
    }
    if (!run.empty() &&
        (!record || record->depth != run_of.depth || record->parent != run_of.parent)) {
      URLSIEVE_RETURN_IF_ERROR(router_->Route(run, run_of.depth, run_of.parent));
      run.clear();
    }
    if (!record) break;
    Result<CanonicalUrl> url = fetch_form_->Canonicalize(record->url);
    if (!url.ok()) {
      return Status::Corruption(state_->shared_seen_set() +
                                ": a URL of this crawl's claim log: " + url.status().message());
    }
    run.push_back(std::move(*url));
    run_of = std::move(*record);
  }
  notices_.push_back("queued again the " + std::to_string(claims.size()) + " URLs " +
                     state_->shared_seen_set() +
                     " told this crawl new after its last checkpoint (its claim log)");
  RecordRejections();
  return Status::Ok();
}

Status Crawler::QueueDue(const std::vector<FetchRecord>& due) {
  std::shared_lock<std::shared_mutex> gate(state_->gate());
  uint64_t queued = 0;
  for (const FetchRecord& record : due) {
    // docs/features/recrawl.md, "Re-crawl": a known URL is not asked of the seen stage again; it
    // still passes the scope (the re-crawl's own) and the frontier (robots.txt, politeness,
    // budgets).
    Result<CanonicalUrl> url = fetch_form_->Canonicalize(record.url);
    if (!url.ok() || !scope_->Check(*url, static_cast<int>(record.depth)).accept()) {
      records_->Unqueue(record.url);
      continue;
    }
    URLSIEVE_RETURN_IF_ERROR(
        router_->Route(std::span<const CanonicalUrl>(&*url, 1), record.depth, record.parent));
    ++queued;
  }
  std::string notice = "re-crawl: queued the " + std::to_string(queued);
  notice += " fetched URLs that are due (--revisit-after ";
  notice += FormatDuration(config_.recrawl.revisit_after);
  notice += ")";
  if (records_->queued() > queued) {
    notice += "; " + std::to_string(records_->queued() - queued);
    notice += " queued by an earlier re-crawl are pending";
  }
  notices_.push_back(std::move(notice));
  RecordRejections();
  return Status::Ok();
}

Status Crawler::ReadSeeds(std::vector<CanonicalUrl>* seeds) {
  const std::string& path = config_.crawl.seeds;
  if (path.empty() && deployment_->SeedsOptional()) return Status::Ok();  // waits for work
  std::ifstream in(path);
  if (!in) return Status::InvalidArgument("cannot read the seeds file '" + path + "'");
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const size_t begin = line.find_first_not_of(" \t\r");
    if (begin == std::string::npos || line[begin] == '#') continue;
    Result<CanonicalUrl> url = fetch_form_->Canonicalize(line);
    if (!url.ok()) {
      notices_.push_back(path + ":" + std::to_string(number) +
                         ": skipped seed: " + url.status().message());
      continue;
    }
    seeds->push_back(std::move(*url));
  }
  if (seeds->empty()) return Status::InvalidArgument("no valid seed URL in '" + path + "'");
  return Status::Ok();
}

Status Crawler::QueueSeeds(std::vector<CanonicalUrl> seeds) {
  const bool any = !seeds.empty();
  {
    std::shared_lock<std::shared_mutex> gate(state_->gate());
    Result<Admitted> admitted = PushNew(&seeds, 0, "");
    RecordRejections();
    if (!admitted.ok()) return admitted.status();
  }
  return deployment_->SeedsQueued(any);
}

Result<Admitted> Crawler::PushNew(std::vector<CanonicalUrl>* urls, uint32_t depth,
                                  const std::string& parent) {
  LinkBatch batch;
  batch.urls = std::move(*urls);
  batch.depth = depth;
  batch.parent = parent;
  std::vector<std::pair<std::string, std::string>> rewritten;
  if (dust_) rewritten = ApplyDust(&batch);
  // The state's rules, not the config's: a resumed state keeps the rules it was created with.
  URLSIEVE_RETURN_IF_ERROR(KeyLinks(*seen_, HasOptInRules(seen_->options().canonicalize), &batch));
  const size_t n = batch.urls.size();
  Result<Admitted> admitted = admission_->Admit(&batch);
  *urls = std::move(batch.urls);
  if (admitted.ok() && admitted->answered) {
    stats_->RecordSeen(n, static_cast<uint64_t>(admitted->fresh));
  }
  // A URL seen-tested under its rule key and not new: a page the crawl has (or has queued). A
  // check not queued (its own key was not new) will not be fetched: the learner takes it back.
  if (admitted.ok() && admitted->answered && admitted->taken && !rewritten.empty()) {
    std::unordered_set<std::string_view> fresh;
    for (const CanonicalUrl& url : *urls) fresh.insert(url.key());
    for (const auto& [url, rule_id] : rewritten) {
      if (fresh.count(url) > 0) {
        if (!rule_id.empty()) dust_->Admitted(rule_id, url);
        continue;
      }
      if (rule_id.empty()) {
        dust_->CheckNotQueued(url);
      } else {
        RecordSuppressed(rule_id, url, depth, parent);
      }
    }
  }
  return admitted;
}

Result<CrawlSummary> Crawler::Run() {
  if (!config_.fetch.verify_tls) {
    log_.Info(
        "warning: --insecure: TLS certificates and host names are not verified (recorded "
        "in stats.json as \"tls_verification\": false)");
  }
  if (Status serving = StartMetrics(); !serving.ok()) return serving;
  ProgressReporter progress(stderr, config_.output.progress && ProgressReporter::StderrIsTerminal(),
                            &clock_);
  std::thread monitor([this, &progress] {
    const auto interval = std::chrono::seconds(config_.crawl.checkpoint_interval_s);
    auto next_checkpoint = clock_.Now() + interval;
    auto next_exchange = clock_.Now();
    std::unique_lock<std::mutex> lock(monitor_mu_);
    while (!fetchers_done_) {
      monitor_cv_.wait_for(lock, kMonitorTick);
      if (fetchers_done_) break;
      lock.unlock();
      const FrontierStats f = frontier_->Stats();
      const CrawlStatsSnapshot s = stats_->Snapshot();
      uint64_t errors = 0;
      for (const auto& [kind, count] : s.errors) errors += count;
      ProgressSample sample = Progress(s, f.pending, f.keys, errors);
      deployment_->Tick(s, errors, &sample);
      progress.Update(sample);
      if (rule_exchange_ && clock_.Now() >= next_exchange) {
        ExchangeRules();
        next_exchange = clock_.Now() + kRuleExchangeInterval;
      }
      if (config_.crawl.checkpoint_interval_s > 0 && clock_.Now() >= next_checkpoint) {
        Status status = Checkpoint();
        if (!status.ok()) Fail(status);
        next_checkpoint = clock_.Now() + interval;
      }
      lock.lock();
    }
  });

  work_->Start();
  std::vector<std::thread> fetchers;
  for (int i = 0; i < config_.crawl.threads; ++i) fetchers.emplace_back([this] { FetcherLoop(); });
  for (std::thread& t : fetchers) t.join();
  {
    std::lock_guard<std::mutex> lock(monitor_mu_);
    fetchers_done_ = true;
  }
  monitor_cv_.notify_all();
  monitor.join();

  // What this crawl learned last reaches the other crawls on its set (what they retired meanwhile
  // is queued again here, for the next run).
  if (rule_exchange_) ExchangeRules();
  RecordRejections();
  Status saved = work_->Close();  // the final checkpoint
  const bool finished = work_->Finished(stop_requested_.load());
  deployment_->Finish(stats_->Snapshot(), finished, [this](const Status& status) { Fail(status); });
  CrawlSummary summary;
  summary.stats = stats_->Snapshot();
  summary.stats.AddRejections(scope_->Rejections());
  const FrontierStats f = frontier_->Stats();
  summary.pending = f.pending + f.in_flight;
  summary.stopped = !finished;
  progress.Finish(Progress(summary.stats, summary.pending, f.keys, 0));
  nlohmann::json stats_json = summary.stats.ToJson();
  const MetricsSnapshot final_metrics = FinalMetrics(summary.stats);
  AddMetricsJson(final_metrics, &stats_json);
  stats_json["tls_verification"] = config_.fetch.verify_tls;
  stats_json["dust"]["mode"] = config_.dust.mode;
  deployment_->Describe(&stats_json);
  Status written =
      WriteJsonFile((fs::path(config_.crawl.out_dir) / "stats.json").string(), stats_json);
  StopMetrics(final_metrics);  // serves them until the linger is over
  {
    std::lock_guard<std::mutex> lock(error_mu_);
    if (!first_error_.ok()) return first_error_;
  }
  if (!saved.ok()) return saved;
  if (!written.ok()) return written;
  return summary;
}

void Crawler::RequestStop() {
  {
    std::lock_guard<std::mutex> lock(monitor_mu_);
    stop_requested_ = true;
  }
  monitor_cv_.notify_all();
  if (admission_) admission_->Stop();
  if (frontier_) frontier_->Stop();
  if (work_) work_->Stop();
}

void Crawler::Fail(const Status& status) {
  {
    std::lock_guard<std::mutex> lock(error_mu_);
    if (first_error_.ok()) first_error_ = status;
  }
  RequestStop();
}

void Crawler::FetcherLoop() {
  Result<std::unique_ptr<Fetcher>> fetcher =
      Fetcher::Create(FetcherOptionsFrom(config_), share_.get());
  if (!fetcher.ok()) return Fail(fetcher.status());
  Lease lease;
  while (work_->Next(&lease)) {
    if (lease.kind == Lease::Kind::kRobots) {
      HandleRobots(**fetcher, lease);
    } else if (lease.kind == Lease::Kind::kSitemap) {
      HandleSitemap(**fetcher, lease);
    } else {
      HandlePage(**fetcher, lease);
    }
  }
}

void Crawler::HandleRobots(Fetcher& fetcher, const Lease& lease) {
  const auto started = std::chrono::system_clock::now();
  FetchResult r = fetcher.FetchRobots(lease.url);
  // RFC 9309 §2.3.1.2: a redirect goes back to the frontier with its target, which hands the next
  // hop out as another robots lease when the key is next due (and counts the hops). A redirect
  // with no usable target is no answer: unreachable (§2.3.1.4).
  std::string target;
  if (r.ok() && IsRedirectStatus(r.status)) {
    if (!r.location.empty()) {
      Result<std::string> resolved = fetch_form_->Resolve(r.url, r.location);
      if (resolved.ok()) target = std::move(*resolved);
    }
    if (target.empty()) r.status = 0;
  }
  FetchOutcome outcome;
  // RFC 9309 §2.3.1.3-4: a response decides (2xx rules, 4xx allow all, 5xx disallow all); no
  // response at all counts as unreachable.
  outcome.http_status = r.status != 0 && r.ok() ? static_cast<int>(r.status) : 0;
  outcome.fetch_time = r.total_time;
  outcome.robots_body = r.body;
  outcome.robots_redirect = target;
  outcome.permanent_failure = PermanentFailure(r);
  if (!r.ok()) stats_->RecordError(FetchErrorKindName(r.error_kind));
  std::shared_lock<std::shared_mutex> gate(state_->gate());
  // The WARC holds the response that decided (a hop of a redirect chain is not archived).
  if (warc_ && r.status != 0 && target.empty()) ArchiveAsFetched(r, started);
  // docs/features/sitemaps.md, "Sitemaps": its Sitemap: lines, queued before Done so the crawl is
  // not over.
  if (outcome.http_status >= 200 && outcome.http_status < 300 && target.empty()) {
    QueueRobotsSitemaps(r.body, lease.url);
  }
  LogDecision(lease, r, frontier_->Done(lease, outcome));
  RecordRejections();
}

void Crawler::ArchiveAsFetched(const FetchResult& r,
                               std::chrono::system_clock::time_point started) {
  WarcExchange exchange{r.url,
                        r.primary_ip,
                        started,
                        r.request_headers,
                        r.response_headers,
                        r.body,
                        !r.content_encoding.empty(),
                        WarcTruncation(r),
                        {},
                        {}};
  Status status = warc_->WriteExchange(exchange);
  if (!status.ok()) Fail(status);
}

bool Crawler::RefusesValidators(int status) {
  // RFC 9110 §13.2.1: preconditions are evaluated after the request's other checks, so a 4xx may
  // be the server refusing the validators themselves (431: the header too large; 400, 412).
  // 404 and 410 say the resource is gone, and 429 is a rate limit (backed off): those are kept.
  return status >= 400 && status < 500 && status != 404 && status != 410 && status != 429;
}

bool Crawler::TakeUnconditional(const std::string& url) {
  std::lock_guard<std::mutex> lock(unconditional_mu_);
  return unconditional_.erase(url) > 0;
}

void Crawler::HandlePage(Fetcher& fetcher, const Lease& lease) {
  const auto time = std::chrono::system_clock::now();
  // A re-fetch (docs/features/recrawl.md) asks with the validators of its record.
  const std::optional<FetchRecord> known = records_->Find(lease.url);
  ConditionalRequest validators;
  if (known && !TakeUnconditional(lease.url)) validators = {known->etag, known->last_modified};
  const FetchResult r =
      validators.empty() ? fetcher.Fetch(lease.url) : fetcher.Fetch(lease.url, validators);
  ProcessedPage page = processor_->Process(lease, r, known, time);
  if (!validators.empty() && RefusesValidators(r.status)) {
    // Asked once more without them; the good record stays (the decision is a retry).
    page.outcome.validators_refused = true;
    std::lock_guard<std::mutex> lock(unconditional_mu_);
    unconditional_.insert(lease.url);
  }

  // An admission whose queued URLs are not in the local checkpoint (a cluster's inboxes) admits
  // the links before the gate is taken: the gate then only keeps the outputs and counters
  // together, and checkpoints do not wait for its round trips.
  std::optional<QueuedLinks> queued;
  if (!admission_->NeedsGate()) {
    TestContent(lease, r, &page);
    LearnFromPage(lease, r, &page);
    queued = QueueLinks(page.links, lease.depth + 1, lease.url);
    QueueRequeued();
  }
  if (queued && !queued->taken) {
    // The links were not taken (a stop while the seen set did not answer): the page is not
    // recorded, and its work item is handed out again.
    frontier_->Abandon(lease);
    log_.Info("stopping while " + state_->shared_seen_set() + " does not answer: " + lease.url +
              " is not recorded (its inbox entry stays pending)");
    return;
  }
  uint64_t ticket = 0;
  {
    std::shared_lock<std::shared_mutex> gate(state_->gate());
    if (!queued) {
      TestContent(lease, r, &page);
      LearnFromPage(lease, r, &page);
      queued = QueueLinks(page.links, lease.depth + 1, lease.url);
      QueueRequeued();
    }
    page.record.links_found = queued->found;
    page.record.links_new = queued->fresh;
    if (pages_) {
      Status status = pages_->Append(page.record);
      if (!status.ok()) Fail(status);
    }
    std::optional<WarcRecordRef> archived;  // the response record written for this page
    if (warc_ && page.archive != PageArchive::kNone) {
      Status status;
      if (page.archive == PageArchive::kExchange) {
        WarcRecordRef ref;
        status = warc_->WriteExchange(PageProcessor::Exchange(lease, r, page), &ref);
        if (status.ok()) archived = std::move(ref);
      } else {
        status = warc_->WriteRevisit(PageProcessor::Revisit(lease, r, page, known));
      }
      if (!status.ok()) Fail(status);
    }
    stats_->RecordPage(page.record);
    for (const auto& [reason, count] : page.dropped) stats_->RecordRejection(reason, count);
    const DoneDecision decision = frontier_->Done(lease, page.outcome);
    LogDecision(lease, r, decision);
    // An exact duplicate's record refers to the first copy's capture, as its revisit does.
    if (page.archive == PageArchive::kDuplicateRevisit) archived = page.first_copy;
    // The URL's fetch record, with the page's outputs in the next checkpoint. A response to be
    // fetched again (a back-off) leaves it as it was; a failure that is given up is also rejected
    // (AppendRejections unqueues its record).
    if (decision.action != DoneDecision::Action::kRetry) {
      std::optional<FetchRecord> record;
      if (page.answered) {
        record = processor_->UpdatedRecord(known, lease, r, page, std::move(archived));
      } else if (known) {
        // Done without an answer to record (a body past the cap): the record stays as it was.
        records_->Unqueue(lease.url);
      }
      // Recorded (unless it is to be fetched again): its work item can be released.
      ticket = work_->Recorded(lease.url, record ? &*record : nullptr);
      if (record) records_->Put(std::move(*record));
    }
    RecordRejections();
  }
  work_->AwaitDurable(ticket);
}

namespace {

// A stored first copy's data (ContentCopy::data): its response record, as a revisit refers to it
// — "<record id> <WARC-Date> <payload digest>", or "" when the crawl that stored it wrote no WARC.
std::string EncodeFirstCopy(std::string_view record_id, std::string_view date,
                            std::string_view digest) {
  if (record_id.empty()) return {};
  std::string data(record_id);
  data.append(" ").append(date).append(" ").append(digest);
  return data;
}

std::optional<WarcRecordRef> DecodeFirstCopy(const ContentCopy& copy) {
  const size_t first = copy.data.find(' ');
  const size_t second = first == std::string::npos ? first : copy.data.find(' ', first + 1);
  if (second == std::string::npos) return std::nullopt;
  WarcRecordRef ref;
  ref.record_id = copy.data.substr(0, first);
  ref.date = copy.data.substr(first + 1, second - first - 1);
  ref.payload_digest = copy.data.substr(second + 1);
  ref.target_uri = copy.id;
  return ref;
}

}  // namespace

void Crawler::TestContent(const Lease& lease, const FetchResult& r, ProcessedPage* page) {
  // A body of a 2xx kept whole: a re-fetch found unchanged (a revisit of its own record), an empty
  // or cut body, a redirect or an error page is no content to compare.
  if (content_ == nullptr || page->archive != PageArchive::kExchange || r.status < 200 ||
      r.status >= 300 || r.body.empty() || r.body_skipped || !WarcTruncation(r).empty()) {
    return;
  }
  const std::optional<uint64_t> digest = DigestFromWarcPayloadDigest(page->digest);
  if (!digest) return;
  ContentCopy copy;
  copy.id = lease.url;
  if (warc_) {
    page->response_id = warc_->NewRecordId();
    copy.data =
        EncodeFirstCopy(page->response_id, FormatUtc(page->record.time, false), page->digest);
  }
  Result<ContentVerdict> verdict = content_->Test({*digest, page->simhash}, copy);
  if (!verdict.ok()) {
    // The page is recorded as a first (archived in full, its links followed): nothing is lost.
    stats_->RecordContentUnknown();
    log_.Info("the content-seen test did not answer for " + lease.url + ": " +
              verdict.status().ToString());
    return;
  }
  bool follow = true;
  if (verdict->kind == ContentVerdict::Kind::kExact) {
    page->record.duplicate_of = verdict->first.id;
    follow = config_.content.duplicate_links == "follow";
    // The payload is archived once: this capture is a revisit of the first copy's response
    // (WARC 1.1 §6.7.2, identical-payload-digest), when that one was archived.
    std::optional<WarcRecordRef> first = DecodeFirstCopy(verdict->first);
    if (warc_ && first) {
      page->archive = PageArchive::kDuplicateRevisit;
      page->first_copy = std::move(*first);
    }
  } else if (verdict->kind == ContentVerdict::Kind::kNear) {
    page->record.near_duplicate_of = verdict->first.id;
    page->record.distance = verdict->distance;
    follow = config_.content.near_duplicate_links == "follow";
  }
  if (!follow) page->links.clear();
}

void Crawler::LearnFromPage(const Lease& lease, const FetchResult& r, ProcessedPage* page) {
  if (dust_ == nullptr || !page->answered || r.status == 0) return;
  // A body compared by the content-seen test, or an answer that is no page: a form or an article
  // that says noindex, an error (RFC 9110 §15.5; not a rate limit or a timeout, which say nothing
  // of the URL).
  const bool error = r.status >= 400 && r.status < 500 && r.status != 408 && r.status != 429;
  const bool barren = error || page->record.noindex;
  const std::optional<uint64_t> digest = DigestFromWarcPayloadDigest(page->digest);
  if (!digest && !barren) return;
  PageFingerprint fingerprint;
  fingerprint.digest = digest.value_or(0);
  if (page->simhash) {
    fingerprint.simhash = *page->simhash;
    fingerprint.has_simhash = true;
  }
  const std::string& first = !page->record.duplicate_of.empty() ? page->record.duplicate_of
                                                                : page->record.near_duplicate_of;
  page->record.dust_check = dust_->Observe(lease.url, fingerprint, barren, first);
}

void Crawler::ExchangeRules() {
  Status status = rule_exchange_->Exchange(dust_.get());
  if (!status.ok()) {
    // Rules are an economy, not a result: the crawl goes on with its own, and tries again.
    log_.Info("sharing URL rules through " + rule_exchange_->key() + ": " + status.ToString());
    return;
  }
  // Rules another crawl retired: their URLs suppressed here are queued again.
  std::shared_lock<std::shared_mutex> gate(state_->gate());
  QueueRequeued();
}

void Crawler::QueueRequeued() {
  if (dust_ == nullptr) return;
  for (SuppressedUrl& url : dust_->TakeRequeue()) {
    Result<CanonicalUrl> canonical = fetch_form_->Canonicalize(url.url);
    if (!canonical.ok()) continue;  // it was canonical when it was suppressed
    std::vector<CanonicalUrl> one;
    one.push_back(std::move(*canonical));
    // One the seen stage had admitted goes back to the frontier; the others through the seen
    // stage, under their own keys now.
    Status status = url.queued ? router_->Route(one, url.depth, url.parent)
                               : PushNew(&one, url.depth, url.parent).status();
    if (!status.ok()) return Fail(status);
  }
  RecordRejections();
}

void Crawler::RecordSuppressed(const std::string& rule_id, const std::string& url, uint32_t depth,
                               std::string_view parent) {
  // The URL its rule admitted once (its key's page), linked again: a URL seen, not a copy.
  if (!dust_->Suppressed({rule_id, url, depth, std::string(parent)})) return;
  Rejection rejection;
  rejection.url = url;
  rejection.depth = depth;
  rejection.reason = RejectReason::kDust;
  rejection.rule = rule_id;
  stats_->RecordRejection(RejectReasonName(RejectReason::kDust));
  Status status = rejected_->Append(rejection);
  if (!status.ok()) Fail(status);
}

std::vector<std::pair<std::string, std::string>> Crawler::ApplyDust(LinkBatch* batch) {
  std::vector<std::pair<std::string, std::string>> rewritten;  // (URL, rule id)
  std::vector<LinkDecision> decisions;  // the URLs not kept as they are, in order
  dust_->Decide(batch->urls, &decisions);
  batch->dust_keys.clear();
  if (decisions.empty()) return rewritten;
  batch->dust_keys.resize(batch->urls.size());
  size_t kept = 0;
  auto decision = decisions.begin();
  for (size_t i = 0; i < batch->urls.size(); ++i) {
    const bool decided = decision != decisions.end() && decision->index == i;
    if (decided && decision->kind == LinkDecision::Kind::kSkip) {
      RecordSuppressed(decision->rule_id, batch->urls[i].key(), batch->depth, batch->parent);
      ++decision;
      continue;
    }
    if (decided && decision->kind == LinkDecision::Kind::kRewrite) {
      batch->dust_keys[kept] = std::move(decision->rule_key);
      rewritten.emplace_back(batch->urls[i].key(), std::move(decision->rule_id));
    }
    if (decided && decision->kind == LinkDecision::Kind::kCheck) {
      rewritten.emplace_back(batch->urls[i].key(), "");  // a check: its own key
      // Fetched soon, not behind the whole frontier (a cluster node routes it: no hurry there).
      frontier_->Expedite(batch->urls[i].key());
    }
    if (decided) ++decision;
    if (kept != i) batch->urls[kept] = std::move(batch->urls[i]);
    ++kept;
  }
  batch->urls.resize(kept);
  batch->dust_keys.resize(kept);
  return rewritten;
}

Crawler::QueuedLinks Crawler::QueueLinks(const std::vector<std::string>& absolute_urls,
                                         uint32_t depth, const std::string& parent) {
  std::vector<CanonicalUrl> urls;  // parsed once here, in fetch form; they travel parsed
  urls.reserve(absolute_urls.size());
  for (const std::string& url : absolute_urls) {
    Result<CanonicalUrl> canonical = fetch_form_->Canonicalize(url);
    if (!canonical.ok()) {
      scope_->Record(ScopeReason::kInvalidUrl);
      continue;
    }
    if (!scope_->Check(*canonical, static_cast<int>(depth)).accept()) continue;
    urls.push_back(std::move(*canonical));
  }
  const auto found = static_cast<int>(urls.size());
  Result<Admitted> admitted = PushNew(&urls, depth, parent);
  if (!admitted.ok()) {
    Fail(admitted.status());
    return {found, 0, true};
  }
  return {found, admitted->fresh, admitted->taken};
}

void Crawler::LogDecision(const Lease& lease, const FetchResult& r, const DoneDecision& decision) {
  const bool robots = lease.kind == Lease::Kind::kRobots;
  if (log_.enabled(LogLevel::kDebug)) {
    log_.Debug(std::string(robots ? "robots " : "fetch ") + lease.url + ": " +
               (r.ok() ? "HTTP " + std::to_string(r.status) : r.error.message()) + " in " +
               FormatDuration(r.total_time));
  }
  if (decision.action == DoneDecision::Action::kNone || !log_.enabled(LogLevel::kInfo)) return;
  std::string failure = r.ok() ? "HTTP " + std::to_string(r.status) : r.error.message();
  if (r.ok() && !r.retry_after.empty()) failure += " (Retry-After: " + r.retry_after + ")";
  log_.Info(DescribeDecision(lease.url, robots, failure, decision));
}

void Crawler::RecordRejections() {
  Status status = AppendRejections(frontier_->DrainRejections());
  if (!status.ok()) Fail(status);
  // A spill-file error loses no URL but may stop a key: the crawl fails rather than ending as if
  // it were done (its final checkpoint still records every pending URL).
  if (Status storage = frontier_->StorageError(); !storage.ok()) Fail(storage);
}

Status Crawler::AppendRejections(const std::vector<Rejection>& rejections) {
  Status first_error;
  for (const Rejection& rejection : rejections) {
    if (rejection.sitemap) {
      // A sitemap the frontier rejected (robots.txt disallows it, given up...): done, counted
      // with the sitemaps, not the pages (docs/features/sitemaps.md, "Sitemaps").
      stats_->RecordSitemap(rejection.reason == RejectReason::kRobotsDisallowed ? "disallowed"
                                                                                : "rejected");
      sitemaps_->Done(rejection.url, 0, "", 0,
                      std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count());
    } else {
      stats_->RecordRejection(RejectReasonName(rejection.reason));
    }
    // Skipped at its turn by a learned URL rule (DustLearner::SkipFetched): queued again, without
    // the seen stage, if the rule is retired.
    if (rejection.reason == RejectReason::kDust && dust_) {
      dust_->Suppressed({rejection.rule, rejection.url, rejection.depth, "", true});
    }
    // A re-fetch the frontier rejected keeps its record as it was, no longer queued.
    records_->Unqueue(rejection.url);
    Status status = rejected_->Append(rejection);
    if (first_error.ok()) first_error = status;
    // Written: its work item can be released (with the next checkpoint).
    if (status.ok() && rejection.sitemap) {
      work_->SitemapDone(rejection.url);
    } else if (status.ok()) {
      work_->Recorded(rejection.url, nullptr);
    }
  }
  return first_error;
}

Result<OutputMarks> Crawler::SyncOutputs() {
  // An output this run does not write keeps the mark it had: its file is untouched.
  OutputMarks marks = recorded_marks_;
  if (pages_) {
    Result<OutputMark> mark = pages_->Sync();
    if (!mark.ok()) return mark.status();
    marks.pages = *mark;
  }
  Result<OutputMark> rejected = rejected_->Sync();
  if (!rejected.ok()) return rejected.status();
  marks.rejected = *rejected;
  if (warc_) {
    Result<OutputMark> mark = warc_->Sync();
    if (!mark.ok()) return mark.status();
    marks.warc = *mark;
  }
  return marks;
}

Status Crawler::Checkpoint() {
  Status saved = state_->Checkpoint(
      [&](SqliteDb& db) {
        // Invariant 2: the rejections the frontier made outside the gate come with its delta, so
        // the checkpoint that drops their URLs from the pending set also holds their rejected.jsonl
        // lines.
        std::vector<Rejection> rejections;
        URLSIEVE_RETURN_IF_ERROR(work_->Checkpoint(db, &rejections));
        URLSIEVE_RETURN_IF_ERROR(AppendRejections(rejections));
        Result<OutputMarks> marks = SyncOutputs();
        if (!marks.ok()) return marks.status();
        URLSIEVE_RETURN_IF_ERROR(WriteOutputMarks(db, *marks));
        // The fetch records of the pages these outputs hold (docs/features/recrawl.md, "Re-crawl").
        URLSIEVE_RETURN_IF_ERROR(records_->Checkpoint(db));
        URLSIEVE_RETURN_IF_ERROR(sitemaps_->Checkpoint(db));
        if (local_content_ != nullptr) URLSIEVE_RETURN_IF_ERROR(local_content_->Checkpoint(db));
        if (dust_) URLSIEVE_RETURN_IF_ERROR(dust_store_->Checkpoint(db, *dust_));
        // The gate is held exclusively: these counters describe exactly what the outputs hold.
        CrawlStatsSnapshot counters = stats_->Snapshot();
        counters.AddRejections(scope_->Rejections());
        return WriteCrawlCounters(db, counters);
      },
      [&] {
        work_->Committed();
        if (dust_store_) dust_store_->Committed();
      });
  if (saved.ok()) last_checkpoint_ = clock_.Now().time_since_epoch().count();  // metrics
  return saved;
}

}  // namespace urlsieve
