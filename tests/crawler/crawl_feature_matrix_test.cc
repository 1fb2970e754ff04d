// The feature matrix (tests/crawler/feature_matrix.h) over one real redis-server on a random
// loopback port: each feature standalone, over a shared seen set and on a cluster node.
#include <gtest/gtest.h>

#include <memory>

#include "tests/crawler/feature_matrix.h"
#include "tests/support/redis_server.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

using testing::FeatureMatrix;
using testing::MatrixCase;
using testing::RedisServer;
using testing::ScratchDir;

class FeatureMatrixTest : public ::testing::TestWithParam<MatrixCase> {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir("feature_matrix_redis");
    redis_ = RedisServer::Start(dir_->path() / "redis").release();
  }
  static void TearDownTestSuite() {
    delete redis_;
    delete dir_;
  }
  static ScratchDir* dir_;
  static RedisServer* redis_;
};

ScratchDir* FeatureMatrixTest::dir_ = nullptr;
RedisServer* FeatureMatrixTest::redis_ = nullptr;

TEST_P(FeatureMatrixTest, WorksAlikeOnEveryDeployment) {
  ASSERT_NE(redis_, nullptr);
  FeatureMatrix matrix(
      GetParam(), redis_->url(),
      testing::MatrixCaseName(::testing::TestParamInfo<MatrixCase>(GetParam(), 0)));
  matrix.Run();
}

INSTANTIATE_TEST_SUITE_P(Matrix, FeatureMatrixTest, ::testing::ValuesIn(testing::AllMatrixCases()),
                         testing::MatrixCaseName);

}  // namespace
}  // namespace urlsieve
