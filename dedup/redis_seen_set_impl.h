// RedisSeenSet's inside (redis_seen_set.h), shared by the files that implement it, one concern
// each:
//   redis_seen_set.cc         the public class, which forwards to Impl; the key names
//   redis_seen_set_open.cc    opening: the meta hash, creating a set, the Function library, the
//                             shards' initialization, the notices about stored parameters
//   redis_seen_set_calls.cc   the pool of connections, the batches kept for a retry, and the shard
//                             calls with their retries (RunShardCalls)
//   redis_seen_set_insert.cc  insert (plain, claiming, routed), contains, the claim log
//   redis_seen_set_forget.cc  forgetting and the forgetting epoch
//   redis_seen_set_stats.cc   Stats and Usage
// Not installed; nothing outside these files includes it.
//
// Thread-safety: as RedisSeenSet: every public method of Impl may be called concurrently (the pool
// and the pending batches have their own mutexes, the hints and counters are atomics); OpenSet
// runs once, before any other call.
#ifndef URLSIEVE_DEDUP_REDIS_SEEN_SET_IMPL_H_
#define URLSIEVE_DEDUP_REDIS_SEEN_SET_IMPL_H_

#include <xxhash.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dedup/redis/redis_front_cache.h"
#include "dedup/redis/redis_seen_layout.h"
#include "dedup/redis_seen_set.h"
#include "redis/redis_client.h"

namespace urlsieve {
namespace redis_seen_internal {

// MEMORY USAGE and other per-key commands go in pipelines of this many; shard Function calls
// (init, check) in pipelines of kShardCallChunk.
inline constexpr size_t kPipelineChunk = 1000;
inline constexpr size_t kShardCallChunk = 64;
// How long a write waits for a master's replicas (RedisClient::WaitForReplicas) where a failover
// losing it would lose data: a routed insert (the inboxes), a new set's shards before it is
// marked ready. On a LAN replicas answer in well under a millisecond; one that does not within
// this is lagging or gone, and the write is left as safe as asynchronous replication makes it.
inline constexpr int kReplicaWaitMs = 250;

inline bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

inline bool TextHas(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

inline RedisCommand Command(std::vector<std::string> argv, int key_index = 1) {
  return RedisCommand{std::move(argv), key_index};
}

// A hash reply (HGETALL) as a map.
std::map<std::string, std::string, std::less<>> AsMap(const RedisReply& reply);

// One pooled connection: a client, and the token the function records its answers under. A
// client whose call failed gets a new token (its old one stays with the failed batch).
struct PooledClient {
  std::unique_ptr<RedisClient> client;
  std::string token;
  uint64_t seq = 0;
};

// A batch's keys grouped by shard (ascending, each once): the shard and its keys' indexes in the
// batch.
using ShardParts = std::vector<std::pair<uint32_t, std::vector<uint32_t>>>;
// Key `index` into shard `shard`'s part; the keys come in ascending shard order.
inline void AddToPart(ShardParts& parts, uint32_t shard, uint32_t index) {
  if (parts.empty() || parts.back().first != shard) parts.push_back({shard, {}});
  parts.back().second.push_back(index);
}

// A batch whose call failed, kept for the caller's retry of the same keys: the same shard parts
// under the same token and sequence number make the function answer as the first run did, if it
// ran.
struct PendingBatch {
  XXH128_hash_t digest;
  std::string token;
  uint64_t seq = 0;
  ShardParts parts;
  std::chrono::steady_clock::time_point failed_at;
  uint64_t sent_ms = 0;  // LocalNowMs() when it was first sent (a generational set's time)
};

}  // namespace redis_seen_internal

class RedisSeenSet::Impl {
 public:
  using PooledClient = redis_seen_internal::PooledClient;
  using PendingBatch = redis_seen_internal::PendingBatch;

  Impl(const RedisSeenSetOptions& options, std::string instance)
      : options_(options), instance_(std::move(instance)) {}

  Status OpenSet(std::vector<SeenNotice>* notices);

  // `routes` empty: the set's own sharding (RedisShardOf); else routed mode, routes[i] the shard
  // of keys[i].
  Status Insert(std::span<const uint32_t> routes, std::span<const std::string_view> keys,
                std::span<const KeyHash> hashes, std::span<const std::string_view> payloads,
                std::span<bool> is_new);
  Result<bool> ContainsHashed(const KeyHash& hash);
  // `routes`: each key's shard (a routed set), or empty (by hash).
  Result<uint64_t> DeleteAll();  // RedisSeenSet::DeleteAll
  Status Forget(std::span<const uint32_t> routes, std::span<const KeyHash> hashes,
                std::span<bool> forgotten);
  Result<std::vector<std::string>> UncommittedClaims();
  Status CheckpointCommitted(uint64_t generation);
  SeenStats Stats();
  Result<RedisSeenSetUsage> Usage();

