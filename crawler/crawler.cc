#include "crawler/crawler.h"

#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>
#include <unordered_set>

#include "base/duration.h"
#include "crawler/claim_record.h"
#include "crawler/cluster_coordinator.h"
#include "crawler/cluster_feed.h"
#include "crawler/cluster_seeds.h"
#include "crawler/cluster_url_router.h"
#include "crawler/component_options.h"
#include "crawler/crawl_checkpoint.h"
#include "crawler/crawl_state.h"
#include "crawler/curl_share.h"
#include "crawler/decision_message.h"
#include "crawler/fetch_record.h"
#include "crawler/fetcher.h"
#include "crawler/jsonl_writer.h"
#include "crawler/link_extractor.h"
#include "crawler/metrics_server.h"
#include "crawler/page_decoder.h"
#include "crawler/progress_reporter.h"
#include "crawler/recrawl_schedule.h"
#include "crawler/scope.h"
#include "crawler/seen_retry.h"
#include "crawler/sitemap_store.h"
#include "crawler/url_router.h"
#include "crawler/warc_writer.h"
#include "dedup/redis_address.h"
#include "dedup/redis_seen_set.h"
#include "dedup/seen_filter.h"
#include "dedup/seen_set.h"
#include "dedup/url_canonicalizer.h"
#include "frontier/frontier.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;

constexpr auto kMonitorTick = std::chrono::milliseconds(250);

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

