// Deployment: what differs between the three ways urlsieve crawls (docs/architecture.md, "One
// crawl, three deployments") — a crawl with its own seen set, a crawl over a seen set shared in
// Redis, and a node of a crawl cluster — so that the crawl loop (crawler.h) holds no test of the
// deployment. A deployment builds the loop's two seams, Admission (admission.h: where new links
// go) and WorkSource (work_source.h: where leases come from and where finished pages go), and
// adds what the node around them needs: where the state's seen set comes from, whether seeds are
// optional, the progress line, what the end of the crawl does, and its lines in stats.json.
//
// Made by MakeDeployment (deployment_factory.h) from the config. The Crawler calls, in order:
// PrepareSeenSet, PrepareFrontier, RestorePending (a resumed crawl), PrepareScope, Build, then
// admission() / work() for the rest of the crawl, and Finish once the fetchers ended.
//
// Thread-safety: the Prepare*, Build, SeedsQueued and Finish calls come from the thread that
// opens and runs the crawl; Tick from the monitor thread; admission() and work() are thread-safe
// (their own headers say how).
#ifndef URLSIEVE_CRAWLER_CRAWL_DEPLOYMENT_H_
#define URLSIEVE_CRAWLER_CRAWL_DEPLOYMENT_H_

#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "base/status.h"
#include "crawler/crawl/rule_exchange.h"
#include "dedup/content/content_seen_set.h"
#include "dedup/content/local_content_seen_set.h"
#include "url/url_canonicalizer.h"

namespace urlsieve {

class Admission;
class CrawlState;
class FetchRecordStore;
class Frontier;
class Logger;
class Scope;
class SeenRetry;
class SeenSetSource;
class SqliteDb;
class UrlRouter;
class WorkSource;
struct CrawlConfig;
struct CrawlStateOptions;
struct CrawlStatsSnapshot;
struct FrontierOptions;
struct ProgressSample;
struct ScopeOptions;

// The crawl's parts a deployment's seams work on; the Crawler owns them, and they outlive it.
struct CrawlParts {
  const CrawlConfig* config = nullptr;
  CrawlState* state = nullptr;
  Frontier* frontier = nullptr;
  UrlRouter* router = nullptr;  // to the local frontier
  Scope* scope = nullptr;
  const UrlCanonicalizer* fetch_form = nullptr;
  FetchRecordStore* records = nullptr;  // the crawl's fetch records
  Logger* log = nullptr;
  std::function<Status()> checkpoint;       // the crawl's checkpoint
  std::function<void(const Status&)> fail;  // fails the crawl
  std::function<void()> record_rejections;  // the frontier's rejections to rejected.jsonl
};

// Retries of calls to the state's shared seen set (or a cluster's), saying so through parts.log.
std::unique_ptr<SeenRetry> SharedSeenSetRetry(const CrawlParts& parts);

// The content-seen set shared in Redis at `url` under `name` (a --seen-redis set's, a cluster's),
// with `options`' distance; its errors name the server.
Result<std::unique_ptr<ContentSeenSet>> OpenSharedContentSet(const std::string& url,
                                                             const std::string& name,
                                                             const ContentSeenOptions& options);

class Deployment {
 public:
  virtual ~Deployment() = default;

  // Where the state's seen set comes from (crawler/state/seen_set_source.h), for a state created
  // with `state`'s parameters; the deployment keeps it (a cluster node joins its cluster from
  // there, once the node id is settled). Errors: bad options for that kind of set.
  virtual Result<SeenSetSource*> PrepareSeenSet(const CrawlStateOptions& state) = 0;
  virtual void PrepareFrontier(FrontierOptions*) {}
  virtual void PrepareScope(ScopeOptions*) {}
  // Whether the crawl may start without seeds (a cluster node waits for work).
  virtual bool SeedsOptional() const { return false; }
  // A resumed crawl: reads back the pending work of the last checkpoint.
  virtual Status RestorePending(SqliteDb& db, Frontier* frontier) = 0;
  // Once the state, frontier and scope are open, before the seeds are queued: builds the seams.
  // `seeds`: the ones this crawl was given (parsed, in fetch form).
  virtual Status Build(const CrawlParts& parts, const std::vector<CanonicalUrl>& seeds) = 0;
  // After Build.
  virtual Admission& admission() = 0;
  virtual WorkSource& work() = 0;

  // The seeds were admitted (`any`: there was at least one).
  virtual Status SeedsQueued(bool) { return Status::Ok(); }
  // The content-seen set (docs/features/content-seen.md, "In the crawl"), after PrepareSeenSet:
  // a shared one (in Redis, beside the shared seen set), or null for the state's own.
  virtual Result<std::unique_ptr<ContentSeenSet>> OpenContentSet(const ContentSeenOptions&) {
    return std::unique_ptr<ContentSeenSet>();
  }
  // Where learned URL rules are shared (rule_exchange.h): beside a shared seen set, or null.
  virtual Result<std::unique_ptr<RuleExchange>> OpenRuleExchange() {
    return std::unique_ptr<RuleExchange>();
  }
  // A re-crawl (--recrawl): true when its due records are the state's (the Crawler takes and
  // queues them); false when the deployment finds them itself (a cluster's records travel with
  // their partitions, and its Build starts a round).
  virtual bool RecrawlsFromState() const { return true; }
  // Every monitor tick, with this crawl's counters (and its errors summed): may replace the
  // progress line's sample.
  virtual void Tick(const CrawlStatsSnapshot&, uint64_t /*errors*/, ProgressSample*) {}
  // After the final checkpoint; `finished`: the work is done (WorkSource::Finished). Errors that
  // must fail the crawl go to `fail`.
  virtual void Finish(const CrawlStatsSnapshot&, bool /*finished*/,
                      const std::function<void(const Status&)>& /*fail*/) {}
  // Its lines in stats.json.
  virtual void Describe(nlohmann::json*) const {}
  // A node of a cluster: its id; "" otherwise.
  virtual const std::string& node_id() const;
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CRAWL_DEPLOYMENT_H_
