// The feature matrix (tests/crawler/feature_matrix.h) over a real 3-master Redis Cluster
// (tests/support/redis_cluster.h): the shared set's and the cluster's keys spread over the
// masters' slots.
#include <gtest/gtest.h>

#include <memory>

#include "tests/crawler/feature_matrix.h"
#include "tests/support/redis_cluster.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

using testing::FeatureMatrix;
using testing::MatrixCase;
using testing::RedisCluster;
using testing::ScratchDir;

class FeatureMatrixClusterTest : public ::testing::TestWithParam<MatrixCase> {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir("feature_matrix_redis_cluster");
    redis_ = RedisCluster::Start(dir_->path() / "redis", 3).release();
  }
  static void TearDownTestSuite() {
    delete redis_;
    delete dir_;
  }
  static ScratchDir* dir_;
  static RedisCluster* redis_;
};

ScratchDir* FeatureMatrixClusterTest::dir_ = nullptr;
RedisCluster* FeatureMatrixClusterTest::redis_ = nullptr;

TEST_P(FeatureMatrixClusterTest, WorksAlikeOnEveryDeployment) {
  ASSERT_NE(redis_, nullptr);
  FeatureMatrix matrix(
      GetParam(), redis_->url(),
      testing::MatrixCaseName(::testing::TestParamInfo<MatrixCase>(GetParam(), 0)));
  matrix.Run();
}

// Standalone needs no Redis: run once, over the single server (crawl_feature_matrix_test.cc).
std::vector<MatrixCase> RedisCases() {
  std::vector<MatrixCase> cases;
  for (const MatrixCase& c : testing::AllMatrixCases()) {
    if (c.second != testing::MatrixDeployment::kLocal) cases.push_back(c);
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Matrix, FeatureMatrixClusterTest, ::testing::ValuesIn(RedisCases()),
                         testing::MatrixCaseName);

}  // namespace
}  // namespace urlsieve