bool IsRedirect(long status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

// A permanent transfer failure (a certificate refused) is not retried: its origin is given up.
std::optional<RejectReason> PermanentFailure(const FetchResult& r) {
  if (!r.ok() && IsPermanent(r.error_kind)) return RejectReason::kTlsError;
  return std::nullopt;
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

Result<std::unique_ptr<Crawler>> Crawler::Create(const CrawlConfig& config) {
  URLSIEVE_RETURN_IF_ERROR(config.Validate());
  std::unique_ptr<Crawler> crawler(new Crawler(config));
  URLSIEVE_RETURN_IF_ERROR(crawler->Open());
  return crawler;
}

Status Crawler::Open() {
  URLSIEVE_RETURN_IF_ERROR(BindMetrics());  // docs/design.md, "Metrics": before anything is made
  const fs::path out(config_.crawl.out_dir);
  const fs::path state = out / "state";
  Result<bool> there = CrawlIsThere(out, state);
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
  // CrawlState creates the directories (after a shared seen set's server has answered, so that
  // a wrong address or password leaves nothing behind).
  CrawlStateOptions state_options;
  state_options.dir = state.string();
  state_options.capacity = config_.crawl.expected_urls;
  state_options.fp_rate = config_.crawl.false_positive_rate;
  state_options.exact = config_.crawl.exact;
  state_options.deletable = config_.crawl.deletable;
  state_options.canonicalize = config_.canonicalize;
  state_options.rebuild_bloom = config_.crawl.rebuild_bloom;
  state_options.seen_redis_url = config_.crawl.seen_redis;
  state_options.seen_redis_name = config_.crawl.seen_redis_name;
  if (config_.cluster_mode()) {
    state_options.cluster_url = config_.cluster.url;
    state_options.cluster_name = config_.cluster.name;
    state_options.node_id = config_.cluster.node_id;
    state_options.partitions = config_.cluster.partitions;
    state_options.join_cluster =
        [this](const std::string& node_id) -> Result<CrawlStateOptions::ClusterJoined> {
      Result<std::pair<std::string, uint32_t>> joined = JoinCluster(node_id);
      if (!joined.ok()) return joined.status();
      return CrawlStateOptions::ClusterJoined{joined->first, joined->second};
    };
  }
  Result<std::unique_ptr<CrawlState>> opened = CrawlState::Open(state_options);
  if (!opened.ok()) return opened.status();
  state_ = std::move(*opened);
  seen_ = &state_->seen();
  if (!state_->shared_seen_set().empty()) {
    SeenRetryOptions retry;
    retry.what = state_->shared_seen_set();
    seen_retry_ = std::make_unique<SeenRetry>(
        retry, [this](const std::string& message) { log_.Info(message); });
  }
  // Without opt-in rules the fetch form is the key, so it keeps the state's key version.
  CanonicalizeOptions fetch_form;
  fetch_form.max_length = config_.canonicalize.max_length;
  fetch_form.key_version = seen_->options().canonicalize.key_version;
  fetch_form_ = std::make_unique<UrlCanonicalizer>(fetch_form);
  for (const SeenNotice& notice : state_->notices()) notices_.push_back(notice.text);

  FrontierOptions frontier_options = FrontierOptionsFrom(config_, (state / "spill.db").string());
  // A cluster node's inboxes hold its pending URLs until they are recorded: its frontier's
  // pending set is not checkpointed.
  if (coordinator_) frontier_options.checkpoints = false;
  Result<std::unique_ptr<Frontier>> frontier = Frontier::Open(frontier_options, &clock_);
  if (!frontier.ok()) return frontier.status();
  frontier_ = std::move(*frontier);
  router_ = std::make_unique<LocalUrlRouter>(frontier_.get());
  if (coordinator_) {
    cluster_router_ =
        std::make_unique<ClusterUrlRouter>(state_->routed_seen_set(), frontier_options,
                                           coordinator_->partitions(), coordinator_.get());
  }

  // A fresh crawl starts its outputs empty; a resumed one checks every output against its
  // checkpoint before cutting any back to it, and continues the counters it recorded.
  std::optional<CrawlStatsSnapshot> counters;
  RecrawlScheduleOptions schedule_options;
  schedule_options.revisit_after = config_.recrawl.revisit_after;
  schedule_options.min_interval = config_.recrawl.min_interval;
  schedule_options.max_interval = config_.recrawl.max_interval;
  schedule_options.unchanged_factor = config_.recrawl.unchanged_factor;
  schedule_options.changed_factor = config_.recrawl.changed_factor;
  schedule_ = std::make_unique<RecrawlSchedule>(schedule_options);
  records_ = std::make_unique<FetchRecordStore>();
  sitemaps_ = std::make_unique<SitemapStore>();
  std::vector<FetchRecord> due;
  std::vector<SitemapRecord> sitemap_roots;  // a re-crawl reads them again
  if (continuing) {
    Status restored = state_->Restore([&](SqliteDb& db) -> Status {
      if (!coordinator_) URLSIEVE_RETURN_IF_ERROR(frontier_->Restore(db));
      Result<CrawlCheckpointRecord> record = ReadCrawlCheckpoint(db, &notices_);
      if (!record.ok()) return record.status();
      recorded_marks_ = record->marks;
      counters = std::move(record->counters);
      // The re-fetches a stopped re-crawl left pending (the frontier holds them again).
      URLSIEVE_RETURN_IF_ERROR(records_->LoadQueued(db));
      URLSIEVE_RETURN_IF_ERROR(sitemaps_->Load(db, config_.crawl.recrawl, &sitemap_roots));
      if (config_.crawl.recrawl) {
        const int64_t now =
            std::chrono::duration_cast<std::chrono::seconds>(clock_.WallNow().time_since_epoch())
                .count();
        Result<std::vector<FetchRecord>> taken =
            records_->TakeDue(db, now, config_.recrawl.revisit_after.count());
        if (!taken.ok()) return taken.status();
        due = std::move(*taken);
      }
      return Status::Ok();
    });
    if (!restored.ok()) return restored;
  }
  const OutputFiles files{config_.output.jsonl ? (out / "pages.jsonl").string() : "",
                          (out / "rejected.jsonl").string(),
                          config_.output.warc ? (out / "crawl.warc.gz").string() : ""};
  Result<VerifiedOutputs> outputs = VerifyOutputs(files, recorded_marks_, &notices_);
  if (!outputs.ok()) return outputs.status();

  std::vector<CanonicalUrl> seeds;
  URLSIEVE_RETURN_IF_ERROR(ReadSeeds(&seeds));
  ScopeOptions scope_options = ScopeOptions::FromConfig(config_);
  scope_options.seeds_may_come_later = coordinator_ != nullptr;  // learnt from the inboxes
  Result<std::unique_ptr<Scope>> scope = Scope::Create(scope_options, seeds);
  if (!scope.ok()) return scope.status();
  scope_ = std::move(*scope);

  LinkExtractor::Options link_options;
  link_options.obey_nofollow = config_.crawl.obey_nofollow;
  extractor_ = std::make_unique<LinkExtractor>(fetch_form_.get(), link_options);
  default_encoding_ = EncodingForLabel(config_.crawl.default_encoding);
  if (default_encoding_ == nullptr) {
    return Status::InvalidArgument("crawl.default_encoding: \"" + config_.crawl.default_encoding +
                                   "\" is not an encoding label (--default-encoding)");
  }

  Result<std::unique_ptr<CurlShare>> share = CurlShare::Create();
  if (!share.ok()) return share.status();
  share_ = std::move(*share);

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
  stats_ = std::make_unique<CrawlStats>(&clock_);
  if (counters) stats_->Resume(*counters);
  URLSIEVE_RETURN_IF_ERROR(QueueClaims());
  if (config_.crawl.recrawl) URLSIEVE_RETURN_IF_ERROR(QueueDue(due));
  if (coordinator_ && config_.scope.mode != ScopeMode::kAny) {
    // The scope of every node knows every node's seeds (ClusterSeeds): added before they are
    // queued, read before anything is fetched.
    Result<RedisAddress> address = RedisAddress::Parse(config_.cluster.url);
    if (!address.ok()) return address.status();
    cluster_seeds_ = std::make_unique<ClusterSeeds>(*address, config_.cluster.name, scope_.get(),
                                                    fetch_form_.get());
    URLSIEVE_RETURN_IF_ERROR(seen_retry_->Run([&] { return cluster_seeds_->Add(seeds); }));
    URLSIEVE_RETURN_IF_ERROR(seen_retry_->Run([&] { return cluster_seeds_->Refresh(); }));
  }
  if (coordinator_) {
    ClusterFeed::Parts parts;
    parts.coordinator = coordinator_.get();
    parts.frontier = frontier_.get();
    parts.fetch_form = fetch_form_.get();
    parts.scope = scope_.get();
    parts.router = cluster_router_.get();
    parts.seeds = cluster_seeds_.get();
    parts.log = &log_;
    parts.checkpoint = [this] { return Checkpoint(); };
    parts.fail = [this](const Status& status) { Fail(status); };
    ClusterFeedOptions feed_options;
    feed_options.low_water = std::max<size_t>(256, 32 * static_cast<size_t>(config_.crawl.threads));
    feed_ = std::make_unique<ClusterFeed>(std::move(parts), feed_options);
  }
  URLSIEVE_RETURN_IF_ERROR(QueueSeeds(std::move(seeds)));
  return QueueStartSitemaps(sitemap_roots);
}

const std::string& Crawler::node_id() const {
  static const std::string kNone;
  return coordinator_ ? coordinator_->node_id() : kNone;
}

Result<std::pair<std::string, uint32_t>> Crawler::JoinCluster(const std::string& node_id) {
  Result<RedisAddress> address = RedisAddress::Parse(config_.cluster.url);
  if (!address.ok()) return address.status();
  ClusterOptions options;
  options.address = *address;
  options.name = config_.cluster.name;
  options.node_id = node_id;
  options.partitions = config_.cluster.partitions;
  options.lease_ttl = std::chrono::seconds(config_.cluster.lease_ttl_s);
  options.handover_delay = std::chrono::milliseconds(config_.politeness.delay_ms);
  options.settings = ClusterSettings();
  Result<std::unique_ptr<ClusterCoordinator>> joined = ClusterCoordinator::Join(options, &notices_);
  if (!joined.ok()) return joined.status();
  coordinator_ = std::move(*joined);
  return std::make_pair(coordinator_->identity(), coordinator_->partitions());
}

std::string Crawler::ClusterSettings() const {
  // What makes the nodes' seen keys, partitions and scope agree; not threads, budgets or out_dir.
  nlohmann::json canonicalize = nlohmann::json::object();
  for (const CanonicalizeRule& rule : kCanonicalizeRules) {
    canonicalize[std::string(rule.name)] = config_.canonicalize.*rule.member;
  }
  canonicalize["max_length"] = config_.canonicalize.max_length;
  nlohmann::json settings;
  settings["canonicalize"] = std::move(canonicalize);
  settings["politeness_key"] = "origin";
  settings["scope"] = {{"mode", std::string(ScopeModeName(config_.scope.mode))},
                       {"allow", config_.scope.allow},
                       {"deny", config_.scope.deny},
                       {"max_url_length", config_.scope.max_url_length},
                       {"max_repeated_segments", config_.scope.max_repeated_segments},
                       {"max_depth", config_.crawl.max_depth}};
  settings["seen_set"] = {{"capacity", config_.crawl.expected_urls},
                          {"false_positive_rate", config_.crawl.false_positive_rate},
                          {"exact", config_.crawl.exact}};
  settings["partitions"] = config_.cluster.partitions;
  return settings.dump();
}

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
      if (!record) {
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
    // docs/design.md, "Re-crawl": a known URL is not asked of the seen stage again; it still
    // passes the scope (the re-crawl's own) and the frontier (robots.txt, politeness, budgets).
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
  if (path.empty() && coordinator_) return Status::Ok();  // a node that waits for work
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
    Result<int> fresh = PushNew(&seeds, 0, "");
    RecordRejections();
    if (!fresh.ok()) return fresh.status();
  }
  // In a cluster the seeds are in their inboxes now; the crawl may end once they are done.
  if (coordinator_ && any) {
    return seen_retry_->Run([this] { return coordinator_->MarkSeeded(); });
  }
  return Status::Ok();
}

Result<int> Crawler::PushNewRouted(std::vector<CanonicalUrl>* urls,
                                   std::span<const std::string_view> keys,
                                   std::span<const KeyHash> hashes, uint32_t depth,
                                   const std::string& parent) {
  const size_t n = urls->size();
  std::unique_ptr<bool[]> is_new(new bool[n]());
  // The test-and-set and the append to the inboxes are one atomic step, retried unchanged while
  // Redis does not answer: a batch never answered (a stop) was applied whole or not at all, and
  // what it applied is in the inboxes, so nothing needs routing "whole" as below.
  Status inserted = seen_retry_->Run([&] {
    return cluster_router_->InsertRouted(*urls, keys, hashes, depth, parent,
                                         std::span<bool>(is_new.get(), n));
  });
  if (!inserted.ok()) return inserted;
  size_t fresh = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!is_new[i]) continue;
    if (fresh != i) (*urls)[fresh] = std::move((*urls)[i]);
    ++fresh;
  }
  urls->resize(fresh);
  return static_cast<int>(fresh);
}

