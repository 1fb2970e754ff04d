// Crawler: one crawl from a seed list — fetcher threads, link extraction, the seen stage, the
// frontier and the outputs wired together (docs/architecture.md, "Data flow").
//
// Each fetcher thread loops: WorkSource::Next() → fetch (libcurl) → PageProcessor (decode, links
// by gumbo, the page's record, its WARC records) → canonicalize → scope → Admission (the seen
// stage, one batch per page; the new URLs queued) → record (pages.jsonl, WARC, fetch record) →
// Frontier::Done → WorkSource::Recorded / AwaitDurable. Redirect targets are links of the page
// that redirected. A URL is parsed once (CanonicalUrl) and travels parsed from there on.
//
// What is fetched: the URL in its RFC 3986 normal form (UrlCanonicalizer with no opt-in rule, an
// equivalent spelling of the URL found in the page, always valid for libcurl); what is
// deduplicated: the canonical key under the configured rules. Without opt-in rules they coincide.
//
// Output directory: pages.jsonl, rejected.jsonl (URLs the seen stage accepted but the frontier
// rejected, with the reason; both JsonlWriter), crawl.warc.gz (--warc), stats.json, and state/,
// which CrawlState (crawl_state.h) owns: LOCK; state.db, holding the seen set's meta rows (and
// exact rows), the pending frontier, and the output sizes and checksums and the crawl's counters
// of the last checkpoint; the Bloom filter's bloom.snap and bloom.delta. state/spill.db is the
// frontier's scratch space (not state). stderr: a line per retry, back-off or host given up, and
// warnings (Logger, at config.output.log_level).
//
// Consistency (invariants 2 and 4): a fetcher holds the checkpoint gate (CrawlState::gate(),
// shared) from the moment it inserts a page's links into the seen stage until the page's Done(),
// so a checkpoint (CrawlState::Checkpoint, which takes it exclusively) never sees a URL in the
// seen set that is not yet pending, and the output files are synced inside the same checkpoint.
// --resume checks the outputs against the sizes and checksums of the last checkpoint (an error,
// touching nothing, if any was cut or changed), truncates them to those sizes, restores the
// counters of stats.json, and refetches only what was fetched after it or in flight.
//
// Re-crawl (docs/features/recrawl.md, "Re-crawl"): every crawl keeps a fetch record per URL fetched
// (FetchRecordStore, in state.db, written in each checkpoint: status, ETag, Last-Modified, payload
// digest, fetch time, interval, the WARC response record). --recrawl continues the crawl in out
// (like --resume) and queues the URLs whose interval has passed, bypassing the seen stage; each is
// fetched with If-None-Match / If-Modified-Since. A 304 is recorded with "not_modified" and a WARC
// revisit (server-not-modified); a 200 with the recorded payload digest with an
// identical-payload-digest revisit; neither has its links extracted again. A changed page is
// recorded in full and its links go through the seen stage (the new ones are crawled). The
// interval adapts (RecrawlSchedule). A stopped re-crawl continues with --resume.
//
// Deployments (docs/architecture.md, "One crawl, three deployments"): the loop holds no test of
// the deployment. Where a page's new links go is its Admission (admission.h: the crawl's own seen
// set, a seen set shared in Redis, or a cluster's routed set and inboxes); where leases come from
// and where a recorded page goes is its WorkSource (work_source.h: the local frontier, or a
// cluster node's inboxes); both come from the Deployment (deployment.h) that Create is given
// (deployment_factory.h makes it from the config). What one fetched page means is decided by the
// PageProcessor (page_processor.h), purely; the loop records it.
//
// Learned URL rules (docs/features/dust.md; url/dust_learner.h): each fetched page is evidence
// (LearnFromPage, after the content-seen test); PushNew seen-tests a link an active rule covers
// under its rule key (a page the crawl has: rejected.jsonl "dust"), and the frontier skips a queued
// URL at its turn when its page was fetched under another spelling (LeaseFilter). Rules are
// checkpointed in state.db (DustRuleStore) and, on a shared seen set, exchanged through Redis
// (RuleExchange) from the monitor thread.
//
// Metrics (docs/features/metrics.md, "Metrics"; crawler_metrics.cc): with output.metrics_listen,
// Open binds the address and Run serves GET /metrics (MetricsServer) from MetricsNow() until the
// crawl ends, then the final figures (those of stats.json) for output.metrics_linger;
// out_dir/metrics.addr holds the bound address meanwhile.
//
// Thread-safety: Run() once, from one thread; RequestStop() from any thread (e.g. a signal
// watcher), any number of times.
#ifndef URLSIEVE_CRAWLER_CRAWL_CRAWLER_H_
#define URLSIEVE_CRAWLER_CRAWL_CRAWLER_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/encoding/text_encoding.h"
#include "base/logger.h"
#include "base/status.h"
#include "crawler/config/crawl_config.h"
#include "crawler/metrics/crawl_stats.h"
#include "crawler/metrics/metrics_text.h"
#include "crawler/state/crawl_checkpoint.h"
#include "crawler/state/fetch_record.h"
#include "crawler/state/recrawl_schedule.h"
#include "dedup/content/content_seen_set.h"
#include "dedup/content/local_content_seen_set.h"
#include "frontier/frontier.h"
#include "url/dust_learner.h"
#include "url/url_canonicalizer.h"

