// Inserting into a RedisSeenSet and asking it (redis_seen_set_impl.h): a batch planned by shard
// (or taken from a failed run of the same keys), one Function call per shard, the verdicts and
// what they teach the front cache; contains; the claim log a crawl reads and clears.
#include <algorithm>

#include "dedup/redis/redis_seen_function.h"
#include "dedup/redis_seen_set_impl.h"

namespace urlsieve {

using namespace redis_seen_internal;

namespace {

// A generational answer, "<now> <cur> <verdicts>": the time the Function used, its current
// generation, and per key '1' (new) or 'A' + the age of the generation holding it.
bool ParseGenAnswer(const std::string& answer, uint64_t* now, uint64_t* cur,
                    std::string_view* verdicts) {
  const size_t first = answer.find(' ');
  if (first == std::string::npos) return false;
  const size_t second = answer.find(' ', first + 1);
  if (second == std::string::npos) return false;
  if (!ParseStoredUint(answer.substr(0, first), now) ||
      !ParseStoredUint(answer.substr(first + 1, second - first - 1), cur)) {
    return false;
  }
  *verdicts = std::string_view(answer).substr(second + 1);
  return true;
}

}  // namespace

Status RedisSeenSet::Impl::Insert(std::span<const uint32_t> routes,
                                  std::span<const std::string_view> keys,
                                  std::span<const KeyHash> hashes,
                                  std::span<const std::string_view> payloads,
                                  std::span<bool> is_new) {
  URLSIEVE_RETURN_IF_ERROR(CheckInsertArguments(routes, keys, hashes, payloads, is_new));
  std::fill(is_new.begin(), is_new.end(), false);
  if (keys.empty()) return Status::Ok();
  if (options_.read_only) {
    return Status::FailedPrecondition(What() + " is open read-only");
  }
  auto acquired = Acquire();
  if (!acquired.ok()) return acquired.status();
  std::unique_ptr<PooledClient> pooled = std::move(acquired).value();
  auto epoch = ValidateCache(*pooled->client);
  if (!epoch.ok()) {
    Release(std::move(pooled));
    return epoch.status();
  }
  PendingBatch batch = PlanInsert(routes, hashes, *pooled);
  std::vector<uint32_t> shards;
  shards.reserve(batch.parts.size());
  size_t sent = 0;
  for (const auto& [shard, part] : batch.parts) {
    shards.push_back(shard);
    sent += part.size();
  }
  keys_sent_.fetch_add(sent, std::memory_order_relaxed);
  const bool routing = routed_;
  const InsertCall call{batch,
                        keys,
                        hashes,
                        payloads,
                        routing,
                        has_claim_log() || routing,
                        std::to_string(batch.seq),
                        std::to_string(building_generation_.load()),
                        NowArg(batch.sent_ms)};
  auto build = [&](size_t c) { return BuildInsertCall(call, c); };
  std::vector<std::string> answers;
  Status status = shards.empty() ? Status::Ok() : RunShardCalls(*pooled, shards, build, &answers);
  // A routed insert's inbox entries are the cluster's only record of the URLs told new, and the
  // page whose links they are is acknowledged on another master: a failover that lost them after
  // that acknowledgement would lose the URLs. So the answer waits for the replicas; if it cannot
  // be had, the batch fails as a lost reply does, and its retry replays or runs it again.
  if (status.ok() && routed_) status = WaitForShardReplicas(*pooled->client, shards);
  if (!status.ok()) {
    KeepFailedBatch(std::move(pooled), std::move(batch));
    return status;
  }
  Release(std::move(pooled));
  return generational() ? ApplyGenerationalAnswers(batch, answers, hashes, *epoch, is_new)
                        : ApplyInsertAnswers(batch, answers, hashes, *epoch, is_new);
}

Status RedisSeenSet::Impl::CheckInsertArguments(std::span<const uint32_t> routes,
                                                std::span<const std::string_view> keys,
                                                std::span<const KeyHash> hashes,
                                                std::span<const std::string_view> payloads,
                                                std::span<const bool> is_new) const {
  const size_t n = keys.size();
  // A routed set takes InsertRouted only (its callers name the shards), an unrouted one never.
  const bool routing = routed_;
  if (routed_ && routes.empty() && n > 0) {
    return Status::InvalidArgument(What() +
                                   " is routed: insert with InsertRouted, naming each "
                                   "key's shard");
  }
  if (!routed_ && !routes.empty()) {
    return Status::InvalidArgument(What() +
                                   " is not routed: InsertRouted is for a set opened "
                                   "routed");
  }
  if (hashes.size() != n || is_new.size() != n || (!payloads.empty() && payloads.size() != n) ||
      (routing && (routes.size() != n || payloads.size() != n))) {
    return Status::InvalidArgument(
        What() + ": " + (routing ? "shards, keys, hashes, payloads" : "keys, hashes, payloads") +
        " and answers differ in size");
  }
  for (size_t i = 0; i < routes.size(); ++i) {
    if (routes[i] >= shards_) {
      return Status::InvalidArgument(What() + ": key " + std::to_string(i) + " names shard " +
                                     std::to_string(routes[i]) + ", but the set has " +
                                     std::to_string(shards_) + " shards");
    }
  }
  return Status::Ok();
}

Result<uint64_t> RedisSeenSet::Impl::ValidateCache(RedisClient& client) {
  // A set that can forget: the front cache holds only what it learned under Redis's current
  // forgetting epoch (redis_front_cache.h).
  if (cache_ == nullptr || !can_forget()) return uint64_t{0};
  auto epoch = ReadEpoch(client);
  if (epoch.ok()) cache_->Validate(*epoch);
  return epoch;
}

RedisSeenSet::Impl::PendingBatch RedisSeenSet::Impl::PlanInsert(std::span<const uint32_t> routes,
                                                                std::span<const KeyHash> hashes,
                                                                PooledClient& pooled) {
  const size_t n = hashes.size();
  const bool routing = routed_;
  // The same batch again after a failure (the caller's retry) goes out as it went then.
  XXH128_hash_t digest = XXH3_128bits(hashes.data(), n * sizeof(KeyHash));
  if (routing) {  // the shards too, seeded with the hashes' digest
    digest =
        XXH3_128bits_withSeed(routes.data(), n * sizeof(uint32_t), digest.low64 ^ digest.high64);
  }
  PendingBatch batch;
  if (TakePending(digest, &batch)) return batch;
  batch.digest = digest;
  batch.sent_ms = LocalNowMs();
  // (shard, index) of each key the front cache does not know, grouped by shard.
  std::vector<std::pair<uint32_t, uint32_t>> order;
  order.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (cache_ != nullptr && cache_->Contains(hashes[i], batch.sent_ms)) continue;
    const uint32_t shard = routing ? routes[i] : RedisShardOf(hashes[i], shards_);
    order.emplace_back(shard, static_cast<uint32_t>(i));
  }
  std::sort(order.begin(), order.end());
  for (const auto& [shard, i] : order) AddToPart(batch.parts, shard, i);
  batch.token = pooled.token;
  batch.seq = ++pooled.seq;
  return batch;
}

