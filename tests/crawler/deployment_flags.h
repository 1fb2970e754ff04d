// The three deployments of one crawl loop (docs/architecture.md, "One crawl, three
// deployments"), for tests parameterized over them: standalone, over a seen set shared in Redis
// (--seen-redis) and as the one node of a cluster (--cluster), the last two named "matrix".
#ifndef URLSIEVE_TESTS_CRAWLER_DEPLOYMENT_FLAGS_H_
#define URLSIEVE_TESTS_CRAWLER_DEPLOYMENT_FLAGS_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace urlsieve::testing {

enum class Deployment { kLocal, kShared, kCluster };

// The test name's suffix (INSTANTIATE_TEST_SUITE_P's name generator).
inline std::string DeploymentName(const ::testing::TestParamInfo<Deployment>& info) {
  switch (info.param) {
    case Deployment::kLocal:
      return "Local";
    case Deployment::kShared:
      return "SharedSeenSet";
    case Deployment::kCluster:
      return "ClusterNode";
  }
  return "?";
}

// Appends the flags of `deployment` to a `urlsieve crawl` command line; `redis_url`: the server
// of the shared set or the cluster (unused standalone).
inline void AppendDeploymentFlags(Deployment deployment, const std::string& redis_url,
                                  std::vector<std::string>* args) {
  switch (deployment) {
    case Deployment::kLocal:
      break;
    case Deployment::kShared:
      args->insert(args->end(), {"--seen-redis", redis_url, "--name", "matrix"});
      break;
    case Deployment::kCluster:
      args->insert(args->end(), {"--cluster", redis_url, "--cluster-name", "matrix", "--node-id",
                                 "only", "--partitions", "16"});
      break;
  }
}

}  // namespace urlsieve::testing

#endif  // URLSIEVE_TESTS_CRAWLER_DEPLOYMENT_FLAGS_H_
