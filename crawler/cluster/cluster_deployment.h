// ClusterDeployment: a node of a crawl cluster (deployment.h; docs/features/cluster.md). The
// state opens the cluster's routed seen set (ClusterSeenSetSource) and, once the node id is
// settled, joins the cluster through this deployment (ClusterCoordinator, with the settings every
// node must share: ClusterSettings). Its seams: ClusterAdmission (the routed seen test appends new
// URLs to their partitions' inboxes) and ClusterWorkSource (the inboxes of the partitions this node
// owns, read into the local frontier by a ClusterFeed). The scope of every node knows every node's
// seeds (ClusterSeeds); the progress line shows the cluster's totals and this node's counters are
// published with its heartbeat; at the end the node publishes its final counters and leaves.
// A re-crawl (--recrawl) starts a round of the cluster (ClusterCoordinator::BeginRecrawl): the
// fetch records are the partitions', in Redis.
// Sitemaps go to the inbox of their host's partition (ClusterAdmission::AdmitSitemap); the
// frontier's pending set is not checkpointed (the inboxes are the truth). Budgets are per node.
//
// Thread-safety: see deployment.h.
#ifndef URLSIEVE_CRAWLER_CLUSTER_CLUSTER_DEPLOYMENT_H_
#define URLSIEVE_CRAWLER_CLUSTER_CLUSTER_DEPLOYMENT_H_

#include <memory>
#include <string>
#include <vector>

#include "crawler/config/crawl_config.h"
#include "crawler/crawl/deployment.h"
#include "crawler/crawl/rule_exchange.h"
#include "frontier/frontier_options.h"

namespace urlsieve {

class ClusterAdmission;
class ClusterCoordinator;
class ClusterFeed;
class ClusterSeeds;
class ClusterSeenSetSource;
class ClusterUrlRouter;
class ClusterWorkSource;
class SeenRetry;

class ClusterDeployment final : public Deployment {
 public:
  // `notices` (the crawl's, for the user) must outlive the deployment.
  ClusterDeployment(const CrawlConfig& config, std::vector<std::string>* notices);
  ~ClusterDeployment() override;

  Result<SeenSetSource*> PrepareSeenSet(const CrawlStateOptions& state) override;
  void PrepareFrontier(FrontierOptions* options) override;
  void PrepareScope(ScopeOptions* options) override;
  bool SeedsOptional() const override { return true; }
  Status RestorePending(SqliteDb&, Frontier*) override { return Status::Ok(); }
  // The cluster's content-seen set: one for all its nodes, named as the cluster.
  Result<std::unique_ptr<ContentSeenSet>> OpenContentSet(
      const ContentSeenOptions& options) override {
    return OpenSharedContentSet(config_.cluster.url, config_.cluster.name, options);
  }
  // The cluster's URL rules: one set of rules for all its nodes.
  Result<std::unique_ptr<RuleExchange>> OpenRuleExchange() override {
    return RuleExchange::Open(config_.cluster.url, config_.cluster.name);
  }
  Status Build(const CrawlParts& parts, const std::vector<CanonicalUrl>& seeds) override;
  Admission& admission() override;
  WorkSource& work() override;

  Status SeedsQueued(bool any) override;
  bool RecrawlsFromState() const override { return false; }
  void Tick(const CrawlStatsSnapshot& stats, uint64_t errors, ProgressSample* sample) override;
  void Finish(const CrawlStatsSnapshot& stats, bool finished,
              const std::function<void(const Status&)>& fail) override;
  void Describe(nlohmann::json* stats) const override;
  const std::string& node_id() const override;

 private:
  // Joins the cluster as `node_id`: the cluster's identity and partition count.
  Result<std::pair<std::string, uint32_t>> Join(const std::string& node_id);
  // The options every node of a cluster must share, as JSON (ClusterOptions::settings).
  std::string ClusterSettings() const;

  const CrawlConfig config_;
  std::vector<std::string>* const notices_;
  Logger* log_ = nullptr;
  FrontierOptions frontier_options_;  // as the crawl's frontier was opened
  std::unique_ptr<ClusterSeenSetSource> source_;
  // Destroyed in reverse: the seams and the feed (its threads stop) before the router, the seeds,
  // the retries and, last, the coordinator they use.
  std::unique_ptr<ClusterCoordinator> coordinator_;
  std::unique_ptr<SeenRetry> retry_;  // Redis calls retried while it does not answer
  std::unique_ptr<ClusterUrlRouter> router_;
  std::unique_ptr<ClusterSeeds> seeds_;  // with a scope other than "any"
  std::unique_ptr<ClusterFeed> feed_;
  std::unique_ptr<ClusterAdmission> admission_;
  std::unique_ptr<ClusterWorkSource> work_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CLUSTER_CLUSTER_DEPLOYMENT_H_