  const StateParameters& parameters() const { return parameters_; }
  const StateIdentity& identity() const { return identity_; }
  bool has_claim_log() const { return !options_.claim_log.empty(); }
  bool routed() const { return routed_; }
  std::string What() const { return "the Redis seen set \"" + options_.name + "\""; }
  uint64_t round_trips() const { return round_trips_.load(std::memory_order_relaxed); }
  uint64_t keys_sent() const { return keys_sent_.load(std::memory_order_relaxed); }

 private:
  std::string MetaKey() const { return "urlsieve:{" + options_.name + "}:meta"; }
  std::string ShardPrefix(uint32_t shard) const {
    return RedisShardKeyPrefix(options_.name, shard);
  }
  std::string CountKey(uint32_t shard) const { return ShardPrefix(shard) + "count"; }
  // Routed mode: the shard's new-key stream (RedisNewKeyStream), when the options name one.
  bool has_stream() const { return routed_ && !options_.new_key_stream.suffix.empty(); }
  std::string InboxKey(uint32_t shard) const {
    return ShardPrefix(shard) + options_.new_key_stream.suffix;
  }
  std::string EpochKey() const { return "urlsieve:{" + options_.name + "}:forgets"; }
  std::string ClaimsKey(uint32_t shard) const {
    return ShardPrefix(shard) + "claims:" + options_.claim_log;
  }
  const char* ExactArg() const { return parameters_.exact ? "1" : "0"; }

  bool generational() const { return parameters_.revisit_after_s > 0; }
  uint32_t unit() const { return parameters_.deletable ? 4 : 1; }
  bool can_forget() const { return parameters_.exact || parameters_.deletable; }
  uint64_t span_ms() const {
    return std::max<uint64_t>(1, parameters_.revisit_after_s * 1000 / parameters_.generations);
  }
  // Now in the set's time line (ms): the client clock's unix time when there is one (it is also
  // the time the Function uses), else this process's steady clock (the front cache's deadlines
  // are then local: sent time + what the server said was left).
  uint64_t LocalNowMs() const;
  // The "now" argument of a generational call: the client clock's time, or "" (the server's).
  std::string NowArg(uint64_t local_now_ms) const {
    return options_.clock != nullptr ? std::to_string(local_now_ms) : "";
  }

  // --- redis_seen_set_open.cc
  // The options as given, before anything is sent: InvalidArgument naming what is wrong.
  Status CheckOpenOptions() const;
  // TYPE and HGETALL of the meta key: *exists false when there is none (a key of another type:
  // FailedPrecondition); else the stored set adopted.
  Status ReadStoredSet(RedisClient& client, bool* exists);
  // Creates the set as requested (its layout, identity and meta hash) and adopts what is stored
  // then (another process may have created it at the same time).
  Status CreateSet(RedisClient& client, std::vector<SeenNotice>* notices);
  // The set's layout for what is requested, on `client`'s servers.
  Result<RedisSeenLayout> ChooseLayout(RedisClient& client, const StateParameters& wanted);
  // The stored metadata from an HGETALL reply: Corruption / Unsupported when it is not ours.
  Status AdoptMeta(const std::map<std::string, std::string, std::less<>>& meta);
  // Routed mode as asked (RedisSeenSetOptions::routed, shards) against the stored set's:
  // FailedPrecondition naming both when they differ (a read-only open takes the stored one).
  Status CheckRouting(const std::string& server) const;
  std::vector<std::string> MetaFields() const;
  // FCALL create: the meta hash unless it exists; the stored one.
  Result<std::map<std::string, std::string, std::less<>>> CreateMeta(RedisClient& client);
  Status LoadLibrary(RedisClient& client);
  // Sets module_: options_.server_module, a layered set of bits, and every master knows the
  // module's insert (URLSIEVE.INSERT, or URLSIEVE.INSERT_ROUTED for a routed set).
  Status DetectModule(RedisClient& client);
  // *found (when given): the first of the set's shard keys that exists, "" when none does.
  Status CheckKeyTypes(RedisClient& client, bool meta_too, std::string* found = nullptr);
  Status InitShards(RedisClient& client, const std::vector<uint32_t>& shards);
  // The meta field "ready", written once every shard of a new set exists: from then on a missing
  // shard is data the set lost, not a shard to make.
  Status MarkReady(RedisClient& client);
  // FCALL check on each shard of a ready set: a lost shard or filter string is an error, or with
  // accept_loss made again (a kLossAccepted notice each).
  Status CheckShards(RedisClient& client, const std::vector<uint32_t>& shards,
                     std::vector<SeenNotice>* notices);
  // accept_loss on a set whose metadata was lost: the keys left of it (`orphan` one of them)
  // deleted, with a notice.
  Status DeleteOrphans(RedisClient& client, const std::string& orphan,
                       std::vector<SeenNotice>* notices);
  // Deletes every key of the set (KeyNames); how many there were.
  Result<uint64_t> DeleteKeys(RedisClient& client);
  // A master whose maxmemory-policy may evict the set's keys: a kWarning notice, or in exact mode
  // (without accept_loss) FailedPrecondition.
  Status CheckEvictionPolicy(RedisClient& client, std::vector<SeenNotice>* notices);
  // A notice per stored parameter that differs from the requested one.
  void NoteStoredParameters(std::vector<SeenNotice>* notices) const;

