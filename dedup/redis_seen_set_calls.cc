// RedisSeenSet's connections and shard calls (redis_seen_set_impl.h): the pool, the batches kept
// for a caller's retry, and RunShardCalls with its retries, and reloads of the library.
#include <algorithm>
#include <cstdio>
#include <thread>

#include "dedup/redis/redis_seen_function.h"
#include "dedup/redis_seen_set_impl.h"

namespace urlsieve {

using namespace redis_seen_internal;

namespace {

// A shard call's command (the Function's name, or the module's) and its shard's count key.
const std::string& CallName(const RedisCommand& command) {
  return command.argv[0] == "FCALL" ? command.argv[1] : command.argv[0];
}
const std::string& CallKey(const RedisCommand& command) {
  const auto at = static_cast<size_t>(command.key_index);
  return command.key_index >= 0 && at < command.argv.size() ? command.argv[at] : command.argv[0];
}

// Retries of a shard call whose connection failed, inside one call of the set (same token and
// sequence number, so a call that did run is answered as it was): the back-off before each.
constexpr int kRetryDelaysMs[] = {25, 100, 300, 500};
// A failed batch is remembered this long, for the caller's retry of it (the function keeps its
// answer for 300 s).
constexpr auto kPendingLifetime = std::chrono::seconds(240);
constexpr size_t kMaxPending = 256;

}  // namespace

namespace redis_seen_internal {

std::map<std::string, std::string, std::less<>> AsMap(const RedisReply& reply) {
  std::map<std::string, std::string, std::less<>> out;
  for (size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
    out[reply.elements[i].str] = reply.elements[i + 1].str;
  }
  return out;
}

}  // namespace redis_seen_internal

Status RedisSeenSet::Impl::PipelineInChunks(RedisClient& client,
                                            std::span<const RedisCommand> commands, size_t chunk,
                                            std::vector<RedisReply>* replies) {
  replies->clear();
  replies->reserve(commands.size());
  for (size_t begin = 0; begin < commands.size(); begin += chunk) {
    std::vector<RedisReply> part;
    URLSIEVE_RETURN_IF_ERROR(
        client.Pipeline(commands.subspan(begin, std::min(chunk, commands.size() - begin)), &part));
    round_trips_.fetch_add(1, std::memory_order_relaxed);
    for (RedisReply& reply : part) replies->push_back(std::move(reply));
  }
  return Status::Ok();
}

Result<std::unique_ptr<PooledClient>> RedisSeenSet::Impl::Acquire() {
  {
    std::lock_guard<std::mutex> lock(pool_mu_);
    if (!idle_.empty()) {
      std::unique_ptr<PooledClient> client = std::move(idle_.back());
      idle_.pop_back();
      return client;
    }
  }
  auto connected = RedisClient::Connect(options_.address, options_.timeouts);
  if (!connected.ok()) return connected.status();
  auto pooled = std::make_unique<PooledClient>();
  pooled->client = std::move(connected).value();
  pooled->token = NewToken();
  return pooled;
}

void RedisSeenSet::Impl::Release(std::unique_ptr<PooledClient> client) {
  std::lock_guard<std::mutex> lock(pool_mu_);
  idle_.push_back(std::move(client));
}

void RedisSeenSet::Impl::RememberPending(PendingBatch batch) {
  std::lock_guard<std::mutex> lock(pending_mu_);
  const auto now = std::chrono::steady_clock::now();
  while (!pending_.empty() &&
         (pending_.size() >= kMaxPending || now - pending_.front().failed_at > kPendingLifetime)) {
    pending_.pop_front();
  }
  pending_.push_back(std::move(batch));
}

bool RedisSeenSet::Impl::TakePending(const XXH128_hash_t& digest, PendingBatch* out) {
  std::lock_guard<std::mutex> lock(pending_mu_);
  if (pending_.empty()) return false;
  const auto now = std::chrono::steady_clock::now();
  for (auto it = pending_.begin(); it != pending_.end(); ++it) {
    if (XXH128_isEqual(it->digest, digest) && now - it->failed_at <= kPendingLifetime) {
      *out = std::move(*it);
      pending_.erase(it);
      return true;
    }
  }
  return false;
}

void RedisSeenSet::Impl::KeepFailedBatch(std::unique_ptr<PooledClient> pooled, PendingBatch batch) {
  batch.failed_at = std::chrono::steady_clock::now();
  pooled->token = NewToken();
  pooled->seq = 0;
  RememberPending(std::move(batch));
  Release(std::move(pooled));
}

Status RedisSeenSet::Impl::WaitForShardReplicas(RedisClient& client,
                                                const std::vector<uint32_t>& shards) {
  if (!client.is_cluster() || shards.empty()) return Status::Ok();
  std::vector<std::string> keys;
  keys.reserve(shards.size());
  for (uint32_t shard : shards) keys.push_back(CountKey(shard));
  // A lagging replica is not an error: the write is then as safe as asynchronous replication
  // makes it (a failover may make its keys new again).
  Status status = client.WaitForReplicas(keys, kReplicaWaitMs, /*lagging=*/nullptr);
  round_trips_.fetch_add(1, std::memory_order_relaxed);
  return status;
}

uint32_t RedisSeenSet::Impl::Provided(uint32_t shard, size_t keys) const {
  const auto total = static_cast<uint32_t>(layers_.size());
  const uint32_t known = std::clamp<uint32_t>(hints_[shard].layers.load(), 1, total);
  const uint64_t count = hints_[shard].count.load();
  const uint64_t capacity = layers_[known - 1].capacity;
  uint64_t room = capacity > count ? capacity - count : 0;
  uint32_t provided = known;
  while (room < keys && provided < total) room += layers_[provided++].capacity;
  return provided;
}

void RedisSeenSet::Impl::UpdateHint(uint32_t shard, uint64_t layers, uint64_t count) {
  if (layers == 0) return;  // a replayed answer carries no state
  hints_[shard].layers.store(static_cast<uint32_t>(std::min<uint64_t>(layers, UINT32_MAX)));
  hints_[shard].count.store(count);
}

Status RedisSeenSet::Impl::RunShardCalls(PooledClient& pooled, const std::vector<uint32_t>& shards,
                                         const std::function<RedisCommand(size_t)>& build,
                                         std::vector<std::string>* answers) {
  RedisClient& client = *pooled.client;
  std::vector<RedisCommand> commands(shards.size());
  answers->assign(shards.size(), std::string());
  std::vector<size_t> todo(shards.size());
  for (size_t i = 0; i < todo.size(); ++i) {
    todo[i] = i;
    commands[i] = build(i);
  }
  bool reloaded = false;
  size_t transient_failures = 0;
  size_t stale_rounds = 0;
  while (!todo.empty()) {
    // The first attempt sends every call as built (no copy: a batch's calls hold thousands of
    // arguments); later ones the calls still without an answer.
    std::vector<RedisCommand> subset;
    if (todo.size() != commands.size()) {
      subset.reserve(todo.size());
      for (size_t i : todo) subset.push_back(commands[i]);
    }
    const std::span<const RedisCommand> batch = subset.empty()
                                                    ? std::span<const RedisCommand>(commands)
                                                    : std::span<const RedisCommand>(subset);
    std::vector<RedisReply> replies;
    Status status = client.Pipeline(batch, &replies);
    round_trips_.fetch_add(1, std::memory_order_relaxed);
    if (status.ok() && replies.size() != batch.size()) {
      status =
          Status::Unavailable(client.server() + ": a pipeline of " + std::to_string(batch.size()) +
                              " calls got " + std::to_string(replies.size()) + " replies");
    }
    ShardRound round;
    if (status.ok()) {
      URLSIEVE_RETURN_IF_ERROR(ReadShardReplies(client, shards, build, todo, replies, commands,
                                                answers, &round, &status));
    }
    if (!status.ok()) {
      // A lost connection, a timeout or a transient error reply: back off and retry the calls
      // without an answer under the same token and sequence number.
      if (transient_failures >= std::size(kRetryDelaysMs)) return status;
      std::this_thread::sleep_for(std::chrono::milliseconds(kRetryDelaysMs[transient_failures]));
      ++transient_failures;
      todo = round.again.empty() ? todo : std::move(round.again);
      continue;
    }
    if (round.stale && ++stale_rounds > layers_.size() + 2) {
      return Status::Corruption(client.server() + ": " + What() +
                                ": a shard keeps answering STALE");
    }
    if (round.need_library) URLSIEVE_RETURN_IF_ERROR(ReloadLibrary(client, &reloaded));
    todo = std::move(round.again);
  }
  return Status::Ok();
}

Status RedisSeenSet::Impl::ReadShardReplies(
    RedisClient& client, const std::vector<uint32_t>& shards,
    const std::function<RedisCommand(size_t)>& build, const std::vector<size_t>& todo,
    std::vector<RedisReply>& replies, std::vector<RedisCommand>& commands,
    std::vector<std::string>* answers, ShardRound* round, Status* transient) {
  for (size_t j = 0; j < todo.size(); ++j) {
    RedisReply& reply = replies[j];
    const size_t i = todo[j];
    if (!reply.is_error()) {
      if (reply.type != RedisReply::Type::kArray || reply.elements.size() != 3 ||
          reply.elements[0].type != RedisReply::Type::kString) {
        return Status::Corruption(client.server() + ": " + What() + ": " + CallName(commands[i]) +
                                  " on " + CallKey(commands[i]) +
                                  " answered something else than [verdicts, layers, count]");
      }
      (*answers)[i] = std::move(reply.elements[0].str);
      UpdateHint(shards[i], static_cast<uint64_t>(std::max(0LL, reply.elements[1].integer)),
                 static_cast<uint64_t>(std::max(0LL, reply.elements[2].integer)));
      continue;
    }
    round->again.push_back(i);
    if (StartsWith(reply.str, "STALE ")) {
      unsigned long long layers = 0;
      unsigned long long count = 0;
      if (std::sscanf(reply.str.c_str(), "STALE %llu %llu", &layers, &count) != 2) {
        return Status::Corruption(client.server() + ": " + What() + ": " + reply.str);
      }
      UpdateHint(shards[i], layers, count);
      commands[i] = build(i);
      round->stale = true;
    } else if (TextHas(reply.str, "Function not found")) {
      round->need_library = true;
    } else if (TextHas(reply.str, "unknown command") &&
               (commands[i].argv[0] == kRedisSeenModuleInsert ||
                commands[i].argv[0] == kRedisSeenModuleInsertRouted)) {
      // A master restarted without the module: the Function answers instead (nothing ran).
      module_ = false;
      commands[i] = build(i);
    } else if (StartsWith(reply.str, "NOINIT")) {
      return LostShardError(client.server(), CallKey(commands[i]));
    } else {
      Status error = ShardCallError(
          client, "running " + CallName(commands[i]) + " on " + CallKey(commands[i]), reply);
      if (error.code() != StatusCode::kUnavailable) return error;
      *transient = error;  // BUSY, LOADING, ...: retried
    }
  }
  return Status::Ok();
}

Status RedisSeenSet::Impl::ReloadLibrary(RedisClient& client, bool* reloaded) {
  if (*reloaded) {
    return Status::FailedPrecondition(client.server() + ": " + What() +
                                      ": the function library is still missing after "
                                      "FUNCTION LOAD");
  }
  *reloaded = true;
  return LoadLibrary(client);
}

}  // namespace urlsieve