namespace urlsieve {

class Admission;
class CrawlState;
class DustRuleStore;
class RuleExchange;
class Deployment;
class CurlShare;
class Fetcher;
class Frontier;
class JsonlWriter;
class LinkExtractor;
class MetricsServer;
class PageProcessor;
struct ProcessedPage;
class Scope;
class SeenFilter;
class SitemapStore;
class SqliteDb;
struct SitemapParse;
struct SitemapRecord;
class UrlCanonicalizer;
class UrlRouter;
class WarcWriter;
class WorkSource;
struct Admitted;
struct DoneDecision;
struct FetchResult;
struct Lease;
struct LinkBatch;
struct Rejection;

// A sitemap's URLs (Crawler::ListSitemap).
struct SitemapListing {
  std::vector<std::string> children;                      // an index's sitemaps
  std::vector<CanonicalUrl> pages;                        // a urlset's URLs in scope, in fetch form
  std::vector<std::pair<std::string, int64_t>> lastmods;  // key, unix seconds
  uint64_t listed = 0;                                    // URLs the urlset listed
  uint64_t rejected = 0;                                  // of those, invalid or out of scope
};

struct CrawlSummary {
  CrawlStatsSnapshot stats;
  bool stopped = false;  // RequestStop() ended it before the frontier ran dry (or, for a node of
                         // a cluster, before the cluster's crawl was over)
  uint64_t pending = 0;  // URLs left in the frontier (a stopped crawl resumes them)
};

class Crawler {
 public:
  // Validates the config, opens (or, with crawl.resume, reopens) the output directory and reads
  // the seeds. Errors: InvalidArgument (bad config, no valid seed), FailedPrecondition (an existing
  // crawl without --resume or --recrawl, or --resume or --recrawl without one), Corruption /
  // IoError (state files).
  // `make_deployment` makes the deployment (MakeDeployment, deployment_factory.h: OpenCrawler);
  // its second argument is the crawl's notices, which outlive the deployment.
  using DeploymentMaker = std::function<std::unique_ptr<Deployment>(
      const CrawlConfig& config, std::vector<std::string>* notices)>;
  static Result<std::unique_ptr<Crawler>> Create(const CrawlConfig& config,
                                                 const DeploymentMaker& make_deployment);
  ~Crawler();
  Crawler(const Crawler&) = delete;
  Crawler& operator=(const Crawler&) = delete;

  // Crawls until the frontier is empty, max_pages is reached or RequestStop(); then writes a final
  // checkpoint and stats.json. A non-OK Status means the state could not be saved.
  Result<CrawlSummary> Run();
  void RequestStop();

  // A node of a cluster: its id; "" otherwise.
  const std::string& node_id() const;

  // Notes for the user gathered while opening (seed errors, stored parameters in effect...).
  const std::vector<std::string>& notices() const { return notices_; }