  // The error of a lost shard (NOINIT after the set was made) and of any other error reply to a
  // shard call (LOST, IDENTITY, CORRUPT: kCorruption; the rest as RedisErrorStatus).
  Status LostShardError(const std::string& server, const std::string& key) const;
  Status ShardCallError(RedisClient& client, const std::string& what,
                        const RedisReply& reply) const;

  // --- redis_seen_set_calls.cc
  // WaitForReplicas on the masters of `shards` (docs/features/redis-seen-set.md, "Failover").
  Status WaitForShardReplicas(RedisClient& client, const std::vector<uint32_t>& shards);
  // Sends `commands` in pipelines of `chunk`; (*replies)[i] answers commands[i] (error replies
  // included). A failed pipeline is the error.
  Status PipelineInChunks(RedisClient& client, std::span<const RedisCommand> commands, size_t chunk,
                          std::vector<RedisReply>* replies);
  Result<std::unique_ptr<PooledClient>> Acquire();
  void Release(std::unique_ptr<PooledClient> client);
  // "<identity>/<instance>:<slot>": the function refuses a writing call on a shard of another
  // identity (the set deleted and made again while this process had it open).
  std::string NewToken() {
    return identity_.ToHex() + "/" + instance_ + ":" +
           std::to_string(next_slot_.fetch_add(1, std::memory_order_relaxed));
  }
  // Runs build(i) (one FCALL on shards[i]) for each i until each has an answer, with the
  // retries above; (*answers)[i] is its verdict string. A shard with more layers than the call
  // gave offsets for answers STALE: its hint is updated and the call built again.
  Status RunShardCalls(PooledClient& pooled, const std::vector<uint32_t>& shards,
                       const std::function<RedisCommand(size_t)>& build,
                       std::vector<std::string>* answers);
  // The layers to give a shard's call offsets for: those the shard had at its last answer, and
  // more while the call's `keys` might not fit in them.
  uint32_t Provided(uint32_t shard, size_t keys) const;
  void UpdateHint(uint32_t shard, uint64_t layers, uint64_t count);
  // One round of RunShardCalls: what the replies to the calls `todo` asked for.
  struct ShardRound {
    std::vector<size_t> again;  // calls without an answer yet
    bool need_library = false;  // "Function not found"
    bool stale = false;         // a STALE answer: the call was built again
  };
  // RunShardCalls' steps: the replies read into answers and `round`; a transient error (a retry
  // may cure it) into *transient; any other error returned.
  Status ReadShardReplies(RedisClient& client, const std::vector<uint32_t>& shards,
                          const std::function<RedisCommand(size_t)>& build,
                          const std::vector<size_t>& todo, std::vector<RedisReply>& replies,
                          std::vector<RedisCommand>& commands, std::vector<std::string>* answers,
                          ShardRound* round, Status* transient);
  // The function library loaded again (once per RunShardCalls: `reloaded`). A shard is never made
  // again by a call: a missing one is data the set lost (LostShardError).
  Status ReloadLibrary(RedisClient& client, bool* reloaded);
  void RememberPending(PendingBatch batch);
  bool TakePending(const XXH128_hash_t& digest, PendingBatch* out);
  // A batch whose calls failed (some may have run): kept for the caller's retry, and the
  // connection's next calls go under a new token, so that they do not overwrite the answers kept
  // under the old one.
  void KeepFailedBatch(std::unique_ptr<PooledClient> pooled, PendingBatch batch);

