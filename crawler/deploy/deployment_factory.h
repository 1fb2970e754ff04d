// The factory of deployments (deployment.h; docs/architecture.md, "One crawl, three
// deployments"): the one place that knows which deployments exist. A cluster config makes a
// cluster node (ClusterDeployment); any other a crawl with its own frontier (LocalDeployment),
// over its own seen set or one shared in Redis, as the config says.
//
// Thread-safety: free functions, no shared state.
#ifndef URLSIEVE_CRAWLER_DEPLOY_DEPLOYMENT_FACTORY_H_
#define URLSIEVE_CRAWLER_DEPLOY_DEPLOYMENT_FACTORY_H_

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace urlsieve {

class Crawler;
class Deployment;
struct CrawlConfig;

// `notices` (the crawl's) must outlive the deployment.
std::unique_ptr<Deployment> MakeDeployment(const CrawlConfig& config,
                                           std::vector<std::string>* notices);

// A crawl for `config`, opened (Crawler::Create with the deployment the config asks for).
Result<std::unique_ptr<Crawler>> OpenCrawler(const CrawlConfig& config);

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_DEPLOY_DEPLOYMENT_FACTORY_H_
