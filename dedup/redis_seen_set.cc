#include "dedup/redis_seen_set.h"

#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>
#include <utility>

#include "base/strings.h"
#include "dedup/bloom/bloom_math.h"
#include "dedup/redis/redis_front_cache.h"
#include "dedup/redis/redis_seen_function.h"
#include "dedup/redis/redis_seen_layout.h"
#include "redis/redis_client.h"

namespace urlsieve {
namespace {

constexpr const char* kFormat = "urlsieve-redis-seen-set";
constexpr const char* kVersion = "1";
// Sets with generations or counters: a build that predates them must refuse such a set.
constexpr const char* kVersionTimed = "2";
constexpr uint32_t kMaxGenerations = 64;

// Retries of a shard call whose connection failed, inside one call of the set (same token and
// sequence number, so a call that did run is answered as it was): the back-off before each.
constexpr int kRetryDelaysMs[] = {25, 100, 300, 500};
// A failed batch is remembered this long, for the caller's retry of it (the function keeps its
// answer for 300 s).
constexpr auto kPendingLifetime = std::chrono::seconds(240);
constexpr size_t kMaxPending = 256;
// MEMORY USAGE and other per-key commands go in pipelines of this many.
constexpr size_t kPipelineChunk = 1000;

std::string ShortDouble(double value) {
  char buffer[40];
  std::snprintf(buffer, sizeof(buffer), "%g", value);
  return buffer;
}

bool ValidName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

bool TextHas(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

bool ParseUint(std::string_view text, uint64_t* out) {
  const std::optional<uint64_t> value = ParseUint64(text);
  if (value) *out = *value;
  return value.has_value();
}

// A hash reply (HGETALL) as a map.
std::map<std::string, std::string> AsMap(const RedisReply& reply) {
  std::map<std::string, std::string> out;
  for (size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
    out[reply.elements[i].str] = reply.elements[i + 1].str;
  }
  return out;
}

RedisCommand Command(std::vector<std::string> argv, int key_index = 1) {
  return RedisCommand{std::move(argv), key_index};
}

// One pooled connection: a client, and the token the function records its answers under. A
// client whose call failed gets a new token (its old one stays with the failed batch).
struct PooledClient {
  std::unique_ptr<RedisClient> client;
  std::string token;
  uint64_t seq = 0;
};

// A batch whose call failed, kept for the caller's retry of the same keys: the same shard parts
// under the same token and sequence number make the function answer as the first run did, if it
// ran.
struct PendingBatch {
  XXH128_hash_t digest;
  std::string token;
  uint64_t seq = 0;
  // Per shard of the batch (ascending, each once): the shard and its keys' indexes in the batch.
  std::vector<std::pair<uint32_t, std::vector<uint32_t>>> parts;
  std::chrono::steady_clock::time_point failed_at;
  uint64_t sent_ms = 0;  // LocalNowMs() when it was first sent (a generational set's time)
};

// A generational answer, "<now> <cur> <verdicts>": the time the Function used, its current
// generation, and per key '1' (new) or 'A' + the age of the generation holding it.
bool ParseGenAnswer(const std::string& answer, uint64_t* now, uint64_t* cur,
                    std::string_view* verdicts) {
  const size_t first = answer.find(' ');
  if (first == std::string::npos) return false;
  const size_t second = answer.find(' ', first + 1);
  if (second == std::string::npos) return false;
  if (!ParseUint(answer.substr(0, first), now) ||
      !ParseUint(answer.substr(first + 1, second - first - 1), cur)) {
    return false;
  }
  *verdicts = std::string_view(answer).substr(second + 1);
  return true;
}

}  // namespace

class RedisSeenSet::Impl {
 public:
  Impl(const RedisSeenSetOptions& options, std::string instance)
      : options_(options), instance_(std::move(instance)) {}

  Status OpenSet(std::vector<SeenNotice>* notices);

  // `routes` empty: the set's own sharding (RedisShardOf); else routed mode, routes[i] the shard
  // of keys[i].
  Status Insert(std::span<const uint32_t> routes, std::span<const std::string_view> keys,
                std::span<const KeyHash> hashes, std::span<const std::string_view> payloads,
                std::span<bool> is_new);
  Result<bool> ContainsHashed(const KeyHash& hash);
  Status Forget(std::span<const KeyHash> hashes, std::span<bool> forgotten);
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
  std::string InboxKey(uint32_t shard) const { return RedisInboxKey(options_.name, shard); }
  std::string EpochKey() const { return "urlsieve:{" + options_.name + "}:forgets"; }

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
  // The forgetting epoch (0 when no Forget ever ran), for a front cache over a set that can forget.
  Result<uint64_t> ReadEpoch(RedisClient& client);

  Result<std::unique_ptr<PooledClient>> Acquire();
  void Release(std::unique_ptr<PooledClient> client);
  std::string NewToken() {
    return instance_ + ":" + std::to_string(next_slot_.fetch_add(1, std::memory_order_relaxed));
  }

  // The stored metadata from an HGETALL reply: Corruption / Unsupported when it is not ours.
  Status AdoptMeta(const std::map<std::string, std::string>& meta);
  // Routed mode as asked (RedisSeenSetOptions::routed, shards) against the stored set's:
  // FailedPrecondition naming both when they differ (a read-only open takes the stored one).
  Status CheckRouting(const std::string& server) const;
  std::vector<std::string> MetaFields() const;
  Status LoadLibrary(RedisClient& client);
  Status CheckKeyTypes(RedisClient& client, bool meta_too);
  Status InitShards(RedisClient& client, const std::vector<uint32_t>& shards);

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

  void RememberPending(PendingBatch batch);
  bool TakePending(const XXH128_hash_t& digest, PendingBatch* out);

