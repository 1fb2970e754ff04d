#include "crawler/cluster/cluster_deployment.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "base/duration.h"
#include "crawler/cluster/cluster_admission.h"
#include "crawler/cluster/cluster_coordinator.h"
#include "crawler/cluster/cluster_feed.h"
#include "crawler/cluster/cluster_keys.h"
#include "crawler/cluster/cluster_seeds.h"
#include "crawler/cluster/cluster_seen_set_source.h"
#include "crawler/cluster/cluster_url_router.h"
#include "crawler/cluster/cluster_work_source.h"
#include "crawler/crawl/scope.h"
#include "crawler/crawl/seen_retry.h"
#include "crawler/metrics/crawl_stats.h"
#include "crawler/metrics/progress_reporter.h"
#include "crawler/state/crawl_state.h"
#include "crawler/state/shared_seen_set_source.h"
#include "frontier/frontier.h"
#include "frontier/robots_rules.h"
#include "redis/redis_address.h"
#include "url/tracking_params.h"

namespace urlsieve {

ClusterDeployment::ClusterDeployment(const CrawlConfig& config, std::vector<std::string>* notices)
    : config_(config), notices_(notices) {}

ClusterDeployment::~ClusterDeployment() = default;

Result<SeenSetSource*> ClusterDeployment::PrepareSeenSet(const CrawlStateOptions& state) {
  Result<RedisSeenSetOptions> options = CrawlRedisSeenSetOptions(
      config_.cluster.url, config_.cluster.name, state, config_.crawl.rebuild_bloom,
      "a crawl cluster needs both the server (--cluster) and its name (--cluster-name)");
  if (!options.ok()) return options.status();
  options->accept_loss = config_.crawl.accept_loss;
  options->new_key_stream = {std::string(kClusterInboxSuffix), std::string(kClusterInboxGroup)};
  source_ = std::make_unique<ClusterSeenSetSource>(
      std::move(*options), config_.cluster.node_id,
      [this](const std::string& node_id) -> Result<ClusterSeenSetSource::Joined> {
        Result<std::pair<std::string, uint32_t>> joined = Join(node_id);
        if (!joined.ok()) return joined.status();
        return ClusterSeenSetSource::Joined{joined->first, joined->second};
      });
  return source_.get();
}

void ClusterDeployment::PrepareFrontier(FrontierOptions* options) {
  // The inboxes hold the node's pending URLs until they are recorded: its frontier's pending set
  // is not checkpointed.
  options->checkpoints = false;
  frontier_options_ = *options;
}

void ClusterDeployment::PrepareScope(ScopeOptions* options) {
  options->seeds_may_come_later = true;  // learnt from the inboxes
}

Result<std::pair<std::string, uint32_t>> ClusterDeployment::Join(const std::string& node_id) {
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
  Result<std::unique_ptr<ClusterCoordinator>> joined = ClusterCoordinator::Join(options, notices_);
  if (!joined.ok()) return joined.status();
  coordinator_ = std::move(*joined);
  return std::make_pair(coordinator_->identity(), coordinator_->partitions());
}

std::string ClusterDeployment::ClusterSettings() const {
  // What makes the nodes' seen keys, partitions, scope and manners agree (a site must not see one
  // node obey robots.txt or its delay and another not); not threads, budgets or out_dir.
  nlohmann::json canonicalize = nlohmann::json::object();
  for (const CanonicalizeRule& rule : kCanonicalizeRules) {
    const bool on = config_.canonicalize.*rule.member;
    if (rule.stored_version == 0) {
      canonicalize[std::string(rule.name)] = on;
    } else if (on) {  // a rule added since: only when on, so that an older cluster's stay equal
      canonicalize[std::string(rule.name)] = rule.stored_version;
    }
  }
  if (config_.canonicalize.strip_tracking_params &&
      !config_.canonicalize.tracking_exceptions.empty()) {
    canonicalize["tracking_exceptions"] =
        NormalizeTrackingExceptions(config_.canonicalize.tracking_exceptions);
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
  settings["politeness"] = {{"obey_robots", config_.politeness.obey_robots},
                            {"delay_ms", config_.politeness.delay_ms},
                            {"per_host_concurrency", config_.politeness.per_host_concurrency},
                            {"max_crawl_delay_ms", config_.politeness.max_crawl_delay_ms}};
  // The agent's robots.txt product token, not the whole User-Agent (nodes may tell themselves
  // apart there): the token selects the robots.txt groups every node must obey alike.
  settings["pages"] = {{"robots_agent", RobotsProductToken(config_.fetch.user_agent)},
                       {"default_encoding", config_.crawl.default_encoding},
                       {"obey_nofollow", config_.crawl.obey_nofollow}};
  // The re-crawl schedule every record's interval follows, whichever node fetched it (its
  // revisit_after is the round's: BeginRecrawl).
  settings["recrawl"] = {{"min_interval_s", config_.recrawl.min_interval.count()},
                         {"max_interval_s", config_.recrawl.max_interval.count()},
                         {"unchanged_factor", config_.recrawl.unchanged_factor},
                         {"changed_factor", config_.recrawl.changed_factor}};
  // Whether sitemaps are read, and how deep: a sitemap is read by its host's owner, for all.
  // (Their budget, max_total, is per node, as the page budgets.)
  settings["sitemaps"] = {{"read", config_.sitemaps.max_total > 0},
                          {"max_nesting", config_.sitemaps.max_nesting}};
  // The content-seen test: one set for the cluster, so one rule for what a duplicate is and
  // whether its links are followed.
  settings["content"] = {{"seen", config_.content.seen},
                         {"near", config_.content.near},
                         {"near_distance", config_.content.near_distance},
                         {"duplicate_links", config_.content.duplicate_links},
                         {"near_duplicate_links", config_.content.near_duplicate_links}};
  settings["partitions"] = config_.cluster.partitions;
  return settings.dump();
}

Status ClusterDeployment::Build(const CrawlParts& parts, const std::vector<CanonicalUrl>& seeds) {
  log_ = parts.log;
  retry_ = SharedSeenSetRetry(parts);
  router_ = std::make_unique<ClusterUrlRouter>(source_->routed(), frontier_options_,
                                               coordinator_->partitions(), coordinator_.get());
  if (config_.scope.mode != ScopeMode::kAny) {
    // The scope of every node knows every node's seeds: added before they are queued, read
    // before anything is fetched.
    Result<RedisAddress> address = RedisAddress::Parse(config_.cluster.url);
    if (!address.ok()) return address.status();
    seeds_ = std::make_unique<ClusterSeeds>(*address, config_.cluster.name, parts.scope,
                                            parts.fetch_form);
    URLSIEVE_RETURN_IF_ERROR(retry_->Run([&] { return seeds_->Add(seeds); }));
    URLSIEVE_RETURN_IF_ERROR(retry_->Run([&] { return seeds_->Refresh(); }));
  }
  ClusterFeed::Parts feed_parts;
  feed_parts.coordinator = coordinator_.get();
  feed_parts.frontier = parts.frontier;
  feed_parts.fetch_form = parts.fetch_form;
  feed_parts.scope = parts.scope;
  feed_parts.router = router_.get();
  feed_parts.seeds = seeds_.get();
  feed_parts.records = parts.records;
  feed_parts.log = parts.log;
  feed_parts.checkpoint = parts.checkpoint;
  feed_parts.fail = parts.fail;
  ClusterFeedOptions feed_options;
  feed_options.low_water = std::max<size_t>(256, 32 * static_cast<size_t>(config_.crawl.threads));
  feed_options.checkpoint_each_page = config_.crawl.checkpoint_interval_s == 0;
  feed_ = std::make_unique<ClusterFeed>(std::move(feed_parts), feed_options);
  Frontier* frontier = parts.frontier;
  const ClusterUrlRouter* router = router_.get();
  coordinator_->SetLearnedDelays([frontier, router] {
    std::map<uint32_t, std::chrono::milliseconds> longest;
    for (const auto& [key, delay] : frontier->LearnedDelays()) {
      std::chrono::milliseconds& at = longest[router->PartitionOfKey(key)];
      at = std::max(at, std::chrono::ceil<std::chrono::milliseconds>(delay));
    }
    return longest;
  });
  admission_ = std::make_unique<ClusterAdmission>(router_.get(), retry_.get());
  work_ = std::make_unique<ClusterWorkSource>(feed_.get(), parts.frontier, parts.record_rejections);
  if (config_.crawl.recrawl) {
    URLSIEVE_RETURN_IF_ERROR(
        retry_->Run([this] { return coordinator_->BeginRecrawl(config_.recrawl.revisit_after); }));
    notices_->push_back("re-crawl: started a round of " + coordinator_->what() +
                        ": each partition's owner queues its fetched URLs that are due "
                        "(--revisit-after " +
                        FormatDuration(config_.recrawl.revisit_after) + ")");
  }
  return Status::Ok();
}

Admission& ClusterDeployment::admission() { return *admission_; }
WorkSource& ClusterDeployment::work() { return *work_; }

Status ClusterDeployment::SeedsQueued(bool any) {
  // The seeds are in their inboxes now; the crawl may end once they are done.
  if (!any) return Status::Ok();
  return retry_->Run([this] { return coordinator_->MarkSeeded(); });
}

void ClusterDeployment::Tick(const CrawlStatsSnapshot& stats, uint64_t errors,
                             ProgressSample* sample) {
  // The progress line shows the cluster's totals; this node's counters go to the others.
  coordinator_->Publish({stats.pages, errors, stats.links_new});
  // The cluster's pending entries cost a probe of every partition: only for a progress line.
  if (!config_.output.progress || !ProgressReporter::StderrIsTerminal()) return;
  const ClusterStatus totals = coordinator_->Totals();
  *sample = ProgressSample{totals.pages, totals.pending, sample->hosts, totals.errors};
}

void ClusterDeployment::Finish(const CrawlStatsSnapshot& stats, bool finished,
                               const std::function<void(const Status&)>& fail) {
  // The final counters go out with the leave (`urlsieve cluster status` sums them).
  uint64_t errors = 0;
  for (const auto& [kind, count] : stats.errors) errors += count;
  coordinator_->Publish({stats.pages, errors, stats.links_new});
  Status left = coordinator_->Leave(finished);
  if (!left.ok()) log_->Info("leaving " + coordinator_->what() + ": " + left.message());
  if (Status error = coordinator_->error(); !error.ok()) fail(error);
}

void ClusterDeployment::Describe(nlohmann::json* stats) const {
  (*stats)["node_id"] = coordinator_->node_id();
  Result<RedisAddress> address = RedisAddress::Parse(config_.cluster.url);
  (*stats)["cluster"] = {{"name", config_.cluster.name},
                         {"server", address.ok() ? address->ToString() : ""}};
}

const std::string& ClusterDeployment::node_id() const {
  return coordinator_ ? coordinator_->node_id() : Deployment::node_id();
}

}  // namespace urlsieve