 private:
  explicit Crawler(const CrawlConfig& config);
  // Open's steps, in order. CheckOutDir: whether the crawl continues one in out_dir (--resume,
  // --recrawl), or why it cannot start there. OpenState: the state (the seen set) and the fetch
  // form. OpenFrontier: the frontier, the re-crawl schedule, the fetch records and sitemaps.
  // Restore: what the last checkpoint recorded. OpenPageParts: scope, link extractor, page
  // processor, the curl share. OpenOutputs: checked against the checkpoint, then opened.
  // BuildDeployment: the seams (Admission, WorkSource).
  struct Restored {
    std::optional<CrawlStatsSnapshot> counters;
    std::vector<FetchRecord> due;              // a re-crawl's due URLs
    std::vector<SitemapRecord> sitemap_roots;  // a re-crawl reads them again
  };
  Status Open(const DeploymentMaker& make_deployment);
  Result<bool> CheckOutDir() const;
  Status OpenState();
  Status OpenFrontier();
  Status Restore(Restored* restored);
  Status OpenPageParts(const std::vector<CanonicalUrl>& seeds);
  Status OpenOutputs();
  Status BuildDeployment(const std::vector<CanonicalUrl>& seeds);
  Status ReadSeeds(std::vector<CanonicalUrl>* seeds);  // parsed, in fetch form
  Status QueueSeeds(std::vector<CanonicalUrl> seeds);
  // A shared seen set: queues again the URLs it told this crawl "new" after the last committed
  // checkpoint (CrawlState::uncommitted_claims(): the claim log), before anything is fetched.
  Status QueueClaims();
  // A re-crawl (--recrawl): queues the due URLs (FetchRecordStore::TakeDue) for a re-fetch,
  // bypassing the seen stage (they are known), with their recorded depth and parent.
  Status QueueDue(const std::vector<FetchRecord>& due);
  void FetcherLoop();
  void HandleRobots(Fetcher& fetcher, const Lease& lease);
  // Writes a response the crawl fetched for its own use (robots.txt, a sitemap) to the WARC as
  // it came (a body cut at the cap says so); a write failure fails the crawl.
  void ArchiveAsFetched(const FetchResult& r, std::chrono::system_clock::time_point started);
  void HandlePage(Fetcher& fetcher, const Lease& lease);
  // The content-seen test of a page (docs/features/content-seen.md, "In the crawl"): fills its
  // record's duplicate_of / near_duplicate_of, archives an exact duplicate as a revisit of the
  // first copy, and drops the links the options do not follow. Before the page's links are
  // admitted; under the gate (shared) when the admission NeedsGate(), so that a checkpoint holds
  // the set's new copies exactly when it holds their pages' outputs.
  void TestContent(const Lease& lease, const FetchResult& r, ProcessedPage* page);
  Status OpenContentSet();
  // Learned URL rules (docs/features/dust.md; url/dust_learner.h). OpenDust: the learner, its
  // rules from the state and the --rules-file. LearnFromPage: a fetched page is evidence (after
  // TestContent); marks a check's record. QueueRequeued: the suppressed URLs of rules retired
  // meanwhile go through the seen stage again. Both require what QueueLinks requires.
  Status OpenDust();
  void LearnFromPage(const Lease& lease, const FetchResult& r, ProcessedPage* page);
  void QueueRequeued();
  // A crawl on a shared seen set: one round of rule_exchange_ (the monitor thread).
  void ExchangeRules();
  // Rewrites the batch's keys under the active rules (LinkBatch::dust_keys), takes out the URLs
  // a skip rule covers, and returns, per rewritten URL, its rule (the suppressed are the ones not
  // new after Admit), and per check its URL with "" (one not new after Admit is not fetched).
  // Records the skipped as suppressed.
  std::vector<std::pair<std::string, std::string>> ApplyDust(LinkBatch* batch);
  void RecordSuppressed(const std::string& rule_id, const std::string& url, uint32_t depth,
                        std::string_view parent);
  // A status that, answering a conditional request, may refuse its validators (HandlePage asks
  // once more without them).
  static bool RefusesValidators(int status);
  // Whether the URL's next fetch goes without validators (and forgets that it does).
  bool TakeUnconditional(const std::string& url);
  // Sitemaps (crawler_sitemap.cc; docs/features/sitemaps.md, "Sitemaps"). HandleSitemap: a sitemap
  // lease — fetch, parse, queue an index's children as sitemaps and a urlset's URLs as links.
  bool SitemapsEnabled() const;
  void HandleSitemap(Fetcher& fetcher, const Lease& lease);
  // What a sitemap lists: an index's children, or a urlset's URLs in scope (parsed in fetch form)
  // with their lastmods, and how many were listed and rejected (invalid or out of scope).
  SitemapListing ListSitemap(SitemapParse* parse);
  // Its counters in stats (`parse`: null when no sitemap was read).
  void CountSitemap(const SitemapParse* parse, const SitemapListing& listing, int fresh,
                    bool redirected, bool body_truncated);
  // Claims (at most once per crawl, within sitemaps.max_total and max_nesting) and queues sitemap
  // URLs named by `parent` at nesting level `nesting`. Requires the checkpoint gate (shared).
  void QueueSitemaps(const std::vector<std::string>& urls, uint32_t nesting,
                     const std::string& parent);
  // The Sitemap: lines of a robots.txt body. Requires the checkpoint gate (shared).
  void QueueRobotsSitemaps(std::string_view robots_body, const std::string& robots_url);
  // When the crawl opens: --sitemap, and a re-crawl's `roots` (SitemapStore::Load).
  Status QueueStartSitemaps(const std::vector<SitemapRecord>& roots);
  // Keys fetch-form URLs (under the configured rules) and admits them (Admission): the new ones
  // are queued, and only those left in *urls. Requires the checkpoint gate (shared) when the
  // admission NeedsGate(). A batch a shared seen set never answered is queued whole (some URLs may
  // be fetched twice, none is lost).
  Result<Admitted> PushNew(std::vector<CanonicalUrl>* urls, uint32_t depth,
                           const std::string& parent);
  // Canonicalizes, scopes and deduplicates the references found on one page, pushes the new ones.
  // Requires the checkpoint gate (shared).
  struct QueuedLinks {
    int found = 0;  // links in scope
    int fresh = 0;  // links new
    // False: the admission did not take the links (Admitted::taken); the page must not be
    // recorded.
    bool taken = true;
  };
  QueuedLinks QueueLinks(const std::vector<std::string>& absolute_urls, uint32_t depth,
                         const std::string& parent);
  // Drains the frontier's rejections into stats + rejected.jsonl; fails the crawl on a frontier
  // storage error.
  void RecordRejections();
  Status AppendRejections(const std::vector<Rejection>& rejections);
  Result<OutputMarks> SyncOutputs();  // requires the gate (exclusive)
  // Logs (info) what the frontier decided about a failed fetch: retry, give up, retire.
  void LogDecision(const Lease& lease, const FetchResult& r, const DoneDecision& decision);
  void Fail(const Status& status);