RedisCommand RedisSeenSet::Impl::BuildModuleInsertCall(const InsertCall& call, size_t c) const {
  const uint32_t s = call.batch.parts[c].first;
  const std::vector<uint32_t>& part = call.batch.parts[c].second;
  // Each key's hash, low then high, little-endian: the module computes every offset from it
  // (redis_seen_key_math.h).
  std::string hashes;
  hashes.reserve(16 * part.size());
  for (uint32_t i : part) {
    char bytes[16];
    for (int b = 0; b < 8; ++b) {
      bytes[b] = static_cast<char>(call.hashes[i].low >> (8 * b));
      bytes[8 + b] = static_cast<char>(call.hashes[i].high >> (8 * b));
    }
    hashes.append(bytes, sizeof(bytes));
  }
  RedisCommand command;
  command.key_index = 1;
  if (call.routing) {
    command.argv = {kRedisSeenModuleInsertRouted,
                    CountKey(s),
                    InboxKey(s),
                    ExactArg(),
                    call.batch.token,
                    call.seq,
                    options_.new_key_stream.group,
                    std::move(hashes)};
  } else {
    command.argv = {kRedisSeenModuleInsert, CountKey(s),      ExactArg(),
                    call.batch.token,       call.seq,         options_.claim_log,
                    call.generation,        std::move(hashes)};
  }
  if (call.with_payload) {
    for (uint32_t i : part) {
      command.argv.emplace_back(call.payloads.empty() ? call.keys[i] : call.payloads[i]);
    }
  }
  return command;
}

