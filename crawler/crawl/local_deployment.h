// LocalDeployment: a crawl that keeps its pending work in its own frontier (deployment.h), with
// its own seen set (LocalSeenSetSource, LocalAdmission) or a seen set shared in Redis
// (--seen-redis: SharedSeenSetSource, SharedAdmission). Its WorkSource is the local frontier.
//
// Thread-safety: see deployment.h.
#ifndef URLSIEVE_CRAWLER_CRAWL_LOCAL_DEPLOYMENT_H_
#define URLSIEVE_CRAWLER_CRAWL_LOCAL_DEPLOYMENT_H_

#include <memory>

#include "crawler/config/crawl_config.h"
#include "crawler/crawl/deployment.h"

namespace urlsieve {

class SeenRetry;

class LocalDeployment final : public Deployment {
 public:
  explicit LocalDeployment(const CrawlConfig& config);
  ~LocalDeployment() override;

  Result<SeenSetSource*> PrepareSeenSet(const CrawlStateOptions& state) override;
  Status RestorePending(SqliteDb& db, Frontier* frontier) override;
  // With --seen-redis, the content-seen set beside the shared seen set (same server and name).
  Result<std::unique_ptr<ContentSeenSet>> OpenContentSet(
      const ContentSeenOptions& options) override;
  // With --seen-redis, the URL rules shared beside it.
  Result<std::unique_ptr<RuleExchange>> OpenRuleExchange() override;
  Status Build(const CrawlParts& parts, const std::vector<CanonicalUrl>& seeds) override;
  Admission& admission() override { return *admission_; }
  WorkSource& work() override { return *work_; }

 private:
  const CrawlConfig config_;
  std::unique_ptr<SeenSetSource> source_;
  std::unique_ptr<SeenRetry> retry_;  // a shared seen set's retries
  std::unique_ptr<Admission> admission_;
  std::unique_ptr<WorkSource> work_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CRAWL_LOCAL_DEPLOYMENT_H_