  void MonitorLoop();
  Status Checkpoint();

  // docs/features/metrics.md, "Metrics" (crawler_metrics.cc). BindMetrics: in Open, before anything
  // is created (a bad address or a port in use fails the crawl there). StartMetrics: serves and
  // writes out_dir/metrics.addr. FinalMetrics: the final snapshot (for stats.json).
  // StopMetrics(final), once stats.json is written: serves `final`, waits out
  // output.metrics_linger (unless a stop was requested), stops serving, removes metrics.addr.
  Status BindMetrics();
  Status StartMetrics();
  MetricsSnapshot FinalMetrics(const CrawlStatsSnapshot& final_stats);
  void StopMetrics(const MetricsSnapshot& final_metrics);
  // The crawl's figures now, from thread-safe snapshots only (any thread: the server's).
  MetricsSnapshot MetricsNow();

  const CrawlConfig config_;
  SystemClock clock_;
  std::vector<std::string> notices_;
  Logger log_;  // stderr at config.output.log_level

  std::unique_ptr<UrlCanonicalizer> fetch_form_;  // RFC 3986 normal form, no opt-in rules
  std::unique_ptr<CrawlState> state_;  // OUT/state: the seen set, the checkpoint gate and protocol
  SeenFilter* seen_ = nullptr;         // the state's seen set, by URL (state_->seen())
  std::unique_ptr<Frontier> frontier_;
  std::unique_ptr<UrlRouter> router_;  // seen stage → frontier
  std::unique_ptr<Scope> scope_;
  std::unique_ptr<LinkExtractor> extractor_;
  std::unique_ptr<PageProcessor> processor_;
  // config.crawl.default_encoding, looked up once (docs/features/encodings.md, "Character
  // encodings").
  const TextEncoding* default_encoding_ = nullptr;
  std::unique_ptr<CurlShare> share_;
  std::unique_ptr<JsonlWriter> pages_;
  std::unique_ptr<JsonlWriter> rejected_;
  std::unique_ptr<WarcWriter> warc_;
  std::unique_ptr<CrawlStats> stats_;
  // The fetch records (state.db, written in each checkpoint) and the re-crawl schedule.
  std::unique_ptr<FetchRecordStore> records_;
  std::unique_ptr<RecrawlSchedule> schedule_;
  std::unique_ptr<SitemapStore> sitemaps_;  // the sitemaps claimed, and lastmods (state.db)
  OutputMarks recorded_marks_;              // of the checkpoint resumed (zero for a fresh crawl)
  // URLs whose conditional request got a 4xx (RefusesValidators): their retry goes without the
  // validators. Not checkpointed: after a restart the retry is conditional again, and may land here
  // once more.
  std::mutex unconditional_mu_;
  std::unordered_set<std::string> unconditional_;  // guarded by unconditional_mu_