  RedisSeenSetOptions options_;
  std::string instance_;  // random, per process and set: the prefix of the function's tokens
  StateParameters parameters_;
  StateIdentity identity_;
  uint32_t shards_ = 1;
  bool routed_ = false;  // as stored
  std::vector<RedisBloomLayer> layers_;
  std::string layer_table_;
  std::map<std::string, std::string> meta_;  // as stored
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

std::vector<std::string> RedisSeenSet::Impl::MetaFields() const {
  std::vector<std::string> fields = {
      "format",       kFormat,
      "version",      kVersion,
      "identity",     identity_.ToHex(),
      "capacity",     std::to_string(parameters_.capacity),
      "fp_rate",      FormatDouble(parameters_.fp_rate),
      "exact",        parameters_.exact ? "1" : "0",
      "canonicalize", EncodeStoredCanonicalize(parameters_.canonicalize),
      "shards",       std::to_string(shards_),
      "layers",       layer_table_};
  // Only a set with time or counters has these (and version 2).
  if (parameters_.revisit_after_s > 0 || parameters_.deletable) {
    fields[3] = kVersionTimed;
    fields.push_back("revisit_after");
    fields.push_back(std::to_string(parameters_.revisit_after_s));
    fields.push_back("generations");
    fields.push_back(std::to_string(parameters_.generations));
    fields.push_back("deletable");
    fields.push_back(parameters_.deletable ? "1" : "0");
  }
  // Only a routed set has the field: an unrouted one stays as earlier builds wrote it.
  if (routed_) {
    fields.push_back("routed");
    fields.push_back("1");
  }
  return fields;
}

Status RedisSeenSet::Impl::AdoptMeta(const std::map<std::string, std::string>& meta) {
  const std::string where = options_.address.ToString() + ": " + MetaKey();
  auto field = [&](const char* name) -> const std::string* {
    auto it = meta.find(name);
    return it == meta.end() ? nullptr : &it->second;
  };
  const std::string* format = field("format");
  if (format == nullptr || *format != kFormat) {
    return Status::Corruption(where + " is not the metadata of a urlsieve seen set (format " +
                              (format ? "\"" + *format + "\"" : std::string("missing")) + ")");
  }
  const std::string* version = field("version");
  if (version == nullptr || (*version != kVersion && *version != kVersionTimed)) {
    return Status::Unsupported(where + " is a urlsieve seen set of format version " +
                               (version ? *version : std::string("(missing)")) +
                               "; this build reads versions " + kVersion + " and " + kVersionTimed);
  }
  auto bad = [&](const char* name) {
    return Status::Corruption(where + ": unreadable field '" + name + "'");
  };
  StateParameters p;
  StateIdentity identity;
  uint64_t shards = 0;
  const std::string* text = field("identity");
  if (text == nullptr) return bad("identity");
  auto id = StateIdentity::FromHex(*text);
  if (!id.ok()) return bad("identity");
  identity = *id;
  if ((text = field("capacity")) == nullptr || !ParseUint(*text, &p.capacity) || p.capacity == 0) {
    return bad("capacity");
  }
  if ((text = field("fp_rate")) == nullptr) return bad("fp_rate");
  char* end = nullptr;
  p.fp_rate = std::strtod(text->c_str(), &end);
  if (end == text->c_str() || *end != '\0' || !(p.fp_rate > 0 && p.fp_rate < 1)) {
    return bad("fp_rate");
  }
  if ((text = field("exact")) == nullptr || (*text != "0" && *text != "1")) return bad("exact");
  p.exact = *text == "1";
  if ((text = field("canonicalize")) == nullptr) return bad("canonicalize");
  auto canonicalize = DecodeStoredCanonicalize(*text);
  if (!canonicalize.ok()) {
    return Status(canonicalize.status().code(), where + ": " + canonicalize.status().message());
  }
  p.canonicalize = *canonicalize;
  if ((text = field("shards")) == nullptr || !ParseUint(*text, &shards) || shards == 0 ||
      shards > 4096) {
    return bad("shards");
  }
  bool routed = false;
  if (const std::string* flag = field("routed"); flag != nullptr) {
    if (*flag != "0" && *flag != "1") return bad("routed");
    routed = *flag == "1";
  }
  if (*version == kVersionTimed) {
    uint64_t value = 0;
    if ((text = field("revisit_after")) == nullptr || !ParseUint(*text, &p.revisit_after_s)) {
      return bad("revisit_after");
    }
    if ((text = field("generations")) == nullptr || !ParseUint(*text, &value) ||
        value > kMaxGenerations || (p.revisit_after_s > 0 && value == 0)) {
      return bad("generations");
    }
    p.generations = static_cast<uint32_t>(value);
    if ((text = field("deletable")) == nullptr || (*text != "0" && *text != "1")) {
      return bad("deletable");
    }
    p.deletable = *text == "1";
    if (p.revisit_after_s == 0) p.generations = 0;
  }
  if ((text = field("layers")) == nullptr) return bad("layers");
  auto layers = RedisSeenLayout::DecodeLayers(*text);
  if (!layers.ok()) return Status::Corruption(where + ": " + layers.status().message());
  parameters_ = p;
  identity_ = identity;
  shards_ = static_cast<uint32_t>(shards);
  routed_ = routed;
  layers_ = std::move(layers).value();
  for (uint32_t l = 0; l < layers_.size(); ++l) layers_[l].fp_rate = RedisLayerFpRate(p.fp_rate, l);
  if (p.revisit_after_s > 0) {
    if (layers_.size() != 1 || routed) {
      return Status::Corruption(where +
                                ": a generational set has one generation geometry and "
                                "is not routed");
    }
    layers_[0].fp_rate = p.fp_rate / (p.generations + 1);
  }
  layer_table_ = *text;
  meta_ = meta;
  return Status::Ok();
}

Status RedisSeenSet::Impl::CheckRouting(const std::string& server) const {
  if (options_.read_only) return Status::Ok();
  auto describe = [](bool routed, uint32_t shards) {
    return routed ? "routed with " + std::to_string(shards) + " shards"
                  : std::string("not routed (") + std::to_string(shards) + " shards)";
  };
  if (routed_ == options_.routed && (!routed_ || shards_ == options_.shards)) return Status::Ok();
  const std::string asked = options_.routed
                                ? "a routed set of " + std::to_string(options_.shards) + " shards"
                                : std::string("a set that is not routed");
  return Status::FailedPrecondition(server + ": " + What() + " is " + describe(routed_, shards_) +
                                    ", but it was opened as " + asked +
                                    (routed_ || options_.routed
                                         ? " (a crawl cluster's partition count is fixed when "
                                           "it is created)"
                                         : ""));
}

Status RedisSeenSet::Impl::LoadLibrary(RedisClient& client) {
  std::vector<RedisReply> replies;
  URLSIEVE_RETURN_IF_ERROR(client.OnEveryMaster(
      Command({"FUNCTION", "LOAD", "REPLACE", RedisSeenLibrarySource()}, -1), &replies));
  round_trips_.fetch_add(1, std::memory_order_relaxed);
  for (const RedisReply& reply : replies) {
    if (!reply.is_error()) continue;
    if (TextHas(reply.str, "unknown command") || TextHas(reply.str, "unknown subcommand")) {
      return Status::FailedPrecondition(
          client.server() + ": this Redis has no Functions (FUNCTION LOAD: " + reply.str +
          "); the seen set needs Redis 7 or later");
    }
    return RedisErrorStatus(client.server(), "loading the urlsieve function library", reply);
  }
  return Status::Ok();
}

// Every key the set would create must be absent or of the set's type: a name holding other data
// is refused before anything is written.
Status RedisSeenSet::Impl::CheckKeyTypes(RedisClient& client, bool meta_too) {
  std::vector<RedisCommand> commands;
  std::vector<std::pair<std::string, std::string>> expected;  // key, type
  if (meta_too) expected.push_back({MetaKey(), "hash"});
  for (uint32_t s = 0; s < shards_; ++s) {
    expected.push_back({CountKey(s), "hash"});
    expected.push_back({ShardPrefix(s) + "bloom:0", "string"});
    if (routed_) expected.push_back({InboxKey(s), "stream"});
  }
  for (const auto& [key, type] : expected) commands.push_back(Command({"TYPE", key}));
  std::vector<RedisReply> replies;
  for (size_t begin = 0; begin < commands.size(); begin += kPipelineChunk) {
    const size_t end = std::min(commands.size(), begin + kPipelineChunk);
    std::vector<RedisReply> part;
    URLSIEVE_RETURN_IF_ERROR(
        client.Pipeline(std::span(commands).subspan(begin, end - begin), &part));
    round_trips_.fetch_add(1, std::memory_order_relaxed);
    for (RedisReply& reply : part) replies.push_back(std::move(reply));
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    const RedisReply& reply = replies[i];
    if (reply.is_error())
      return RedisErrorStatus(client.server(), "TYPE " + expected[i].first, reply);
    if (reply.str != "none" && reply.str != expected[i].second) {
      return Status::FailedPrecondition(
          client.server() + ": key " + expected[i].first + " holds a " + reply.str + ", not the " +
          expected[i].second + " of " + What() + ": choose another name");
    }
  }
  return Status::Ok();
}

Status RedisSeenSet::Impl::InitShards(RedisClient& client, const std::vector<uint32_t>& shards) {
  // The metadata first (again, if a restart without persistence lost it): the same identity, or
  // another process recreated the set and this one must stop.
  std::vector<std::string> argv = {"FCALL", kRedisSeenCreate, "1", MetaKey()};
  for (std::string& field : MetaFields()) argv.push_back(std::move(field));
  auto created = client.Run(Command(std::move(argv), 3));
  round_trips_.fetch_add(1, std::memory_order_relaxed);
  if (!created.ok()) return created.status();
  if (created->is_error()) {
    return RedisErrorStatus(client.server(), "creating the metadata of " + What(), *created);
  }
  const auto stored = AsMap(*created);
  auto it = stored.find("identity");
  if (it == stored.end() || it->second != identity_.ToHex()) {
    return Status::FailedPrecondition(
        client.server() + ": " + MetaKey() + " now belongs to another set (identity " +
        (it == stored.end() ? std::string("missing") : it->second) + ", this one is " +
        identity_.ToHex() + "): it was deleted and created again");
  }
  std::vector<RedisCommand> commands;
  for (uint32_t s : shards) {
    std::vector<std::string> init = {"FCALL",     kRedisSeenInit, "1",
                                     CountKey(s), layer_table_,   identity_.ToHex()};
    if (unit() != 1 || generational()) init.push_back(std::to_string(unit()));
    if (generational()) {
      init.push_back(std::to_string(span_ms()));
      init.push_back(std::to_string(parameters_.generations));
    }
    commands.push_back(Command(std::move(init), 3));
  }
  for (size_t begin = 0; begin < commands.size(); begin += 64) {
    const size_t end = std::min(commands.size(), begin + 64);
    std::vector<RedisReply> replies;
    URLSIEVE_RETURN_IF_ERROR(
        client.Pipeline(std::span(commands).subspan(begin, end - begin), &replies));
    round_trips_.fetch_add(1, std::memory_order_relaxed);
    for (size_t i = 0; i < replies.size(); ++i) {
      if (replies[i].is_error()) {
        const std::string what = "initializing " + commands[begin + i].argv[3];
        if (replies[i].str.starts_with("IDENTITY") || replies[i].str.starts_with("CORRUPT")) {
          return Status::Corruption(client.server() + ": " + what + ": " + replies[i].str);
        }
        return RedisErrorStatus(client.server(), what, replies[i]);
      }
    }
  }
  return Status::Ok();
}

Status RedisSeenSet::Impl::OpenSet(std::vector<SeenNotice>* notices) {
  const std::string server = options_.address.ToString();
  if (!ValidName(options_.name)) {
    return Status::InvalidArgument("Redis seen set name \"" + options_.name +
                                   "\": use 1-64 characters of A-Z a-z 0-9 _ . -");
  }
  const StateParameters& asked = options_.requested;
  if (options_.routed && (asked.revisit_after_s > 0 || asked.deletable)) {
    return Status::InvalidArgument(
        "opening " + What() +
        " routed: a crawl cluster's set has no revisit_after and is not deletable (not built: "
        "its inboxes would need to forget too)");
  }
  if (asked.revisit_after_s > 0 && (asked.generations < 1 || asked.generations > kMaxGenerations)) {
    return Status::InvalidArgument("opening " + What() + ": generations " +
                                   std::to_string(asked.generations) + " is outside 1.." +
                                   std::to_string(kMaxGenerations));
  }
  if (options_.routed && !options_.read_only) {
    if (options_.shards == 0) {
      return Status::InvalidArgument("opening " + What() +
                                     " routed: its shard count (the cluster's partitions) is "
                                     "required");
    }
    if (!options_.claim_log.empty()) {
      return Status::InvalidArgument("opening " + What() +
                                     " routed: a routed set has no claim log (its inboxes "
                                     "hold the new keys)");
    }
  }
  auto first = Acquire();
  if (!first.ok()) {
    const Status& s = first.status();
    return Status(s.code(), "opening " + What() + ": " + s.message());
  }
  std::unique_ptr<PooledClient> pooled = std::move(first).value();
  RedisClient& client = *pooled->client;

  auto type = client.Run(Command({"TYPE", MetaKey()}));
  round_trips_.fetch_add(1, std::memory_order_relaxed);
  if (!type.ok()) return type.status();
  if (type->is_error()) return RedisErrorStatus(server, "TYPE " + MetaKey(), *type);
  bool exists = type->str == "hash";
  if (type->str != "none" && !exists) {
    return Status::FailedPrecondition(server + ": key " + MetaKey() + " holds a " + type->str +
                                      ", not the metadata hash of " + What() +
                                      ": choose another name");
  }
  if (exists) {
    auto meta = client.Run(Command({"HGETALL", MetaKey()}));
    round_trips_.fetch_add(1, std::memory_order_relaxed);
    if (!meta.ok()) return meta.status();
    if (meta->is_error()) return RedisErrorStatus(server, "HGETALL " + MetaKey(), *meta);
    URLSIEVE_RETURN_IF_ERROR(AdoptMeta(AsMap(*meta)));
    URLSIEVE_RETURN_IF_ERROR(CheckRouting(server));
    URLSIEVE_RETURN_IF_ERROR(CheckKeyTypes(client, /*meta_too=*/false));
  } else {
    if (options_.read_only) {
      return Status::NotFound(server + ": there is no " + What() + " (no key " + MetaKey() + ")");
    }
    const StateParameters& requested = options_.requested;
    // Shards spread a set over a cluster's masters; on one server they only split batches
    // (redis_seen_layout.h).
    uint32_t spread = 1;
    if (client.is_cluster()) {
      std::vector<RedisReply> pongs;
      URLSIEVE_RETURN_IF_ERROR(client.OnEveryMaster(Command({"PING"}, -1), &pongs));
      round_trips_.fetch_add(1, std::memory_order_relaxed);
      spread = static_cast<uint32_t>(std::min<size_t>(4 * std::max<size_t>(pongs.size(), 1), 4096));
    }
    // A routed shard holds a partition of hosts: its first layer keeps a floor
    // (redis_seen_layout.h).
    StateParameters wanted = requested;
    if (wanted.exact && wanted.deletable) {
      // Exact mode forgets by deleting the record: its Bloom filter need not count.
      wanted.deletable = false;
      notices->push_back({SeenNotice::Kind::kStoredParameters,
                          "Redis seen set \"" + options_.name +
                              "\": exact mode forgets by deleting the key's record: the filter "
                              "is not made deletable (counting)"});
    }
    if (wanted.revisit_after_s == 0) wanted.generations = 0;
    // A generational set: one geometry for every generation, capacity/G keys at ε/(G+1) (the
    // layout's layer 0 takes 0.9 of the ε it is given).
    const uint64_t gens = wanted.generations;
    auto layout =
        wanted.revisit_after_s > 0
            ? ChooseRedisSeenLayout((requested.capacity + gens - 1) / gens,
                                    requested.fp_rate / (gens + 1) / 0.9, options_.shards, spread)
            : ChooseRedisSeenLayout(requested.capacity, requested.fp_rate, options_.shards, spread,
                                    options_.routed ? kRoutedMinShardKeys : 0,
                                    options_.routed ? kRoutedGrowthShift : 1);
    if (!layout.ok()) {
      return Status(layout.status().code(),
                    "creating " + What() + ": " + layout.status().message());
    }
    if (wanted.revisit_after_s > 0) layout->layers.resize(1);
    if (wanted.deletable) {
      while (!layout->layers.empty() && layout->layers.back().blocks > kMaxCountingLayerBlocks) {
        layout->layers.pop_back();
      }
      if (layout->layers.empty()) {
        return Status::InvalidArgument("creating " + What() + ": capacity " +
                                       std::to_string(requested.capacity) + " over " +
                                       std::to_string(layout->shards) +
                                       " shards needs counter strings above 512 MiB: use more "
                                       "shards");
      }
    }
    auto identity = StateIdentity::Random();
    if (!identity.ok()) return identity.status();
    parameters_ = wanted;
    identity_ = *identity;
    shards_ = layout->shards;
    routed_ = options_.routed;
    layers_ = layout->layers;
    layer_table_ = layout->EncodeLayers();
    URLSIEVE_RETURN_IF_ERROR(CheckKeyTypes(client, /*meta_too=*/true));
    URLSIEVE_RETURN_IF_ERROR(LoadLibrary(client));
    // Atomic: of two processes creating the set at once, one writes it and both adopt it.
    std::vector<std::string> argv = {"FCALL", kRedisSeenCreate, "1", MetaKey()};
    for (std::string& field : MetaFields()) argv.push_back(std::move(field));
    auto created = client.Run(Command(std::move(argv), 3));
    round_trips_.fetch_add(1, std::memory_order_relaxed);
    if (!created.ok()) return created.status();
    if (created->is_error()) {
      return RedisErrorStatus(server, "creating the metadata of " + What(), *created);
    }
    URLSIEVE_RETURN_IF_ERROR(AdoptMeta(AsMap(*created)));
    // Another process may have created it at the same time, otherwise.
    URLSIEVE_RETURN_IF_ERROR(CheckRouting(server));
    exists = true;
  }
  if (!options_.read_only) {
    URLSIEVE_RETURN_IF_ERROR(LoadLibrary(client));
    std::vector<uint32_t> all(shards_);
    for (uint32_t s = 0; s < shards_; ++s) all[s] = s;
    URLSIEVE_RETURN_IF_ERROR(InitShards(client, all));
  }

  const StateParameters& requested = options_.requested;
  const std::string prefix = "Redis seen set \"" + options_.name + "\": ";
  if (parameters_.capacity != requested.capacity || parameters_.fp_rate != requested.fp_rate) {
    notices->push_back(
        {SeenNotice::Kind::kStoredParameters,
         prefix + "using the stored capacity " + std::to_string(parameters_.capacity) +
             " and fp-rate " + ShortDouble(parameters_.fp_rate) + " (requested " +
             std::to_string(requested.capacity) + ", " + ShortDouble(requested.fp_rate) + ")"});
  }
  if (parameters_.exact != requested.exact) {
    notices->push_back(
        {SeenNotice::Kind::kStoredParameters,
         prefix + (parameters_.exact ? "the set is exact (created with exact mode): staying exact"
                                     : "the set was created without exact mode, so it holds no "
                                       "fingerprints of the earlier keys: staying Bloom-only")});
  }
  if (EncodeStoredCanonicalize(parameters_.canonicalize) !=
      EncodeStoredCanonicalize(requested.canonicalize)) {
    notices->push_back({SeenNotice::Kind::kStoredParameters,
                        prefix + "using the stored canonicalizer options (" +
                            EncodeStoredCanonicalize(parameters_.canonicalize) + ")"});
  }
  if (parameters_.revisit_after_s != requested.revisit_after_s ||
      (requested.revisit_after_s > 0 && parameters_.generations != requested.generations)) {
    notices->push_back({SeenNotice::Kind::kStoredParameters,
                        prefix + "using the stored revisit_after " +
                            std::to_string(parameters_.revisit_after_s) + " s in " +
                            std::to_string(parameters_.generations) + " generations (requested " +
                            std::to_string(requested.revisit_after_s) + " s in " +
                            std::to_string(requested.generations) + ")"});
  }
  if (parameters_.deletable != requested.deletable && !(requested.exact && parameters_.exact)) {
    notices->push_back(
        {SeenNotice::Kind::kStoredParameters,
         prefix + (parameters_.deletable ? "the set is deletable (counting): staying deletable"
                                         : "the set was created without --deletable: it cannot "
                                           "become a counting filter")});
  }
  hints_ = std::make_unique<ShardHint[]>(shards_);
  if (options_.front_cache_keys > 0) {
    cache_ = std::make_unique<RedisFrontCache>(options_.front_cache_keys, generational());
  }
  building_generation_.store(options_.committed_generation + 1);
  Release(std::move(pooled));
  return Status::Ok();
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
  bool reinitialized = false;
  size_t transient_failures = 0;
  size_t stale_rounds = 0;
  Status last;
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
    std::vector<size_t> again;
    bool need_library = false;
    bool stale = false;
    std::vector<uint32_t> need_init;
    if (status.ok()) {
      for (size_t j = 0; j < todo.size(); ++j) {
        RedisReply& reply = replies[j];
        const size_t i = todo[j];
        if (!reply.is_error()) {
          if (reply.type != RedisReply::Type::kArray || reply.elements.size() != 3 ||
              reply.elements[0].type != RedisReply::Type::kString) {
            return Status::Corruption(client.server() + ": " + What() + ": " + commands[i].argv[1] +
                                      " on " + commands[i].argv[3] +
                                      " answered something else than [verdicts, layers, count]");
          }
          (*answers)[i] = std::move(reply.elements[0].str);
          UpdateHint(shards[i], static_cast<uint64_t>(std::max(0LL, reply.elements[1].integer)),
                     static_cast<uint64_t>(std::max(0LL, reply.elements[2].integer)));
          continue;
        }
        again.push_back(i);
        if (reply.str.starts_with("STALE ")) {
          unsigned long long layers = 0;
          unsigned long long count = 0;
          if (std::sscanf(reply.str.c_str(), "STALE %llu %llu", &layers, &count) != 2) {
            return Status::Corruption(client.server() + ": " + What() + ": " + reply.str);
          }
          UpdateHint(shards[i], layers, count);
          commands[i] = build(i);
          stale = true;
        } else if (TextHas(reply.str, "Function not found")) {
          need_library = true;
        } else if (reply.str.starts_with("NOINIT")) {
          need_init.push_back(shards[i]);
        } else {
          Status error = RedisErrorStatus(
              client.server(), "running " + commands[i].argv[1] + " on " + commands[i].argv[3],
              reply);
          if (error.code() != StatusCode::kUnavailable) return error;
          status = error;  // BUSY, LOADING, ...: retried below
        }
      }
    }
    if (!status.ok()) {
      // A lost connection, a timeout or a transient error reply: back off and retry the calls
      // without an answer under the same token and sequence number.
      last = status;
      if (transient_failures >= std::size(kRetryDelaysMs)) return last;
      std::this_thread::sleep_for(std::chrono::milliseconds(kRetryDelaysMs[transient_failures]));
      ++transient_failures;
      if (again.empty()) again = todo;
      todo = std::move(again);
      continue;
    }
    if (stale && ++stale_rounds > layers_.size() + 2) {
      return Status::Corruption(client.server() + ": " + What() +
                                ": a shard keeps answering STALE");
    }
    if (need_library) {
      if (reloaded) {
        return Status::FailedPrecondition(client.server() + ": " + What() +
                                          ": the function library is still missing after "
                                          "FUNCTION LOAD");
      }
      reloaded = true;
      URLSIEVE_RETURN_IF_ERROR(LoadLibrary(client));
    }
    if (!need_init.empty()) {
      if (reinitialized) {
        return Status::Corruption(client.server() + ": " + What() +
                                  ": a shard is still not initialized after initializing it");
      }
      reinitialized = true;
      std::sort(need_init.begin(), need_init.end());
      need_init.erase(std::unique(need_init.begin(), need_init.end()), need_init.end());
      URLSIEVE_RETURN_IF_ERROR(LoadLibrary(client));
      URLSIEVE_RETURN_IF_ERROR(InitShards(client, need_init));
    }
    todo = std::move(again);
  }
  return Status::Ok();
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

Status RedisSeenSet::Impl::Insert(std::span<const uint32_t> routes,
                                  std::span<const std::string_view> keys,
                                  std::span<const KeyHash> hashes,
                                  std::span<const std::string_view> payloads,
                                  std::span<bool> is_new) {
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
  std::fill(is_new.begin(), is_new.end(), false);
  if (n == 0) return Status::Ok();
  if (options_.read_only) {
    return Status::FailedPrecondition(What() + " is open read-only");
  }
  const bool claiming = has_claim_log();

  auto acquired = Acquire();
  if (!acquired.ok()) return acquired.status();
  std::unique_ptr<PooledClient> pooled = std::move(acquired).value();
  // A set that can forget: the front cache holds only what it learned under Redis's current
  // forgetting epoch (redis_front_cache.h).
  uint64_t epoch = 0;
  if (cache_ != nullptr && can_forget()) {
    auto read = ReadEpoch(*pooled->client);
    if (!read.ok()) {
      Release(std::move(pooled));
      return read.status();
    }
    epoch = *read;
    cache_->Validate(epoch);
  }

  // The same batch again after a failure (the caller's retry) goes out as it went then.
  XXH128_hash_t digest = XXH3_128bits(hashes.data(), n * sizeof(KeyHash));
  if (routing) {  // the shards too, seeded with the hashes' digest
    digest =
        XXH3_128bits_withSeed(routes.data(), n * sizeof(uint32_t), digest.low64 ^ digest.high64);
  }
  PendingBatch batch;
  const bool retry = TakePending(digest, &batch);
  if (!retry) {
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
    for (const auto& [shard, i] : order) {
      if (batch.parts.empty() || batch.parts.back().first != shard)
        batch.parts.push_back({shard, {}});
      batch.parts.back().second.push_back(i);
    }
  }
  if (!retry) {
    batch.token = pooled->token;
    batch.seq = ++pooled->seq;
  }
  const std::string generation = std::to_string(building_generation_.load());
  const std::string seq = std::to_string(batch.seq);
  std::vector<uint32_t> shards;
  shards.reserve(batch.parts.size());
  size_t sent = 0;
  for (const auto& [shard, part] : batch.parts) {
    shards.push_back(shard);
    sent += part.size();
  }
  keys_sent_.fetch_add(sent, std::memory_order_relaxed);
  const bool with_payload = claiming || routing;
  const std::string now_arg = options_.clock != nullptr ? std::to_string(batch.sent_ms) : "";
  auto build = [&](size_t c) {
    const uint32_t s = shards[c];
    const std::vector<uint32_t>& part = batch.parts[c].second;
    const uint32_t provided = generational() ? 1 : Provided(s, part.size());
    RedisCommand command;
    command.key_index = 3;
    std::vector<std::string>& argv = command.argv;
    size_t per_key = (parameters_.exact ? 1 : 0) + (with_payload ? 1 : 0);
    for (uint32_t l = 0; l < provided; ++l)
      per_key += layers_[l].bits + (parameters_.exact ? 1 : 0);
    argv.reserve(10 + part.size() * per_key);
    if (generational()) {
      argv = {"FCALL",
              kRedisSeenInsertGen,
              "1",
              CountKey(s),
              parameters_.exact ? "1" : "0",
              batch.token,
              seq,
              options_.claim_log,
              generation,
              now_arg};
    } else if (routing) {
      argv = {"FCALL",
              kRedisSeenInsertRouted,
              "2",
              CountKey(s),
              InboxKey(s),
              parameters_.exact ? "1" : "0",
              batch.token,
              seq,
              std::string(kRedisInboxGroup),
              std::to_string(provided)};
    } else {
      argv = {"FCALL",
              kRedisSeenInsert,
              "1",
              CountKey(s),
              parameters_.exact ? "1" : "0",
              batch.token,
              seq,
              options_.claim_log,
              generation,
              std::to_string(provided)};
    }
    for (uint32_t i : part) {
      std::string_view payload;
      if (with_payload) payload = payloads.empty() ? keys[i] : payloads[i];
      AppendRedisKeyArguments(hashes[i], layers_, provided, parameters_.exact,
                              with_payload ? &payload : nullptr, &argv, unit());
    }
    return command;
  };
  std::vector<std::string> answers;
  Status status = shards.empty() ? Status::Ok() : RunShardCalls(*pooled, shards, build, &answers);
  if (!status.ok()) {
    // Some calls may have run: keep the batch for the caller's retry, and give this connection a
    // new token so that its next batches do not overwrite the answers kept under the old one.
    batch.failed_at = std::chrono::steady_clock::now();
    pooled->token = NewToken();
    pooled->seq = 0;
    RememberPending(std::move(batch));
    Release(std::move(pooled));
    return status;
  }
  Release(std::move(pooled));
  for (size_t c = 0; c < shards.size() && generational(); ++c) {
    // Each key is remembered until its generation ages out, in this process's time line: the
    // time sent + what was left at the Function's time (redis_front_cache.h).
    const std::vector<uint32_t>& part = batch.parts[c].second;
    uint64_t now = 0;
    uint64_t cur = 0;
    std::string_view verdicts;
    if (!ParseGenAnswer(answers[c], &now, &cur, &verdicts) || verdicts.size() != part.size()) {
      return Status::Corruption(options_.address.ToString() + ": " + What() + ": shard " +
                                std::to_string(shards[c]) + " answered \"" +
                                answers[c].substr(0, 80) + "\" for " + std::to_string(part.size()) +
                                " keys");
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
  for (size_t c = 0; c < shards.size() && !generational(); ++c) {
    const std::vector<uint32_t>& part = batch.parts[c].second;
    const std::string& answer = answers[c];
    if (answer.size() != part.size()) {
      return Status::Corruption(options_.address.ToString() + ": " + What() + ": shard " +
                                std::to_string(shards[c]) + " answered " +
                                std::to_string(answer.size()) + " verdicts for " +
                                std::to_string(part.size()) + " keys");
    }
    for (size_t j = 0; j < part.size(); ++j) is_new[part[j]] = answer[j] == '1';
  }
  if (cache_ != nullptr && !generational()) {
    for (const auto& [shard, part] : batch.parts) {
      for (uint32_t i : part) cache_->Insert(hashes[i], RedisFrontCache::kForever, epoch);
    }
  }
  return Status::Ok();
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

Result<uint64_t> RedisSeenSet::Impl::ReadEpoch(RedisClient& client) {
  auto reply = client.Run(Command({"GET", EpochKey()}));
  round_trips_.fetch_add(1, std::memory_order_relaxed);
  if (!reply.ok()) return reply.status();
  if (reply->is_error()) return RedisErrorStatus(client.server(), "GET " + EpochKey(), *reply);
  if (reply->type == RedisReply::Type::kNil) return uint64_t{0};
  uint64_t epoch = 0;
  if (!ParseUint(reply->str, &epoch)) {
    return Status::Corruption(client.server() + ": " + EpochKey() + " holds \"" +
                              reply->str.substr(0, 40) + "\", not a forgetting epoch");
  }
  return epoch;
}

Status RedisSeenSet::Impl::Forget(std::span<const KeyHash> hashes, std::span<bool> forgotten) {
  const size_t n = hashes.size();
  if (forgotten.size() != n) {
    return Status::InvalidArgument(What() + ": keys, hashes and answers differ in size");
  }
  std::fill(forgotten.begin(), forgotten.end(), false);
  if (routed_) {
    return Status::InvalidArgument(What() + " is routed (a crawl cluster's): it cannot forget");
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
  const XXH128_hash_t digest =
      XXH3_128bits_withSeed(hashes.data(), n * sizeof(KeyHash), forget_seed_);
  PendingBatch batch;
  if (!TakePending(digest, &batch)) {
    batch.digest = digest;
    batch.sent_ms = LocalNowMs();
    // A key twice in the batch is forgotten once (its second "forgotten" is false): a second
    // decrement would take counts from other keys.
    std::vector<std::pair<uint32_t, uint32_t>> order;
    for (size_t i = 0; i < n; ++i) {
      order.emplace_back(RedisShardOf(hashes[i], shards_), static_cast<uint32_t>(i));
    }
    std::sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
      const KeyHash& x = hashes[a.second];
      const KeyHash& y = hashes[b.second];
      return std::tie(a.first, x.high, x.low, a.second) <
             std::tie(b.first, y.high, y.low, b.second);
    });
    for (size_t j = 0; j < order.size(); ++j) {
      const auto [shard, i] = order[j];
      if (j > 0 && hashes[order[j - 1].second] == hashes[i]) continue;
      if (batch.parts.empty() || batch.parts.back().first != shard)
        batch.parts.push_back({shard, {}});
      batch.parts.back().second.push_back(i);
    }
    batch.token = pooled->token;
    batch.seq = ++pooled->seq;
  }
  const std::string seq = std::to_string(batch.seq);
  const std::string now_arg = options_.clock != nullptr ? std::to_string(batch.sent_ms) : "";
  std::vector<uint32_t> shards;
  for (const auto& part : batch.parts) shards.push_back(part.first);
  auto build = [&](size_t c) {
    const uint32_t s = shards[c];
    const uint32_t provided = generational() ? 1 : Provided(s, 0);
    RedisCommand command;
    command.key_index = 3;
    if (generational()) {
      command.argv = {"FCALL",
                      kRedisSeenForgetGen,
                      "1",
                      CountKey(s),
                      parameters_.exact ? "1" : "0",
                      batch.token,
                      seq,
                      now_arg};
    } else {
      command.argv = {"FCALL",
                      kRedisSeenForget,
                      "1",
                      CountKey(s),
                      parameters_.exact ? "1" : "0",
                      batch.token,
                      seq,
                      std::to_string(provided)};
    }
    for (uint32_t i : batch.parts[c].second) {
      AppendRedisKeyArguments(hashes[i], layers_, provided, parameters_.exact, nullptr,
                              &command.argv, unit());
    }
    return command;
  };
  std::vector<std::string> answers;
  Status status = RunShardCalls(*pooled, shards, build, &answers);
  if (status.ok()) {
    // Every front cache must stop answering these keys: the epoch moves after the deletions.
    auto bumped = pooled->client->Run(Command({"INCR", EpochKey()}));
    round_trips_.fetch_add(1, std::memory_order_relaxed);
    if (!bumped.ok()) {
      status = bumped.status();
    } else if (bumped->is_error()) {
      status = RedisErrorStatus(pooled->client->server(), "INCR " + EpochKey(), *bumped);
    }
  }
  if (!status.ok()) {
    // Some calls may have run: kept for the caller's retry (answered as they were), and this
    // connection's next calls go under a new token.
    batch.failed_at = std::chrono::steady_clock::now();
    pooled->token = NewToken();
    pooled->seq = 0;
    RememberPending(std::move(batch));
    Release(std::move(pooled));
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
  const std::string now_arg = options_.clock != nullptr ? std::to_string(LocalNowMs()) : "";
  auto build = [&](size_t) {
    const auto provided = generational()
                              ? 1
                              : std::clamp<uint32_t>(hints_[shard].layers.load(), 1,
                                                     static_cast<uint32_t>(layers_.size()));
    RedisCommand command;
    command.key_index = 3;
    command.argv = {"FCALL",
                    generational() ? kRedisSeenContainsGen : kRedisSeenContains,
                    "1",
                    CountKey(shard),
                    parameters_.exact ? "1" : "0",
                    generational() ? now_arg : std::to_string(provided)};
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

Result<std::vector<std::string>> RedisSeenSet::Impl::UncommittedClaims() {
  std::vector<std::string> claims;
  if (!has_claim_log()) return claims;
  auto acquired = Acquire();
  if (!acquired.ok()) return acquired.status();
  std::unique_ptr<PooledClient> pooled = std::move(acquired).value();
  std::vector<RedisCommand> commands;
  for (uint32_t s = 0; s < shards_; ++s) {
    commands.push_back(
        Command({"LRANGE", ShardPrefix(s) + "claims:" + options_.claim_log, "0", "-1"}));
  }
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
      if (space == std::string::npos || !ParseUint(entry.str.substr(0, space), &generation)) {
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
  for (uint32_t s = 0; s < shards_; ++s) {
    commands.push_back(Command({"DEL", ShardPrefix(s) + "claims:" + options_.claim_log}));
  }
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

SeenStats RedisSeenSet::Impl::Stats() {
  SeenStats stats;
  stats.capacity = parameters_.capacity;
  stats.fp_rate = parameters_.fp_rate;
  stats.exact = parameters_.exact;
  stats.deletable = parameters_.deletable;
  stats.identity = identity_;
  stats.generation = has_claim_log() ? building_generation_.load() - 1 : 0;
  auto acquired = Acquire();
  if (!acquired.ok()) return stats;
  std::unique_ptr<PooledClient> pooled = std::move(acquired).value();
  RedisClient& client = *pooled->client;
  std::vector<RedisCommand> commands;
  for (uint32_t s = 0; s < shards_; ++s) commands.push_back(Command({"HGETALL", CountKey(s)}));
  std::vector<RedisReply> states;
  Status status = client.Pipeline(commands, &states);
  round_trips_.fetch_add(1, std::memory_order_relaxed);
  if (!status.ok()) {
    Release(std::move(pooled));
    return stats;
  }
  struct LayerLoad {
    uint32_t shard;
    uint32_t layer;
    uint64_t count;
  };
  std::vector<LayerLoad> loads;
  commands.clear();
  // A generational set: the live generations' counts (fields g<index> of the newest G + 1 a
  // shard has), each a filter of the one geometry.
  for (uint32_t s = 0; s < shards_ && generational(); ++s) {
    auto state = AsMap(states[s]);
    uint64_t value = 0;
    if (ParseUint(state["maybe"], &value)) stats.maybe_lookups += value;
    if (ParseUint(state["fp"], &value)) stats.false_positives += value;
    std::map<uint64_t, uint64_t> gens;
    for (const auto& [name, text] : state) {
      uint64_t index = 0;
      if (name.size() > 1 && name[0] == 'g' && ParseUint(name.substr(1), &index) &&
          ParseUint(text, &value)) {
        gens[index] = value;
      }
    }
    if (gens.empty()) continue;
    const uint64_t newest = gens.rbegin()->first;
    uint32_t live = 0;
    for (const auto& [index, count] : gens) {
      if (index + parameters_.generations < newest) continue;
      ++live;
      loads.push_back({s, 0, count});
      commands.push_back(Command({"BITCOUNT", ShardPrefix(s) + "gen:" + std::to_string(index)}));
    }
    stats.bloom_layers = std::max(stats.bloom_layers, live);
  }
  for (uint32_t s = 0; s < shards_ && !generational(); ++s) {
    auto state = AsMap(states[s]);
    uint64_t layers = 0;
    uint64_t count = 0;
    if (!ParseUint(state["layers"], &layers) || layers == 0) continue;
    layers = std::min<uint64_t>(layers, layers_.size());
    uint64_t value = 0;
    if (ParseUint(state["maybe"], &value)) stats.maybe_lookups += value;
    if (ParseUint(state["fp"], &value)) stats.false_positives += value;
    stats.bloom_layers = std::max<uint32_t>(stats.bloom_layers, static_cast<uint32_t>(layers));
    for (uint32_t l = 0; l < layers; ++l) {
      const bool newest = l + 1 == layers;
      if (!ParseUint(state[newest ? std::string("count") : 'n' + std::to_string(l)], &count))
        count = 0;
      loads.push_back({s, l, count});
      commands.push_back(Command({"BITCOUNT", ShardPrefix(s) + "bloom:" + std::to_string(l)}));
    }
  }
  std::vector<RedisReply> bitcounts;
  for (size_t begin = 0; begin < commands.size() && status.ok(); begin += kPipelineChunk) {
    const size_t end = std::min(commands.size(), begin + kPipelineChunk);
    std::vector<RedisReply> part;
    status = client.Pipeline(std::span(commands).subspan(begin, end - begin), &part);
    round_trips_.fetch_add(1, std::memory_order_relaxed);
    for (RedisReply& reply : part) bitcounts.push_back(std::move(reply));
  }
  Release(std::move(pooled));
  std::vector<double> shard_pass(shards_, 1.0);  // probability a fresh key passes no layer
  uint64_t set_bits = 0;
  for (size_t i = 0; i < loads.size(); ++i) {
    const RedisBloomLayer& layer = layers_[loads[i].layer];
    stats.bloom_inserted += loads[i].count;
    stats.bloom_capacity += layer.capacity;
    stats.bloom_bytes += layer.blocks * 64 * unit();
    if (i < bitcounts.size() && bitcounts[i].type == RedisReply::Type::kInteger) {
      set_bits += static_cast<uint64_t>(bitcounts[i].integer);
    }
    BloomLayout layout;
    layout.num_blocks = layer.blocks;
    layout.bits_per_line = layer.bits;
    shard_pass[loads[i].shard] *= 1 - BlockedFalsePositiveRate(layout, loads[i].count);
  }
  if (stats.bloom_bytes > 0 && unit() == 1) {  // (a counting filter's BITCOUNT is no fill)
    stats.bloom_fill_ratio = static_cast<double>(set_bits) / (stats.bloom_bytes * 8.0);
  }
  double fp = 0;
  for (double pass : shard_pass) fp += 1 - pass;
  stats.bloom_expected_fp_rate = fp / shards_;
  if (parameters_.exact) stats.stored_keys = stats.bloom_inserted;
  return stats;
}

Result<RedisSeenSetUsage> RedisSeenSet::Impl::Usage() {
  auto acquired = Acquire();
  if (!acquired.ok()) return acquired.status();
  std::unique_ptr<PooledClient> pooled = std::move(acquired).value();
  RedisClient& client = *pooled->client;
  RedisSeenSetUsage usage;
  std::vector<RedisReply> replies;
  Status status = client.OnEveryMaster(Command({"PING"}, -1), &replies);
  if (!status.ok()) return status;
  usage.masters = replies.size();
  // Every key the set may have: its metadata, and per shard its state, layers, buckets and claim
  // log. (The function's per-connection answer records, `done:<token>`, expire within 300 s and
  // are not counted.)
  std::vector<std::string> names = {MetaKey(), EpochKey()};
  std::vector<RedisCommand> commands;
  for (uint32_t s = 0; s < shards_; ++s) {
    commands.push_back(generational() ? Command({"HKEYS", CountKey(s)})
                                      : Command({"HGET", CountKey(s), "layers"}));
  }
  status = client.Pipeline(commands, &replies);
  round_trips_.fetch_add(1, std::memory_order_relaxed);
  if (!status.ok()) return status;
  for (uint32_t s = 0; s < shards_; ++s) {
    const std::string prefix = ShardPrefix(s);
    names.push_back(prefix + "count");
    if (has_claim_log()) names.push_back(prefix + "claims:" + options_.claim_log);
    // A generational shard: the generations its counts name (an expired one is no key).
    for (const RedisReply& field :
         generational() ? replies[s].elements : std::vector<RedisReply>()) {
      uint64_t index = 0;
      if (field.str.size() < 2 || field.str[0] != 'g' || !ParseUint(field.str.substr(1), &index)) {
        continue;
      }
      const std::string gen = prefix + "gen:" + std::to_string(index);
      names.push_back(gen);
      for (uint64_t b = 0; parameters_.exact && b < layers_[0].buckets; ++b) {
        names.push_back(gen + ":fp:" + std::to_string(b));
      }
    }
    if (generational()) continue;
    uint64_t layers = 0;
    if (!ParseUint(replies[s].str, &layers)) continue;
    layers = std::min<uint64_t>(layers, layers_.size());
    for (uint32_t l = 0; l < layers; ++l) {
      names.push_back(prefix + "bloom:" + std::to_string(l));
      if (!parameters_.exact) continue;
      for (uint64_t b = 0; b < layers_[l].buckets; ++b) {
        names.push_back(prefix + "fp:" + std::to_string(l) + ":" + std::to_string(b));
      }
    }
  }
  for (size_t begin = 0; begin < names.size(); begin += kPipelineChunk) {
    const size_t end = std::min(names.size(), begin + kPipelineChunk);
    commands.clear();
    for (size_t i = begin; i < end; ++i) {
      commands.push_back(Command({"MEMORY", "USAGE", names[i], "SAMPLES", "0"}, 2));
    }
    status = client.Pipeline(commands, &replies);
    round_trips_.fetch_add(1, std::memory_order_relaxed);
    if (!status.ok()) return status;
    for (size_t i = 0; i < replies.size(); ++i) {
      if (replies[i].is_error()) {
        return RedisErrorStatus(client.server(), "MEMORY USAGE " + names[begin + i], replies[i]);
      }
      if (replies[i].type != RedisReply::Type::kInteger) continue;  // no such key
      usage.bytes += static_cast<uint64_t>(replies[i].integer);
      ++usage.keys;
    }
  }
  // A routed set's inboxes: the crawl cluster's work queue, counted apart from the set.
  for (uint32_t begin = 0; routed_ && begin < shards_; begin += kPipelineChunk / 2) {
    const uint32_t end = std::min<uint32_t>(shards_, begin + kPipelineChunk / 2);
    commands.clear();
    for (uint32_t s = begin; s < end; ++s) {
      commands.push_back(Command({"XLEN", InboxKey(s)}));
      commands.push_back(Command({"MEMORY", "USAGE", InboxKey(s), "SAMPLES", "0"}, 2));
    }
    status = client.Pipeline(commands, &replies);
    round_trips_.fetch_add(1, std::memory_order_relaxed);
    if (!status.ok()) return status;
    for (size_t i = 0; i + 1 < replies.size(); i += 2) {
      for (size_t j = i; j < i + 2; ++j) {
        if (replies[j].is_error()) {
          return RedisErrorStatus(client.server(),
                                  commands[j].argv[0] + " " + commands[j].argv.back(), replies[j]);
        }
      }
      if (replies[i + 1].type != RedisReply::Type::kInteger) continue;  // no such stream
      ++usage.inbox_streams;
      usage.inbox_entries += static_cast<uint64_t>(std::max(0LL, replies[i].integer));
      usage.inbox_bytes += static_cast<uint64_t>(replies[i + 1].integer);
    }
  }
  Release(std::move(pooled));
  return usage;
}

// RedisSeenSet

Result<std::unique_ptr<RedisSeenSet>> RedisSeenSet::Open(const RedisSeenSetOptions& options,
                                                         std::vector<SeenNotice>* notices) {
  std::vector<SeenNotice> ignored;
  if (notices == nullptr) notices = &ignored;
  auto random = StateIdentity::Random();
  if (!random.ok()) return random.status();
  auto impl = std::make_unique<Impl>(options, random->ToHex().substr(0, 16));
  URLSIEVE_RETURN_IF_ERROR(impl->OpenSet(notices));
  return std::unique_ptr<RedisSeenSet>(new RedisSeenSet(std::move(impl)));
}

std::string RedisShardKeyPrefix(std::string_view name, uint32_t shard) {
  std::string out = "urlsieve:{";
  out += name;
  out += ':';
  out += std::to_string(shard);
  out += "}:";
  return out;
}

std::string RedisInboxKey(std::string_view name, uint32_t shard) {
  return RedisShardKeyPrefix(name, shard) + "inbox";
}

RedisSeenSet::RedisSeenSet(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RedisSeenSet::~RedisSeenSet() = default;

Status RedisSeenSet::InsertHashedIfNew(std::span<const std::string_view> keys,
                                       std::span<const KeyHash> hashes, std::span<bool> is_new) {
  return impl_->Insert({}, keys, hashes, {}, is_new);
}

Status RedisSeenSet::InsertHashedIfNewClaiming(std::span<const std::string_view> keys,
                                               std::span<const KeyHash> hashes,
                                               std::span<const std::string_view> payloads,
                                               std::span<bool> is_new) {
  return impl_->Insert({}, keys, hashes, payloads, is_new);
}

Status RedisSeenSet::InsertRouted(std::span<const uint32_t> shards,
                                  std::span<const std::string_view> keys,
                                  std::span<const KeyHash> hashes,
                                  std::span<const std::string_view> payloads,
                                  std::span<bool> is_new) {
  if (!impl_->routed()) {
    return Status::InvalidArgument(impl_->What() +
                                   " is not routed: InsertRouted is for a set opened routed");
  }
  return impl_->Insert(shards, keys, hashes, payloads, is_new);
}

Status RedisSeenSet::ForgetHashed(std::span<const std::string_view> keys,
                                  std::span<const KeyHash> hashes, std::span<bool> forgotten) {
  if (keys.size() != hashes.size()) {
    return Status::InvalidArgument(impl_->What() + ": keys and hashes differ in size");
  }
  return impl_->Forget(hashes, forgotten);
}

Result<std::vector<std::string>> RedisSeenSet::UncommittedClaims() const {
  return impl_->UncommittedClaims();
}

Result<bool> RedisSeenSet::ContainsHashed(std::string_view, const KeyHash& hash) const {
  return impl_->ContainsHashed(hash);
}

SeenStats RedisSeenSet::Stats() const { return impl_->Stats(); }
StateIdentity RedisSeenSet::identity() const { return impl_->identity(); }

Status RedisSeenSet::Save() {
  if (impl_->has_claim_log()) {
    return Status::FailedPrecondition(
        "the Redis seen set of a crawl is checkpointed by the crawl: Save is not its to call");
  }
  return Status::Ok();
}

Status RedisSeenSet::PrepareCheckpoint(SqliteDb&, uint64_t) { return Status::Ok(); }

Status RedisSeenSet::CheckpointCommitted(uint64_t generation) {
  return impl_->CheckpointCommitted(generation);
}

const StateParameters& RedisSeenSet::parameters() const { return impl_->parameters(); }
Result<RedisSeenSetUsage> RedisSeenSet::Usage() const { return impl_->Usage(); }
uint64_t RedisSeenSet::round_trips() const { return impl_->round_trips(); }
uint64_t RedisSeenSet::keys_sent() const { return impl_->keys_sent(); }

}  // namespace urlsieve