Result<int> Crawler::PushNew(std::vector<CanonicalUrl>* urls, uint32_t depth,
                             const std::string& parent) {
  // The seen stage's key: the fetch form itself, or under opt-in rules the key those rules make
  // of it (the one step that reads the URL again, and only when a rule is on).
  std::vector<std::string_view> keys;
  keys.reserve(urls->size());
  for (const CanonicalUrl& url : *urls) keys.push_back(url.key());
  std::vector<std::string> rule_keys;
  if (HasOptInRules(config_.canonicalize)) {
    rule_keys.resize(urls->size());
    for (size_t i = 0; i < urls->size(); ++i) {
      URLSIEVE_RETURN_IF_ERROR(seen_->canonicalizer().CanonicalizeTo(keys[i], &rule_keys[i]));
      keys[i] = rule_keys[i];
    }
  }
  const size_t n = keys.size();
  std::vector<KeyHash> hashes(n);
  for (size_t i = 0; i < n; ++i) hashes[i] = SeenSet::Hash(keys[i]);
  if (cluster_router_) {
    Result<int> fresh = PushNewRouted(urls, keys, hashes, depth, parent);
    if (fresh.ok()) stats_->RecordSeen(n, static_cast<uint64_t>(*fresh));
    return fresh;
  }
  // The claims (SeenSet::InsertHashedIfNewClaiming): what a resumed crawl needs to queue a URL
  // again that a shared set told it new after its last checkpoint. A local set ignores them.
  std::vector<std::string> claims;
  std::vector<std::string_view> payloads(n);
  if (seen_retry_) {
    claims.reserve(n);
    for (size_t i = 0; i < n; ++i) claims.push_back(EncodeClaim((*urls)[i].key(), depth, parent));
    for (size_t i = 0; i < n; ++i) payloads[i] = claims[i];
  }
  std::unique_ptr<bool[]> is_new(new bool[n]());
  SeenSet& set = seen_->seen_set();
  auto insert = [&] {
    return set.InsertHashedIfNewClaiming(keys, hashes, payloads, std::span<bool>(is_new.get(), n));
  };
  std::chrono::steady_clock::duration retried_for{};
  Status inserted = seen_retry_ ? seen_retry_->Run(insert, &retried_for) : insert();
  // Answered too late to be the lost first run's answers (SeenRetry: kSeenReplayWindow), "seen"
  // may be wrong: the batch is treated as unanswered.
  const bool too_late = inserted.ok() && retried_for > kSeenReplayWindow;
  if (!inserted.ok() || too_late) {
    if (!seen_retry_) return inserted;
    // docs/design.md, "The Redis seen set": the shared set may have applied part of a batch it
    // never answered, and those keys are seen now. Routing the whole batch loses none of them; a
    // URL already fetched may be fetched again. Each key is routed so once per crawl: the pages
    // that finish at a stop share links.
    std::lock_guard<std::mutex> lock(unanswered_mu_);
    size_t kept = 0;
    for (size_t i = 0; i < n; ++i) {
      if (!unanswered_keys_.emplace(keys[i]).second) continue;
      if (kept != i) (*urls)[kept] = std::move((*urls)[i]);
      ++kept;
    }
    urls->resize(kept);
    URLSIEVE_RETURN_IF_ERROR(router_->Route(*urls, depth, parent));
    const std::string links = std::to_string(kept) + " links of " +
                              (parent.empty() ? std::string("the seeds") : parent);
    if (too_late) {
      log_.Info(state_->shared_seen_set() + " answered after an outage longer than it replays " +
                "answers: queued the " + links + " as they are (some may be fetched twice)");
      return static_cast<int>(kept);
    }
    if (inserted.code() == StatusCode::kUnavailable && seen_retry_->stopped()) {
      log_.Info("stopping while " + state_->shared_seen_set() + " does not answer: queued the " +
                links + " without its answer (some may be fetched twice)");
      return static_cast<int>(kept);
    }
    return inserted;
  }
  size_t fresh = 0;
  for (size_t i = 0; i < urls->size(); ++i) {
    if (!is_new[i]) continue;
    if (fresh != i) (*urls)[fresh] = std::move((*urls)[i]);
    ++fresh;
  }
  urls->resize(fresh);
  stats_->RecordSeen(n, fresh);
  URLSIEVE_RETURN_IF_ERROR(router_->Route(*urls, depth, parent));
  return static_cast<int>(fresh);
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
    std::unique_lock<std::mutex> lock(monitor_mu_);
    while (!fetchers_done_) {
      monitor_cv_.wait_for(lock, kMonitorTick);
      if (fetchers_done_) break;
      lock.unlock();
      const FrontierStats f = frontier_->Stats();
      const CrawlStatsSnapshot s = stats_->Snapshot();
      uint64_t errors = 0;
      for (const auto& [kind, count] : s.errors) errors += count;
      if (coordinator_) {
        // The progress line shows the cluster's totals; this node's counters go to the others.
        coordinator_->Publish({s.pages, errors, s.links_new});
        const ClusterStatus totals = coordinator_->Totals();
        progress.Update({totals.pages, totals.pending, f.keys, totals.errors});
      } else {
        progress.Update(Progress(s, f.pending, f.keys, errors));
      }
      if (config_.crawl.checkpoint_interval_s > 0 && clock_.Now() >= next_checkpoint) {
        Status status = Checkpoint();
        if (!status.ok()) Fail(status);
        next_checkpoint = clock_.Now() + interval;
      }
      lock.lock();
    }
  });

  if (feed_) feed_->Start();
  std::vector<std::thread> fetchers;
  for (int i = 0; i < config_.crawl.threads; ++i) fetchers.emplace_back([this] { FetcherLoop(); });
  for (std::thread& t : fetchers) t.join();
  {
    std::lock_guard<std::mutex> lock(monitor_mu_);
    fetchers_done_ = true;
  }
  monitor_cv_.notify_all();
  monitor.join();

  RecordRejections();
  // A cluster node's last checkpoint is its feed's: the recorded entries are acknowledged after
  // it; then its partitions are handed back.
  Status saved = feed_ ? feed_->Close() : Checkpoint();
  const bool cluster_finished = feed_ && feed_->finished();
  if (coordinator_) {
    // The final counters go out with the leave (`urlsieve cluster status` sums them).
    const CrawlStatsSnapshot s = stats_->Snapshot();
    uint64_t errors = 0;
    for (const auto& [kind, count] : s.errors) errors += count;
    coordinator_->Publish({s.pages, errors, s.links_new});
    Status left = coordinator_->Leave(cluster_finished);
    if (!left.ok()) log_.Info("leaving " + coordinator_->what() + ": " + left.message());
    if (Status error = coordinator_->error(); !error.ok()) Fail(error);
  }
  CrawlSummary summary;
  summary.stats = stats_->Snapshot();
  summary.stats.AddRejections(scope_->Rejections());
  const FrontierStats f = frontier_->Stats();
  summary.pending = f.pending + f.in_flight;
  summary.stopped = coordinator_ ? !cluster_finished : stop_requested_.load();
  progress.Finish(Progress(summary.stats, summary.pending, f.keys, 0));
  nlohmann::json stats_json = summary.stats.ToJson();
  const MetricsSnapshot final_metrics = FinalMetrics(summary.stats);
  AddMetricsJson(final_metrics, &stats_json);
  stats_json["tls_verification"] = config_.fetch.verify_tls;
  if (coordinator_) {
    stats_json["node_id"] = coordinator_->node_id();
    Result<RedisAddress> address = RedisAddress::Parse(config_.cluster.url);
    stats_json["cluster"] = {{"name", config_.cluster.name},
                             {"server", address.ok() ? address->ToString() : ""}};
  }
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
  if (seen_retry_) seen_retry_->Stop();
  if (frontier_) frontier_->Stop();
  if (feed_) feed_->Stop();
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
  for (;;) {
    // A cluster node's frontier runs dry while its inboxes still have work: the fetcher waits for
    // the feed (ClusterFeed) instead of ending, until the cluster's crawl is over or a stop.
    const uint64_t generation = feed_ ? feed_->generation() : 0;
    if (!frontier_->Next(&lease)) {
      if (!feed_) break;
      RecordRejections();
      if (!feed_->WaitForWork(generation)) break;
      continue;
    }
    if (feed_ && !feed_->Admit(lease)) continue;
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
  if (r.ok() && IsRedirect(r.status)) {
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
  // docs/design.md, "Sitemaps": its Sitemap: lines, queued before Done so the crawl is not over.
  if (outcome.http_status >= 200 && outcome.http_status < 300 && target.empty()) {
    QueueRobotsSitemaps(r.body, lease.url);
  }
  LogDecision(lease, r, frontier_->Done(lease, outcome));
  RecordRejections();
}

void Crawler::ArchiveAsFetched(const FetchResult& r, std::chrono::system_clock::time_point started) {
  WarcExchange exchange{r.url,
                        r.primary_ip,
                        started,
                        r.request_headers,
                        r.response_headers,
                        r.body,
                        !r.content_encoding.empty(),
                        r.body_truncated,
                        {}};
  Status status = warc_->WriteExchange(exchange);
  if (!status.ok()) Fail(status);
}

void Crawler::HandlePage(Fetcher& fetcher, const Lease& lease) {
  PageRecord record;
  record.time = std::chrono::system_clock::now();
  // A re-fetch (docs/design.md, "Re-crawl") asks with the validators of its record.
  const std::optional<FetchRecord> known = records_->Find(lease.url);
  FetchResult r =
      known ? fetcher.Fetch(lease.url, ConditionalRequest{known->etag, known->last_modified})
            : fetcher.Fetch(lease.url);
  record.url = lease.url;
  record.status = static_cast<int>(r.status);
  record.content_type = r.content_type;
  record.bytes = r.body.size();
  record.depth = static_cast<int>(lease.depth);
  record.parent = lease.parent;
  record.fetch_ms = std::chrono::duration<double, std::milli>(r.total_time).count();
  if (!r.ok()) record.error = r.error.message();  // "<kind>: <detail>", built by the fetcher

  // The page's payload digest, computed once: the fetch record keeps it and the WARC writer
  // takes it (WarcExchange::payload_digest).
  const bool answered = r.ok() && r.status != 0;
  std::string digest;
  if (answered && r.status != 304) digest = WarcSha1Digest(r.body);
  std::optional<RefetchResult> refetch;
  if (known && answered) {
    refetch = RecrawlSchedule::Compare(*known, static_cast<int>(r.status), digest);
    record.refetch = std::string(RefetchResultName(*refetch));
  }
  const bool same_payload = refetch && *refetch != RefetchResult::kChanged;

  std::vector<std::string> targets;
  PageLinks links;
  if (same_payload) {
    // Not modified or unchanged: its links were queued when it was first fetched.
  } else if (r.ok() && IsRedirect(r.status) && !r.location.empty()) {
    // docs/design.md, "Data flow": a redirect target is a link of the page that redirected.
    Result<std::string> target = fetch_form_->Resolve(lease.url, r.location);
    if (target.ok()) {
      targets.push_back(std::move(*target));
    } else {
      record.error = "redirect: " + target.status().message();
    }
  } else if (r.ok() && r.status >= 200 && r.status < 300 && r.content_type_accepted &&
             !r.body_skipped) {
    // docs/design.md, "Character encodings": the page is read in its encoding (BOM, HTTP
    // charset, <meta> prescan, default), as UTF-8; its links' queries are encoded in it.
    DecodeLimits limits;  // at most 3 bytes per byte: a bound the decoder never reaches
    limits.max_output_bytes = 3 * r.body.size() + 16;
    Result<DecodedPage> page =
        DecodedPage::Decode(r.body, r.content_type, *default_encoding_, limits);
    if (page.ok()) {
      record.encoding = std::string(page->encoding().name);
      if (page->truncated()) record.error = "decode: the decoded page was cut at 3x its size";
      links = extractor_->Extract(page->html(), lease.url, &page->encoding());
    } else {
      record.error = "decode: " + page.status().message();  // read as UTF-8, as gumbo does
      links = extractor_->Extract(r.body, lease.url);
    }
    targets.reserve(links.links.size());
    for (ExtractedLink& link : links.links) targets.push_back(std::move(link.url));
    record.noindex = links.noindex;
    record.canonical = links.canonical;
  }

  FetchOutcome outcome;
  // A response that arrived counts, even if its body was cut at the cap; a transfer that failed
  // before one arrived (0) is retried by the frontier within its budget.
  const bool responded = r.ok() || r.error_kind == FetchErrorKind::kBodyTooLarge;
  outcome.http_status = responded ? static_cast<int>(r.status) : 0;
  outcome.fetch_time = r.total_time;
  outcome.retry_after = r.retry_after;
  outcome.permanent_failure = PermanentFailure(r);

  uint64_t ack_ticket = 0;
  // A cluster node routes the links before it takes the gate: its seen set and pending URLs are
  // in Redis, not in the local checkpoint, so the gate only keeps the outputs and counters
  // together and the acknowledging checkpoints (ClusterFeed) do not wait for Redis round trips.
  std::optional<QueuedLinks> queued;
  if (cluster_router_) queued = QueueLinks(targets, lease.depth + 1, lease.url);
  if (queued && !queued->routed) {
    // A cluster's seen set never answered before the stop: the page is not recorded and its
    // inbox entry not acknowledged, so the partition's next owner fetches it again.
    frontier_->Abandon(lease);
    log_.Info("stopping while " + state_->shared_seen_set() + " does not answer: " + lease.url +
              " is not recorded (its inbox entry stays pending)");
    return;
  }
  {
    std::shared_lock<std::shared_mutex> gate(state_->gate());
    if (!queued) queued = QueueLinks(targets, lease.depth + 1, lease.url);
    record.links_found = queued->found;
    record.links_new = queued->fresh;
    if (pages_) {
      Status status = pages_->Append(record);
      if (!status.ok()) Fail(status);
    }
    std::optional<WarcRecordRef> archived;  // the response record written for this page
    if (warc_ && r.status != 0) {
      const bool has_original = known && !known->warc.record_id.empty();
      // A 304 is a revisit (referring to the original when this WARC holds it); a 2xx with the
      // recorded payload is one when the original is archived, else it is archived in full.
      const bool not_modified = refetch == RefetchResult::kNotModified;
      const bool identical =
          refetch == RefetchResult::kUnchanged && r.status >= 200 && r.status < 300 && has_original;
      Status status;
      if (not_modified || identical) {
        WarcRevisit revisit;
        revisit.profile = not_modified ? WarcRevisit::Profile::kServerNotModified
                                       : WarcRevisit::Profile::kIdenticalPayloadDigest;
        revisit.target_uri = lease.url;
        revisit.ip_address = r.primary_ip;
        revisit.date = record.time;
        revisit.request = r.request_headers;
        revisit.response_head = r.response_headers;
        // The head's Content-Encoding no longer describes the stored (decoded) payload.
        revisit.payload_decoded = !r.content_encoding.empty();
        revisit.refers_to = has_original ? &known->warc : nullptr;
        status = warc_->WriteRevisit(revisit);
      } else {
        WarcExchange exchange{lease.url,
                              r.primary_ip,
                              record.time,
                              r.request_headers,
                              r.response_headers,
                              r.body,
                              !r.content_encoding.empty(),
                              false,
                              digest};
        WarcRecordRef ref;
        status = warc_->WriteExchange(exchange, &ref);
        if (status.ok()) archived = std::move(ref);
      }
      if (!status.ok()) Fail(status);
    }
    stats_->RecordPage(record);
    for (const auto& [reason, count] : links.DroppedCounts()) {
      stats_->RecordRejection(reason, count);
    }
    const DoneDecision decision = frontier_->Done(lease, outcome);
    LogDecision(lease, r, decision);
    // The URL's fetch record, with the page's outputs in the next checkpoint. A response to be
    // fetched again (a back-off) leaves it as it was; a failure that is given up is also rejected
    // (AppendRejections unqueues its record).
    if (decision.action != DoneDecision::Action::kRetry) {
      if (answered) {
        records_->Put(
            UpdatedRecord(known, lease, r, digest, refetch, record.time, std::move(archived)));
      } else if (known) {
        // Done without an answer to record (a body past the cap): the record stays as it was.
        records_->Unqueue(lease.url);
      }
    }
    // Recorded (unless it is to be fetched again): its inbox entry can be acknowledged.
    if (feed_ && decision.action != DoneDecision::Action::kRetry) {
      ack_ticket = feed_->Recorded(lease.url);
    }
    RecordRejections();
  }
  if (feed_) {
    // One recorded, unacknowledged page per fetcher at most (ClusterFeed, "Acknowledgement").
    feed_->WaitAcked(ack_ticket);
  } else if (config_.crawl.checkpoint_interval_s == 0) {
    Status status = Checkpoint();
    if (!status.ok()) Fail(status);
  }
}

FetchRecord Crawler::UpdatedRecord(const std::optional<FetchRecord>& known, const Lease& lease,
                                   const FetchResult& r, const std::string& digest,
                                   std::optional<RefetchResult> refetch,
                                   std::chrono::system_clock::time_point time,
                                   std::optional<WarcRecordRef> archived) const {
  FetchRecord next;
  if (known) next = *known;
  next.url = lease.url;
  next.depth = lease.depth;
  next.parent = lease.parent;
  next.fetch_time =
      std::chrono::duration_cast<std::chrono::seconds>(time.time_since_epoch()).count();
  // A 304 may repeat or update the validators (RFC 9110 §15.4.5); it keeps the rest.
  if (!refetch || *refetch != RefetchResult::kNotModified || !r.etag.empty()) next.etag = r.etag;
  if (!refetch || *refetch != RefetchResult::kNotModified || !r.last_modified.empty()) {
    next.last_modified = r.last_modified;
  }
  if (!refetch || *refetch != RefetchResult::kNotModified) {
    next.status = static_cast<int>(r.status);
    next.payload_digest = digest;
  }
  if (archived) {
    next.warc = std::move(*archived);
  } else if (!refetch || *refetch == RefetchResult::kChanged) {
    next.warc = WarcRecordRef{};  // a new payload not archived (no --warc): nothing to refer to
  }
  next.interval_s =
      refetch ? schedule_->NextInterval(known->interval_s, *refetch) : schedule_->InitialInterval();
  return next;
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
  Result<int> fresh = PushNew(&urls, depth, parent);
  if (!fresh.ok()) {
    if (cluster_router_ && fresh.status().code() == StatusCode::kUnavailable &&
        seen_retry_->stopped()) {
      return {found, 0, false};
    }
    Fail(fresh.status());
  }
  return {found, fresh.ok() ? *fresh : 0, true};
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
      // with the sitemaps, not the pages (docs/design.md, "Sitemaps").
      stats_->RecordSitemap(rejection.reason == RejectReason::kRobotsDisallowed ? "disallowed"
                                                                                : "rejected");
      sitemaps_->Done(rejection.url, 0, "", 0,
                      std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count());
    } else {
      stats_->RecordRejection(RejectReasonName(rejection.reason));
    }
    // A re-fetch the frontier rejected keeps its record as it was, no longer queued.
    records_->Unqueue(rejection.url);
    Status status = rejected_->Append(rejection);
    if (first_error.ok()) first_error = status;
    // Written: its inbox entry can be acknowledged (with the next checkpoint).
    if (feed_ && status.ok()) feed_->Recorded(rejection.url);
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
  Status saved = state_->Checkpoint([&](SqliteDb& db) {
    // Invariant 2: the rejections the frontier made outside the gate come with its delta, so the
    // checkpoint that drops their URLs from the pending set also holds their rejected.jsonl lines.
    std::vector<Rejection> rejections;
    if (coordinator_) {
      rejections = frontier_->DrainRejections();  // no pending set to drop them from
    } else {
      URLSIEVE_RETURN_IF_ERROR(frontier_->Checkpoint(db, &rejections));
    }
    URLSIEVE_RETURN_IF_ERROR(AppendRejections(rejections));
    Result<OutputMarks> marks = SyncOutputs();
    if (!marks.ok()) return marks.status();
    URLSIEVE_RETURN_IF_ERROR(WriteOutputMarks(db, *marks));
    // The fetch records of the pages these outputs hold (docs/design.md, "Re-crawl").
    URLSIEVE_RETURN_IF_ERROR(records_->Checkpoint(db));
    URLSIEVE_RETURN_IF_ERROR(sitemaps_->Checkpoint(db));
    // The gate is held exclusively: these counters describe exactly what the outputs hold.
    CrawlStatsSnapshot counters = stats_->Snapshot();
    counters.AddRejections(scope_->Rejections());
    return WriteCrawlCounters(db, counters);
  });
  if (saved.ok()) last_checkpoint_ = clock_.Now().time_since_epoch().count();  // metrics
  return saved;
}

}  // namespace urlsieve