  // --- redis_seen_set_insert.cc
  Status CheckInsertArguments(std::span<const uint32_t> routes,
                              std::span<const std::string_view> keys,
                              std::span<const KeyHash> hashes,
                              std::span<const std::string_view> payloads,
                              std::span<const bool> is_new) const;
  // The front cache's view of the forgetting epoch, read when the set can forget (else 0).
  Result<uint64_t> ValidateCache(RedisClient& client);
  // The batch to send: the one kept from a failed run of the same keys, or a new one of the keys
  // the front cache does not know, grouped by shard.
  PendingBatch PlanInsert(std::span<const uint32_t> routes, std::span<const KeyHash> hashes,
                          PooledClient& pooled);
  // What every shard call of one Insert shares.
  struct InsertCall {
    const PendingBatch& batch;
    std::span<const std::string_view> keys;
    std::span<const KeyHash> hashes;
    std::span<const std::string_view> payloads;  // empty: the keys are the payloads
    bool routing;
    bool with_payload;       // claiming or routed
    std::string seq;         // batch.seq
    std::string generation;  // the claim log's building generation
    std::string now;         // NowArg(batch.sent_ms)
  };
  // Shard c's call: the FCALL of insert / insert_routed / insert_gen, or where module_ the
  // server module's URLSIEVE.INSERT / INSERT_ROUTED (BuildModuleInsertCall).
  RedisCommand BuildInsertCall(const InsertCall& call, size_t c) const;
  RedisCommand BuildModuleInsertCall(const InsertCall& call, size_t c) const;
  // The verdicts into is_new, and what they taught into the front cache.
  Status ApplyInsertAnswers(const PendingBatch& batch, const std::vector<std::string>& answers,
                            std::span<const KeyHash> hashes, uint64_t epoch,
                            std::span<bool> is_new);
  Status ApplyGenerationalAnswers(const PendingBatch& batch,
                                  const std::vector<std::string>& answers,
                                  std::span<const KeyHash> hashes, uint64_t epoch,
                                  std::span<bool> is_new);

  // --- redis_seen_set_forget.cc
  // The forgetting epoch (0 when no Forget ever ran), for a front cache over a set that can forget.
  Result<uint64_t> ReadEpoch(RedisClient& client);
  PendingBatch PlanForget(std::span<const uint32_t> routes, std::span<const KeyHash> hashes,
                          PooledClient& pooled);
  RedisCommand BuildForgetCall(const PendingBatch& batch, size_t c, const std::string& seq,
                               const std::string& now, std::span<const KeyHash> hashes) const;
  Status BumpEpoch(RedisClient& client);

  // --- redis_seen_set_stats.cc
  // A shard's layers (or live generations) as (shard, layer, count), with a BITCOUNT each.
  struct LayerLoad {
    uint32_t shard;
    uint32_t layer;
    uint64_t count;
  };
  void CollectLoads(const std::vector<RedisReply>& states, SeenStats* stats,
                    std::vector<LayerLoad>* loads, std::vector<RedisCommand>* bitcounts) const;
  void SumLoads(const std::vector<LayerLoad>& loads, const std::vector<RedisReply>& bitcounts,
                SeenStats* stats) const;
  // Every key name the set may have (not the transient done:TOKEN answers).
  Result<std::vector<std::string>> KeyNames(RedisClient& client);
  Status AddInboxUsage(RedisClient& client, RedisSeenSetUsage* usage);

  RedisSeenSetOptions options_;
  std::string instance_;  // random, per process and set: the prefix of the function's tokens
  StateParameters parameters_;
  StateIdentity identity_;
  uint32_t shards_ = 1;
  bool routed_ = false;  // as stored
  bool ready_ = false;   // the meta's "ready": every shard was made
  // Inserts go to the server module (DetectModule at open; cleared when a master answers it does
  // not know the command, so that the batch is sent again to the Function).
  std::atomic<bool> module_{false};
  std::vector<RedisBloomLayer> layers_;
  std::string layer_table_;
  std::unique_ptr<RedisFrontCache> cache_;
  // Per shard, its layers and its newest layer's count as of its last answer to this process.
  struct ShardHint {
    std::atomic<uint32_t> layers{1};
    std::atomic<uint64_t> count{0};
  };
  std::unique_ptr<ShardHint[]> hints_;

  std::mutex pool_mu_;
  std::vector<std::unique_ptr<PooledClient>> idle_;
  std::atomic<uint64_t> next_slot_{0};

  std::mutex pending_mu_;
  std::deque<PendingBatch> pending_;

  std::atomic<uint64_t> building_generation_{1};
  uint64_t forget_seed_ = 0x666f7267657421;  // the digest seed of a Forget batch
  std::atomic<uint64_t> round_trips_{0};
  std::atomic<uint64_t> keys_sent_{0};
};

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_REDIS_SEEN_SET_IMPL_H_
