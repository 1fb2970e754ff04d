#include "redis/redis_client.h"

#include "redis/redis_cluster_client.h"

namespace urlsieve {
namespace {

// A standalone server: one connection, opened again when a call finds it lost.
class StandaloneRedisClient final : public RedisClient {
 public:
  StandaloneRedisClient(const RedisAddress& address, const RedisTimeouts& timeouts,
                        std::unique_ptr<RedisConnection> connection)
      : RedisClient(address), timeouts_(timeouts), connection_(std::move(connection)) {}

  Status Pipeline(std::span<const RedisCommand> commands,
                  std::vector<RedisReply>* replies) override {
    if (connection_ == nullptr || connection_->broken()) {
      connection_.reset();
      auto reopened = RedisConnection::Open(address(), timeouts_);
      if (!reopened.ok()) return reopened.status();
      connection_ = std::move(reopened).value();
    }
    return connection_->Pipeline(commands, replies);
  }

  Status OnEveryMaster(const RedisCommand& command, std::vector<RedisReply>* replies) override {
    return Pipeline(std::span(&command, 1), replies);
  }

  Status WaitForReplicas(std::span<const std::string> /*keys*/, int /*timeout_ms*/,
                         int* lagging) override {
    if (lagging != nullptr) *lagging = 0;
    return Status::Ok();
  }

  bool is_cluster() const override { return false; }

 private:
  RedisTimeouts timeouts_;
  std::unique_ptr<RedisConnection> connection_;
};

}  // namespace

Result<std::unique_ptr<RedisClient>> RedisClient::Connect(const RedisAddress& address,
                                                          const RedisTimeouts& timeouts) {
  auto connection = RedisConnection::Open(address, timeouts);
  if (!connection.ok()) return connection.status();
  auto info = (*connection)->Run({{"INFO", "cluster"}, -1});
  if (!info.ok()) return info.status();
  if (info->is_error()) return RedisErrorStatus(address.ToString(), "INFO cluster", *info);
  if (info->str.find("cluster_enabled:1") != std::string::npos) {
    return ConnectRedisCluster(address, timeouts, std::move(connection).value());
  }
  return std::unique_ptr<RedisClient>(
      new StandaloneRedisClient(address, timeouts, std::move(connection).value()));
}

Result<RedisReply> RedisClient::Run(const RedisCommand& command) {
  std::vector<RedisReply> replies;
  if (Status s = Pipeline(std::span(&command, 1), &replies); !s.ok()) return s;
  return std::move(replies[0]);
}

}  // namespace urlsieve
