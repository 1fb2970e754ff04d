// Forgetting keys of a RedisSeenSet (redis_seen_set_impl.h): exact sets delete the key's record,
// deletable ones decrement its counters, one Function call per shard; then the forgetting epoch
// moves, so that no front cache answers a forgotten key "seen".
#include <algorithm>
#include <tuple>

#include "dedup/redis/redis_seen_function.h"
#include "dedup/redis_seen_set_impl.h"

namespace urlsieve {

using namespace redis_seen_internal;

Status RedisSeenSet::Impl::Forget(std::span<const uint32_t> routes, std::span<const KeyHash> hashes,
                                  std::span<bool> forgotten) {
  const size_t n = hashes.size();
  if (forgotten.size() != n || (routed_ && routes.size() != n)) {
    return Status::InvalidArgument(What() + ": keys, hashes, shards and answers differ in size");
  }
  std::fill(forgotten.begin(), forgotten.end(), false);
  if (routed_ != !routes.empty() && n > 0) {
    return Status::InvalidArgument(What() + (routed_ ? " is routed (a crawl cluster's): "
                                                       "ForgetRouted names each key's shard"
                                                     : " is not routed: ForgetRouted is for a "
                                                       "set opened routed"));
  }
  for (uint32_t shard : routes) {
    if (shard >= shards_) {
      return Status::InvalidArgument(What() + ": shard " + std::to_string(shard) +
                                     " does not exist (" + std::to_string(shards_) + " shards)");
    }
  }
  if (!can_forget()) {
    return Status::Unsupported(options_.address.ToString() + ": " + What() +
                               " cannot forget a key: it is a plain Bloom filter, which cannot "
                               "delete one; create the set in exact mode (--exact) or with a "
                               "counting filter (--deletable)");
  }
  if (n == 0) return Status::Ok();
  if (options_.read_only) return Status::FailedPrecondition(What() + " is open read-only");
  auto acquired = Acquire();
  if (!acquired.ok()) {
    return Status(acquired.status().code(),
                  "forgetting keys in " + What() + ": " + acquired.status().message());
  }
  std::unique_ptr<PooledClient> pooled = std::move(acquired).value();
  PendingBatch batch = PlanForget(routes, hashes, *pooled);
  const std::string seq = std::to_string(batch.seq);
  const std::string now_arg = NowArg(batch.sent_ms);
  std::vector<uint32_t> shards;
  for (const auto& part : batch.parts) shards.push_back(part.first);
  auto build = [&](size_t c) { return BuildForgetCall(batch, c, seq, now_arg, hashes); };
  std::vector<std::string> answers;
  Status status = RunShardCalls(*pooled, shards, build, &answers);
  // Every front cache must stop answering these keys: the epoch moves after the deletions.
  if (status.ok()) status = BumpEpoch(*pooled->client);
  if (!status.ok()) {
    KeepFailedBatch(std::move(pooled), std::move(batch));
    return Status(status.code(), "forgetting keys in " + What() + ": " + status.message());
  }
  Release(std::move(pooled));
  for (size_t c = 0; c < shards.size(); ++c) {
    const std::vector<uint32_t>& part = batch.parts[c].second;
    if (answers[c].size() != part.size()) {
      return Status::Corruption(options_.address.ToString() + ": " + What() + ": shard " +
                                std::to_string(shards[c]) + " answered " +
                                std::to_string(answers[c].size()) + " verdicts for " +
                                std::to_string(part.size()) + " keys to forget");
    }
    for (size_t j = 0; j < part.size(); ++j) forgotten[part[j]] = answers[c][j] == '1';
  }
  return Status::Ok();
}

RedisSeenSet::Impl::PendingBatch RedisSeenSet::Impl::PlanForget(std::span<const uint32_t> routes,
                                                                std::span<const KeyHash> hashes,
                                                                PooledClient& pooled) {
  const size_t n = hashes.size();
  const XXH128_hash_t digest =
      XXH3_128bits_withSeed(hashes.data(), n * sizeof(KeyHash), forget_seed_);
  PendingBatch batch;
  if (TakePending(digest, &batch)) return batch;
  batch.digest = digest;
  batch.sent_ms = LocalNowMs();
  // A key twice in the batch is forgotten once (its second "forgotten" is false): a second
  // decrement would take counts from other keys.
  std::vector<std::pair<uint32_t, uint32_t>> order;
  for (size_t i = 0; i < n; ++i) {
    order.emplace_back(routes.empty() ? RedisShardOf(hashes[i], shards_) : routes[i],
                       static_cast<uint32_t>(i));
  }
  std::sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    const KeyHash& x = hashes[a.second];
    const KeyHash& y = hashes[b.second];
    return std::tie(a.first, x.high, x.low, a.second) < std::tie(b.first, y.high, y.low, b.second);
  });
  for (size_t j = 0; j < order.size(); ++j) {
    const auto [shard, i] = order[j];
    if (j > 0 && hashes[order[j - 1].second] == hashes[i]) continue;
    AddToPart(batch.parts, shard, i);
  }
  batch.token = pooled.token;
  batch.seq = ++pooled.seq;
  return batch;
}

RedisCommand RedisSeenSet::Impl::BuildForgetCall(const PendingBatch& batch, size_t c,
                                                 const std::string& seq, const std::string& now,
                                                 std::span<const KeyHash> hashes) const {
  const uint32_t s = batch.parts[c].first;
  const uint32_t provided = generational() ? 1 : Provided(s, 0);
  RedisCommand command;
  command.key_index = 3;
  command.argv = {"FCALL",    generational() ? kRedisSeenForgetGen : kRedisSeenForget,
                  "1",        CountKey(s),
                  ExactArg(), batch.token,
                  seq,        generational() ? now : std::to_string(provided)};
  for (uint32_t i : batch.parts[c].second) {
    AppendRedisKeyArguments(hashes[i], layers_, provided, parameters_.exact, nullptr, &command.argv,
                            unit());
  }
  return command;
}

Status RedisSeenSet::Impl::BumpEpoch(RedisClient& client) {
  auto bumped = client.Run(Command({"INCR", EpochKey()}));
  round_trips_.fetch_add(1, std::memory_order_relaxed);
  if (!bumped.ok()) return bumped.status();
  if (bumped->is_error()) return RedisErrorStatus(client.server(), "INCR " + EpochKey(), *bumped);
  return Status::Ok();
}

Result<uint64_t> RedisSeenSet::Impl::ReadEpoch(RedisClient& client) {
  auto reply = client.Run(Command({"GET", EpochKey()}));
  round_trips_.fetch_add(1, std::memory_order_relaxed);
  if (!reply.ok()) return reply.status();
  if (reply->is_error()) return RedisErrorStatus(client.server(), "GET " + EpochKey(), *reply);
  if (reply->type == RedisReply::Type::kNil) return uint64_t{0};
  uint64_t epoch = 0;
  if (!ParseStoredUint(reply->str, &epoch)) {
    return Status::Corruption(client.server() + ": " + EpochKey() + " holds \"" +
                              reply->str.substr(0, 40) + "\", not a forgetting epoch");
  }
  return epoch;
}

}  // namespace urlsieve
