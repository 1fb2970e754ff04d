#include "crawler/deploy/deployment_factory.h"

#include "crawler/cluster/cluster_deployment.h"
#include "crawler/config/crawl_config.h"
#include "crawler/crawl/crawler.h"
#include "crawler/crawl/local_deployment.h"

namespace urlsieve {

std::unique_ptr<Deployment> MakeDeployment(const CrawlConfig& config,
                                           std::vector<std::string>* notices) {
  if (config.cluster_mode()) return std::make_unique<ClusterDeployment>(config, notices);
  return std::make_unique<LocalDeployment>(config);
}

Result<std::unique_ptr<Crawler>> OpenCrawler(const CrawlConfig& config) {
  return Crawler::Create(config, MakeDeployment);
}

}  // namespace urlsieve
