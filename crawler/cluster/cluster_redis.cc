#include "crawler/cluster/cluster_redis.h"

#include <string_view>

#include "crawler/cluster/cluster_function.h"

namespace urlsieve {
namespace {

bool TextHas(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

}  // namespace

Result<std::unique_ptr<RedisClient>> ClusterClientPool::Take() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_.empty()) {
      std::unique_ptr<RedisClient> client = std::move(idle_.back());
      idle_.pop_back();
      return client;
    }
  }
  return RedisClient::Connect(address_, timeouts_);
}

void ClusterClientPool::Give(std::unique_ptr<RedisClient> client) {
  if (client == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  idle_.push_back(std::move(client));
}

RedisCommand ClusterFcall(const char* function, std::initializer_list<std::string> keys,
                          std::vector<std::string> args) {
  RedisCommand command;
  command.argv.reserve(3 + keys.size() + args.size());
  command.argv.push_back("FCALL");
  command.argv.push_back(function);
  command.argv.push_back(std::to_string(keys.size()));
  for (const std::string& key : keys) command.argv.push_back(key);
  for (std::string& arg : args) command.argv.push_back(std::move(arg));
  command.key_index = keys.size() > 0 ? 3 : -1;
  return command;
}

Status LoadClusterLibrary(RedisClient& client) {
  std::vector<RedisReply> replies;
  URLSIEVE_RETURN_IF_ERROR(client.OnEveryMaster(
      RedisCommand{{"FUNCTION", "LOAD", "REPLACE", ClusterLibrarySource()}, -1}, &replies));
  for (const RedisReply& reply : replies) {
    if (!reply.is_error()) continue;
    if (TextHas(reply.str, "unknown command") || TextHas(reply.str, "unknown subcommand")) {
      return Status::FailedPrecondition(
          client.server() + ": this Redis has no Functions (FUNCTION LOAD: " + reply.str +
          "); a crawl cluster needs Redis 7 or later");
    }
    return RedisErrorStatus(client.server(), "loading the urlsieve_cluster_v2 function library",
                            reply);
  }
  return Status::Ok();
}

Status RunClusterFunctions(RedisClient& client, std::span<const RedisCommand> commands,
                           std::vector<RedisReply>* replies) {
  URLSIEVE_RETURN_IF_ERROR(client.Pipeline(commands, replies));
  std::vector<size_t> missing;
  for (size_t i = 0; i < replies->size(); ++i) {
    if ((*replies)[i].is_error() && TextHas((*replies)[i].str, "Function not found")) {
      missing.push_back(i);
    }
  }
  if (missing.empty()) return Status::Ok();
  URLSIEVE_RETURN_IF_ERROR(LoadClusterLibrary(client));
  std::vector<RedisCommand> again;
  for (size_t i : missing) again.push_back(commands[i]);
  std::vector<RedisReply> more;
  URLSIEVE_RETURN_IF_ERROR(client.Pipeline(again, &more));
  for (size_t k = 0; k < missing.size(); ++k) (*replies)[missing[k]] = std::move(more[k]);
  return Status::Ok();
}

}  // namespace urlsieve
