#include "crawler/crawl/local_deployment.h"

#include "crawler/config/crawl_config.h"
#include "crawler/crawl/local_admission.h"
#include "crawler/crawl/local_work_source.h"
#include "crawler/crawl/rule_exchange.h"
#include "crawler/crawl/seen_retry.h"
#include "crawler/crawl/shared_admission.h"
#include "crawler/state/crawl_state.h"
#include "crawler/state/local_seen_set_source.h"
#include "crawler/state/shared_seen_set_source.h"
#include "frontier/frontier.h"

namespace urlsieve {

LocalDeployment::LocalDeployment(const CrawlConfig& config) : config_(config) {}
LocalDeployment::~LocalDeployment() = default;

Result<SeenSetSource*> LocalDeployment::PrepareSeenSet(const CrawlStateOptions& state) {
  const CrawlConfig::Crawl& crawl = config_.crawl;
  if (crawl.seen_redis.empty() && crawl.seen_redis_name.empty()) {
    source_ = std::make_unique<LocalSeenSetSource>(crawl.rebuild_bloom);
    return source_.get();
  }
  Result<RedisSeenSetOptions> options = CrawlRedisSeenSetOptions(
      crawl.seen_redis, crawl.seen_redis_name, state, crawl.rebuild_bloom,
      "a shared seen set needs both the server (--seen-redis) and the set's name (--name)");
  if (!options.ok()) return options.status();
  options->accept_loss = crawl.accept_loss;
  source_ = std::make_unique<SharedSeenSetSource>(std::move(*options));
  return source_.get();
}

Result<std::unique_ptr<ContentSeenSet>> LocalDeployment::OpenContentSet(
    const ContentSeenOptions& options) {
  if (config_.crawl.seen_redis.empty()) return std::unique_ptr<ContentSeenSet>();
  return OpenSharedContentSet(config_.crawl.seen_redis, config_.crawl.seen_redis_name, options);
}

Result<std::unique_ptr<RuleExchange>> LocalDeployment::OpenRuleExchange() {
  if (config_.crawl.seen_redis.empty()) return std::unique_ptr<RuleExchange>();
  return RuleExchange::Open(config_.crawl.seen_redis, config_.crawl.seen_redis_name);
}

Status LocalDeployment::RestorePending(SqliteDb& db, Frontier* frontier) {
  return frontier->Restore(db);
}

Status LocalDeployment::Build(const CrawlParts& parts, const std::vector<CanonicalUrl>&) {
  CrawlState& state = *parts.state;
  if (state.shared_seen_set().empty()) {
    admission_ = std::make_unique<LocalAdmission>(&state.seen_set(), parts.router);
  } else {
    retry_ = SharedSeenSetRetry(parts);
    admission_ = std::make_unique<SharedAdmission>(&state.seen_set(), parts.router, retry_.get(),
                                                   parts.log, state.shared_seen_set());
  }
  work_ = std::make_unique<LocalWorkSource>(parts.frontier, parts.checkpoint, parts.fail,
                                            parts.config->crawl.checkpoint_interval_s == 0);
  return Status::Ok();
}

}  // namespace urlsieve
