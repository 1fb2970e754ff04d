#include "crawler/cluster/cluster_seeds.h"

#include <utility>
#include <vector>

#include "crawler/crawl/scope.h"
#include "redis/redis_client.h"
#include "redis/redis_reply.h"

namespace urlsieve {

std::string ClusterSeedsKey(std::string_view name) {
  std::string key = "urlsieve:{";
  key += name;
  key += "}:seeds";
  return key;
}

ClusterSeeds::ClusterSeeds(RedisAddress address, std::string name, Scope* scope,
                           const UrlCanonicalizer* fetch_form, RedisTimeouts timeouts)
    : address_(std::move(address)),
      key_(ClusterSeedsKey(name)),
      scope_(scope),
      fetch_form_(fetch_form),
      timeouts_(timeouts) {}

ClusterSeeds::~ClusterSeeds() = default;

Status ClusterSeeds::Connected() {
  if (client_) return Status::Ok();
  Result<std::unique_ptr<RedisClient>> client = RedisClient::Connect(address_, timeouts_);
  if (!client.ok()) return client.status();
  client_ = std::move(*client);
  return Status::Ok();
}

Status ClusterSeeds::Add(std::span<const CanonicalUrl> seeds) {
  for (const CanonicalUrl& seed : seeds) scope_->AddSeed(seed);
  if (seeds.empty()) return Status::Ok();
  std::lock_guard<std::mutex> lock(mu_);
  URLSIEVE_RETURN_IF_ERROR(Connected());
  RedisCommand add{{"SADD", key_}};
  for (const CanonicalUrl& seed : seeds) add.argv.emplace_back(seed.key());
  Result<RedisReply> reply = client_->Run(add);
  if (!reply.ok()) {
    client_.reset();
    return reply.status();
  }
  if (reply->is_error()) return RedisErrorStatus(client_->server(), "adding the seeds", *reply);
  return Status::Ok();
}

Status ClusterSeeds::Refresh() {
  std::lock_guard<std::mutex> lock(mu_);
  URLSIEVE_RETURN_IF_ERROR(Connected());
  Result<RedisReply> count = client_->Run({{"SCARD", key_}});
  if (!count.ok()) {
    client_.reset();
    return count.status();
  }
  if (count->is_error()) return RedisErrorStatus(client_->server(), "reading the seeds", *count);
  if (count->integer == known_) return Status::Ok();
  Result<RedisReply> members = client_->Run({{"SMEMBERS", key_}});
  if (!members.ok()) {
    client_.reset();
    return members.status();
  }
  if (members->is_error()) {
    return RedisErrorStatus(client_->server(), "reading the seeds", *members);
  }
  for (const RedisReply& member : members->elements) {
    Result<CanonicalUrl> seed = fetch_form_->Canonicalize(member.str);
    if (seed.ok()) scope_->AddSeed(*seed);
  }
  known_ = static_cast<long long>(members->elements.size());
  return Status::Ok();
}

}  // namespace urlsieve