RedisCommand RedisSeenSet::Impl::BuildInsertCall(const InsertCall& call, size_t c) const {
  if (module_ && !generational()) return BuildModuleInsertCall(call, c);
  const uint32_t s = call.batch.parts[c].first;
  const std::vector<uint32_t>& part = call.batch.parts[c].second;
  const uint32_t provided = generational() ? 1 : Provided(s, part.size());
  RedisCommand command;
  command.key_index = 3;
  std::vector<std::string>& argv = command.argv;
  size_t per_key = (parameters_.exact ? 1 : 0) + (call.with_payload ? 1 : 0);
  for (uint32_t l = 0; l < provided; ++l) per_key += layers_[l].bits + (parameters_.exact ? 1 : 0);
  argv.reserve(10 + part.size() * per_key);
  if (generational()) {
    argv = {"FCALL",     kRedisSeenInsertGen, "1",
            CountKey(s), ExactArg(),          call.batch.token,
            call.seq,    options_.claim_log,  call.generation,
            call.now};
  } else if (call.routing) {
    argv = {"FCALL",
            kRedisSeenInsertRouted,
            "2",
            CountKey(s),
            InboxKey(s),
            ExactArg(),
            call.batch.token,
            call.seq,
            options_.new_key_stream.group,
            std::to_string(provided)};
  } else {
    argv = {"FCALL",         kRedisSeenInsert,        "1",      CountKey(s),
            ExactArg(),      call.batch.token,        call.seq, options_.claim_log,
            call.generation, std::to_string(provided)};
  }
  for (uint32_t i : part) {
    std::string_view payload;
    if (call.with_payload) payload = call.payloads.empty() ? call.keys[i] : call.payloads[i];
    AppendRedisKeyArguments(call.hashes[i], layers_, provided, parameters_.exact,
                            call.with_payload ? &payload : nullptr, &argv, unit());
  }
  return command;
}

Status RedisSeenSet::Impl::ApplyInsertAnswers(const PendingBatch& batch,
                                              const std::vector<std::string>& answers,
                                              std::span<const KeyHash> hashes, uint64_t epoch,
                                              std::span<bool> is_new) {
  for (size_t c = 0; c < batch.parts.size(); ++c) {
    const auto& [shard, part] = batch.parts[c];
    const std::string& answer = answers[c];
    if (answer.size() != part.size()) {
      return Status::Corruption(options_.address.ToString() + ": " + What() + ": shard " +
                                std::to_string(shard) + " answered " +
                                std::to_string(answer.size()) + " verdicts for " +
                                std::to_string(part.size()) + " keys");
    }
    for (size_t j = 0; j < part.size(); ++j) is_new[part[j]] = answer[j] == '1';
  }
  if (cache_ != nullptr) {
    for (const auto& [shard, part] : batch.parts) {
      for (uint32_t i : part) cache_->Insert(hashes[i], RedisFrontCache::kForever, epoch);
    }
  }
  return Status::Ok();
}

Status RedisSeenSet::Impl::ApplyGenerationalAnswers(const PendingBatch& batch,
                                                    const std::vector<std::string>& answers,
                                                    std::span<const KeyHash> hashes, uint64_t epoch,
                                                    std::span<bool> is_new) {
  for (size_t c = 0; c < batch.parts.size(); ++c) {
    // Each key is remembered until its generation ages out, in this process's time line: the
    // time sent + what was left at the Function's time (redis_front_cache.h).
    const auto& [shard, part] = batch.parts[c];
    uint64_t now = 0;
    uint64_t cur = 0;
    std::string_view verdicts;
    if (!ParseGenAnswer(answers[c], &now, &cur, &verdicts) || verdicts.size() != part.size()) {
      return Status::Corruption(options_.address.ToString() + ": " + What() + ": shard " +
                                std::to_string(shard) + " answered \"" + answers[c].substr(0, 80) +
                                "\" for " + std::to_string(part.size()) + " keys");
    }
    for (size_t j = 0; j < part.size(); ++j) {
      const char verdict = verdicts[j];
      is_new[part[j]] = verdict == '1';
      const uint64_t age = verdict >= 'A' ? static_cast<uint64_t>(verdict - 'A') : 0;
      if (cache_ == nullptr || age > cur) continue;
      const uint64_t end = (cur - age + parameters_.generations + 1) * span_ms();
      if (end <= now) continue;
      cache_->Insert(hashes[part[j]], batch.sent_ms + (end - now), epoch);
    }
  }
  return Status::Ok();
}