  std::atomic<bool> stop_requested_{false};
  std::mutex monitor_mu_;
  std::condition_variable monitor_cv_;
  bool fetchers_done_ = false;  // guarded by monitor_mu_
  std::mutex error_mu_;
  Status first_error_;  // guarded by error_mu_: a storage failure ends the crawl
  // The deployment and its seams (admission_, work_: deployment_'s, set once it is built).
  // Declared after what they use (state, frontier, router, scope, Fail()'s mutexes), so destroyed
  // before it.
  std::unique_ptr<Deployment> deployment_;
  Admission* admission_ = nullptr;
  WorkSource* work_ = nullptr;
  // The content-seen set (docs/features/content-seen.md, "In the crawl"): the deployment's shared
  // one, or the state's own (local_content_, in state.db, written with each checkpoint); null with
  // --no-content-seen. Declared after the state, whose database the local one reads.
  std::unique_ptr<ContentSeenSet> content_;
  LocalContentSeenSet* local_content_ = nullptr;
  // Learned URL rules: null with --dust off. The store writes them into each checkpoint.
  std::unique_ptr<DustLearner> dust_;
  std::unique_ptr<DustRuleStore> dust_store_;
  std::unique_ptr<RuleExchange> rule_exchange_;  // shared seen sets only; the monitor thread's
  // The frontier asks it before each page's first hand-out (DustLearner::SkipFetched).
  class DustLeaseFilter : public LeaseFilter {
   public:
    explicit DustLeaseFilter(DustLearner* learner) : learner_(learner) {}
    std::string Skip(std::string_view url) override { return learner_->SkipFetched(url); }

   private:
    DustLearner* learner_;
  };
  std::unique_ptr<DustLeaseFilter> lease_filter_;

  // Metrics: when this run's last checkpoint committed (its start before the first), in
  // clock_ ticks; the final snapshot, once the crawl has ended; the server, declared last so that
  // it stops before anything it reads is destroyed.
  std::atomic<Clock::Duration::rep> last_checkpoint_{0};
  std::mutex metrics_mu_;
  std::optional<MetricsSnapshot> final_metrics_;  // guarded by metrics_mu_
  std::unique_ptr<MetricsServer> metrics_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CRAWL_CRAWLER_H_