Result<bool> RedisSeenSet::Impl::ContainsHashed(const KeyHash& hash) {
  if (routed_) {
    // Its shard is the caller's (the partition of the key's host), unknown here.
    return Status::InvalidArgument(What() + " is routed: a lookup needs the key's shard");
  }
  // A set that can forget is asked every time: another process may have forgotten the key.
  if (cache_ != nullptr && !can_forget() && cache_->Contains(hash, LocalNowMs())) return true;
  auto acquired = Acquire();
  if (!acquired.ok()) return acquired.status();
  std::unique_ptr<PooledClient> pooled = std::move(acquired).value();
  const uint32_t shard = RedisShardOf(hash, shards_);
  keys_sent_.fetch_add(1, std::memory_order_relaxed);
  const std::string now_arg = NowArg(LocalNowMs());
  auto build = [&](size_t) {
    const auto provided = generational()
                              ? 1
                              : std::clamp<uint32_t>(hints_[shard].layers.load(), 1,
                                                     static_cast<uint32_t>(layers_.size()));
    RedisCommand command;
    command.key_index = 3;
    command.argv = {"FCALL",    generational() ? kRedisSeenContainsGen : kRedisSeenContains,
                    "1",        CountKey(shard),
                    ExactArg(), generational() ? now_arg : std::to_string(provided)};
    AppendRedisKeyArguments(hash, layers_, provided, parameters_.exact, nullptr, &command.argv,
                            unit());
    return command;
  };
  std::vector<std::string> answers;
  Status status = RunShardCalls(*pooled, {shard}, build, &answers);
  Release(std::move(pooled));
  if (!status.ok()) return status;
  if (answers[0].size() != 1) {
    return Status::Corruption(options_.address.ToString() + ": " + What() +
                              ": a lookup answered \"" + answers[0] + "\"");
  }
  return answers[0] == "1";
}

uint64_t RedisSeenSet::Impl::LocalNowMs() const {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  if (options_.clock != nullptr) {
    return static_cast<uint64_t>(
        duration_cast<milliseconds>(options_.clock->WallNow().time_since_epoch()).count());
  }
  return static_cast<uint64_t>(
      duration_cast<milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

Result<std::vector<std::string>> RedisSeenSet::Impl::UncommittedClaims() {
  std::vector<std::string> claims;
  if (!has_claim_log()) return claims;
  auto acquired = Acquire();
  if (!acquired.ok()) return acquired.status();
  std::unique_ptr<PooledClient> pooled = std::move(acquired).value();
  std::vector<RedisCommand> commands;
  for (uint32_t s = 0; s < shards_; ++s)
    commands.push_back(Command({"LRANGE", ClaimsKey(s), "0", "-1"}));
  std::vector<RedisReply> replies;
  Status status = pooled->client->Pipeline(commands, &replies);
  round_trips_.fetch_add(1, std::memory_order_relaxed);
  const std::string server = pooled->client->server();
  Release(std::move(pooled));
  if (!status.ok()) return status;
  for (size_t s = 0; s < replies.size(); ++s) {
    if (replies[s].is_error())
      return RedisErrorStatus(server, "LRANGE " + commands[s].argv[1], replies[s]);
    for (const RedisReply& entry : replies[s].elements) {
      const size_t space = entry.str.find(' ');
      uint64_t generation = 0;
      if (space == std::string::npos || !ParseStoredUint(entry.str.substr(0, space), &generation)) {
        return Status::Corruption(server + ": " + commands[s].argv[1] +
                                  " holds an entry that is not \"<generation> <payload>\"");
      }
      if (generation > options_.committed_generation) claims.push_back(entry.str.substr(space + 1));
    }
  }
  return claims;
}

Status RedisSeenSet::Impl::CheckpointCommitted(uint64_t generation) {
  if (!has_claim_log()) return Status::Ok();
  auto acquired = Acquire();
  if (!acquired.ok()) return acquired.status();
  std::unique_ptr<PooledClient> pooled = std::move(acquired).value();
  std::vector<RedisCommand> commands;
  for (uint32_t s = 0; s < shards_; ++s) commands.push_back(Command({"DEL", ClaimsKey(s)}));
  std::vector<RedisReply> replies;
  Status status = pooled->client->Pipeline(commands, &replies);
  round_trips_.fetch_add(1, std::memory_order_relaxed);
  const std::string server = pooled->client->server();
  Release(std::move(pooled));
  // The generation moves on even if the lists stay: their entries are ≤ generation, which the
  // next open ignores, and the next checkpoint deletes them.
  building_generation_.store(generation + 1);
  if (!status.ok()) return status;
  for (size_t s = 0; s < replies.size(); ++s) {
    if (replies[s].is_error())
      return RedisErrorStatus(server, "DEL " + commands[s].argv[1], replies[s]);
  }
  return Status::Ok();
}

}  // namespace urlsieve
