// Opening a RedisSeenSet (redis_seen_set_impl.h): the options checked, the meta hash read or the
// set created (layout, identity, meta hash), the Function library loaded, the shards initialized,
// and a notice per stored parameter that differs from the requested one.
#include <algorithm>
#include <cstdio>

#include "dedup/redis/redis_seen_function.h"
#include "dedup/redis_seen_set_impl.h"

namespace urlsieve {

using namespace redis_seen_internal;

namespace {

constexpr const char* kFormat = "urlsieve-redis-seen-set";
// Versions 1 and 2 are read; a set is made as version 3, or 4 with generations or counters (the
// time fields of version 2): its shards' layer-0 strings are made by their first inserts (count
// hash field `unmade`), which a build that predates them would take for lost data.
constexpr const char* kVersion = "1";
constexpr const char* kVersionTimed = "2";
constexpr const char* kVersionUnmade = "3";
constexpr const char* kVersionUnmadeTimed = "4";
constexpr uint32_t kMaxGenerations = 64;

std::string ShortDouble(double value) {
  char buffer[40];
  std::snprintf(buffer, sizeof(buffer), "%g", value);
  return buffer;
}

}  // namespace

Status RedisSeenSet::Impl::OpenSet(std::vector<SeenNotice>* notices) {
  URLSIEVE_RETURN_IF_ERROR(CheckOpenOptions());
  auto first = Acquire();
  if (!first.ok()) {
    const Status& s = first.status();
    return Status(s.code(), "opening " + What() + ": " + s.message());
  }
  std::unique_ptr<PooledClient> pooled = std::move(first).value();
  RedisClient& client = *pooled->client;
  bool exists = false;
  URLSIEVE_RETURN_IF_ERROR(ReadStoredSet(client, &exists));
  if (!exists) {
    if (options_.read_only) {
      return Status::NotFound(client.server() + ": there is no " + What() + " (no key " +
                              MetaKey() + ")");
    }
    URLSIEVE_RETURN_IF_ERROR(CreateSet(client, notices));
  }
  if (!options_.read_only) {
    URLSIEVE_RETURN_IF_ERROR(CheckEvictionPolicy(client, notices));
    URLSIEVE_RETURN_IF_ERROR(LoadLibrary(client));
    URLSIEVE_RETURN_IF_ERROR(DetectModule(client));
    std::vector<uint32_t> all(shards_);
    for (uint32_t s = 0; s < shards_; ++s) all[s] = s;
    if (ready_) {
      URLSIEVE_RETURN_IF_ERROR(CheckShards(client, all, notices));
    } else {
      // A set being created (here or by another process), or one whose creation stopped half-way:
      // its shards made, then the set marked ready. From then on a missing shard is a loss.
      URLSIEVE_RETURN_IF_ERROR(InitShards(client, all));
      URLSIEVE_RETURN_IF_ERROR(MarkReady(client));
    }
  }
  NoteStoredParameters(notices);
  hints_ = std::make_unique<ShardHint[]>(shards_);
  if (options_.front_cache_keys > 0) {
    cache_ = std::make_unique<RedisFrontCache>(options_.front_cache_keys, generational());
  }
  building_generation_.store(options_.committed_generation + 1);
  pooled->token = NewToken();  // made before the identity was known
  Release(std::move(pooled));
  return Status::Ok();
}

Status RedisSeenSet::Impl::CheckOpenOptions() const {
  if (!IsValidRedisSetName(options_.name)) {
    return Status::InvalidArgument("Redis seen set name \"" + options_.name +
                                   "\": use 1-64 characters of A-Z a-z 0-9 _ . -");
  }
  const StateParameters& asked = options_.requested;
  if (options_.routed && asked.revisit_after_s > 0) {
    return Status::InvalidArgument(
        "opening " + What() +
        " routed: a crawl cluster's set has no revisit_after (a crawl's time is its re-crawl)");
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
    if (options_.new_key_stream.suffix.empty() || options_.new_key_stream.group.empty()) {
      return Status::InvalidArgument("opening " + What() +
                                     " routed: the stream its new keys go to is required "
                                     "(new_key_stream)");
    }
  }
  return Status::Ok();
}

Status RedisSeenSet::Impl::ReadStoredSet(RedisClient& client, bool* exists) {
  const std::string& server = client.server();
  auto type = client.Run(Command({"TYPE", MetaKey()}));
  round_trips_.fetch_add(1, std::memory_order_relaxed);
  if (!type.ok()) return type.status();
  if (type->is_error()) return RedisErrorStatus(server, "TYPE " + MetaKey(), *type);
  *exists = type->str == "hash";
  if (type->str != "none" && !*exists) {
    return Status::FailedPrecondition(server + ": key " + MetaKey() + " holds a " + type->str +
                                      ", not the metadata hash of " + What() +
                                      ": choose another name");
  }
  if (!*exists) return Status::Ok();
  auto meta = client.Run(Command({"HGETALL", MetaKey()}));
  round_trips_.fetch_add(1, std::memory_order_relaxed);
  if (!meta.ok()) return meta.status();
  if (meta->is_error()) return RedisErrorStatus(server, "HGETALL " + MetaKey(), *meta);
  URLSIEVE_RETURN_IF_ERROR(AdoptMeta(AsMap(*meta)));
  URLSIEVE_RETURN_IF_ERROR(CheckRouting(server));
  return CheckKeyTypes(client, /*meta_too=*/false);
}

Status RedisSeenSet::Impl::CreateSet(RedisClient& client, std::vector<SeenNotice>* notices) {
  StateParameters wanted = options_.requested;
  if (wanted.exact && wanted.deletable) {
    // Exact mode forgets by deleting the record: its Bloom filter need not count.
    wanted.deletable = false;
    notices->push_back({SeenNotice::Kind::kStoredParameters,
                        "Redis seen set \"" + options_.name +
                            "\": exact mode forgets by deleting the key's record: the filter "
                            "is not made deletable (counting)"});
  }
  if (wanted.revisit_after_s == 0) wanted.generations = 0;
  auto layout = ChooseLayout(client, wanted);
  if (!layout.ok()) return layout.status();
  auto identity = StateIdentity::Random();
  if (!identity.ok()) return identity.status();
  parameters_ = wanted;
  identity_ = *identity;
  shards_ = layout->shards;
  routed_ = options_.routed;
  layers_ = layout->layers;
  layer_table_ = layout->EncodeLayers();
  std::string orphan;
  URLSIEVE_RETURN_IF_ERROR(CheckKeyTypes(client, /*meta_too=*/true, &orphan));
  if (!orphan.empty()) {
    // Shards without metadata: another process created the set meanwhile, or its metadata was
    // lost (deleted, evicted). Never a new identity over the old set's keys.
    bool exists = false;
    URLSIEVE_RETURN_IF_ERROR(ReadStoredSet(client, &exists));
    if (exists) return Status::Ok();
    if (!options_.accept_loss) {
      return Status::Corruption(
          client.server() + ": " + MetaKey() + " is missing but " + What() + "'s key " + orphan +
          " exists: the set lost its metadata (deleted or evicted); nothing was changed. Opened "
          "with accept_loss (--accept-loss), the set's remaining keys are deleted and it starts "
          "again empty");
    }
    URLSIEVE_RETURN_IF_ERROR(DeleteOrphans(client, orphan, notices));
  }
  URLSIEVE_RETURN_IF_ERROR(LoadLibrary(client));
  // Atomic: of two processes creating the set at once, one writes it and both adopt it.
  auto stored = CreateMeta(client);
  if (!stored.ok()) return stored.status();
  URLSIEVE_RETURN_IF_ERROR(AdoptMeta(*stored));
  // Another process may have created it at the same time, otherwise.
  return CheckRouting(client.server());
}

Result<RedisSeenLayout> RedisSeenSet::Impl::ChooseLayout(RedisClient& client,
                                                         const StateParameters& wanted) {
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
  // A generational set: one geometry for every generation, capacity/G keys at ε/(G+1) (the
  // layout's layer 0 takes 0.9 of the ε it is given). A routed shard holds a partition of hosts:
  // its first layer keeps a floor (redis_seen_layout.h).
  const uint64_t gens = wanted.generations;
  auto layout =
      wanted.revisit_after_s > 0
          ? ChooseRedisSeenLayout((requested.capacity + gens - 1) / gens,
                                  requested.fp_rate / (gens + 1) / 0.9, options_.shards, spread)
          : ChooseRedisSeenLayout(requested.capacity, requested.fp_rate, options_.shards, spread,
                                  options_.routed ? kRoutedMinShardKeys : 0,
                                  options_.routed ? kRoutedGrowthShift : 1);
  if (!layout.ok()) {
    return Status(layout.status().code(), "creating " + What() + ": " + layout.status().message());
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
  return layout;
}

std::vector<std::string> RedisSeenSet::Impl::MetaFields() const {
  std::vector<std::string> fields = {
      "format",   kFormat,
      "version",  HasStoredTimeFields(parameters_) ? kVersionUnmadeTimed : kVersionUnmade,
      "identity", identity_.ToHex()};
  // The parameters (redis_seen_set.h's order: the core ones, shards and layers, then those of a
  // set with time or counters, which only it has).
  const FieldList parameters = EncodeStoredParameters(parameters_, StoredTimeFields::kAllOrNone);
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (i == kStoredCoreFields) {
      fields.insert(fields.end(), {"shards", std::to_string(shards_), "layers", layer_table_});
    }
    fields.push_back(parameters[i].first);
    fields.push_back(parameters[i].second);
  }
  if (parameters.size() == kStoredCoreFields) {
    fields.insert(fields.end(), {"shards", std::to_string(shards_), "layers", layer_table_});
  }
  // Only a routed set has the field: an unrouted one stays as earlier builds wrote it.
  if (routed_) fields.insert(fields.end(), {"routed", "1"});
  return fields;
}

Status RedisSeenSet::Impl::AdoptMeta(const std::map<std::string, std::string, std::less<>>& meta) {
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
  if (version == nullptr || (*version != kVersion && *version != kVersionTimed &&
                             *version != kVersionUnmade && *version != kVersionUnmadeTimed)) {
    return Status::Unsupported(where + " is a urlsieve seen set of format version " +
                               (version ? *version : std::string("(missing)")) +
                               "; this build reads versions " + kVersion + " to " +
                               kVersionUnmadeTimed);
  }
  auto bad = [&](const char* name) {
    return Status::Corruption(where + ": unreadable field '" + name + "'");
  };
  const std::string* text = field("identity");
  if (text == nullptr) return bad("identity");
  auto identity = StateIdentity::FromHex(*text);
  if (!identity.ok()) return bad("identity");
  StoredParameterRules rules;
  rules.where = where;
  rules.time = StoredTimeFields::kAllOrNone;
  rules.has_time_fields = *version == kVersionTimed || *version == kVersionUnmadeTimed;
  rules.max_generations = kMaxGenerations;
  auto p = DecodeStoredParameters(meta, rules);
  if (!p.ok()) return p.status();
  uint64_t shards = 0;
  if ((text = field("shards")) == nullptr || !ParseStoredUint(*text, &shards) || shards == 0 ||
      shards > 4096) {
    return bad("shards");
  }
  bool routed = false;
  if (const std::string* flag = field("routed"); flag != nullptr) {
    if (*flag != "0" && *flag != "1") return bad("routed");
    routed = *flag == "1";
  }
  if ((text = field("layers")) == nullptr) return bad("layers");
  auto layers = RedisSeenLayout::DecodeLayers(*text);
  if (!layers.ok()) return Status::Corruption(where + ": " + layers.status().message());
  if (p->revisit_after_s > 0 && (layers->size() != 1 || routed)) {
    return Status::Corruption(where +
                              ": a generational set has one generation geometry and "
                              "is not routed");
  }
  parameters_ = *p;
  identity_ = *identity;
  ready_ = field("ready") != nullptr;
  shards_ = static_cast<uint32_t>(shards);
  routed_ = routed;
  layers_ = std::move(layers).value();
  for (uint32_t l = 0; l < layers_.size(); ++l)
    layers_[l].fp_rate = RedisLayerFpRate(p->fp_rate, l);
  if (p->revisit_after_s > 0) layers_[0].fp_rate = p->fp_rate / (p->generations + 1);
  layer_table_ = *text;
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

Status RedisSeenSet::Impl::DetectModule(RedisClient& client) {
  module_ = false;
  if (!options_.server_module || generational() || unit() != 1) return Status::Ok();
  std::vector<RedisReply> replies;
  URLSIEVE_RETURN_IF_ERROR(client.OnEveryMaster(
      Command({"COMMAND", "INFO", routed_ ? kRedisSeenModuleInsertRouted : kRedisSeenModuleInsert},
              -1),
      &replies));
  round_trips_.fetch_add(1, std::memory_order_relaxed);
  bool everywhere = !replies.empty();
  for (const RedisReply& reply : replies) {
    // [nil] for a command the server does not know.
    everywhere = everywhere && reply.type == RedisReply::Type::kArray && !reply.elements.empty() &&
                 reply.elements[0].type == RedisReply::Type::kArray;
  }
  module_ = everywhere;
  return Status::Ok();
}

// Every key the set would create must be absent or of the set's type: a name holding other data
// is refused before anything is written.
Status RedisSeenSet::Impl::CheckKeyTypes(RedisClient& client, bool meta_too, std::string* found) {
  std::vector<RedisCommand> commands;
  std::vector<std::pair<std::string, std::string>> expected;  // key, type
  if (meta_too) expected.push_back({MetaKey(), "hash"});
  for (uint32_t s = 0; s < shards_; ++s) {
    expected.push_back({CountKey(s), "hash"});
    expected.push_back({ShardPrefix(s) + "bloom:0", "string"});
    if (has_stream()) expected.push_back({InboxKey(s), "stream"});
  }
  for (const auto& [key, type] : expected) commands.push_back(Command({"TYPE", key}));
  std::vector<RedisReply> replies;
  URLSIEVE_RETURN_IF_ERROR(PipelineInChunks(client, commands, kPipelineChunk, &replies));
  for (size_t i = 0; i < expected.size(); ++i) {
    const RedisReply& reply = replies[i];
    if (reply.is_error())
      return RedisErrorStatus(client.server(), "TYPE " + expected[i].first, reply);
    if (reply.str != "none" && reply.str != expected[i].second) {
      return Status::FailedPrecondition(
          client.server() + ": key " + expected[i].first + " holds a " + reply.str + ", not the " +
          expected[i].second + " of " + What() + ": choose another name");
    }
    if (found != nullptr && found->empty() && reply.str != "none" && expected[i].first != MetaKey())
      *found = expected[i].first;
  }
  return Status::Ok();
}

Result<std::map<std::string, std::string, std::less<>>> RedisSeenSet::Impl::CreateMeta(
    RedisClient& client) {
  std::vector<std::string> argv = {"FCALL", kRedisSeenCreate, "1", MetaKey()};
  for (std::string& field : MetaFields()) argv.push_back(std::move(field));
  auto created = client.Run(Command(std::move(argv), 3));
  round_trips_.fetch_add(1, std::memory_order_relaxed);
  if (!created.ok()) return created.status();
  if (created->is_error()) {
    return RedisErrorStatus(client.server(), "creating the metadata of " + What(), *created);
  }
  return AsMap(*created);
}

Status RedisSeenSet::Impl::InitShards(RedisClient& client, const std::vector<uint32_t>& shards) {
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
  std::vector<RedisReply> replies;
  URLSIEVE_RETURN_IF_ERROR(PipelineInChunks(client, commands, kShardCallChunk, &replies));
  for (size_t i = 0; i < replies.size(); ++i) {
    if (replies[i].is_error()) {
      return ShardCallError(client, "initializing " + commands[i].argv[3], replies[i]);
    }
  }
  return Status::Ok();
}

void RedisSeenSet::Impl::NoteStoredParameters(std::vector<SeenNotice>* notices) const {
  const StateParameters& requested = options_.requested;
  const StateParameters& stored = parameters_;
  const std::string prefix = "Redis seen set \"" + options_.name + "\": ";
  auto note = [&](const std::string& text) {
    notices->push_back({SeenNotice::Kind::kStoredParameters, prefix + text});
  };
  if (stored.capacity != requested.capacity || stored.fp_rate != requested.fp_rate) {
    note("using the stored capacity " + std::to_string(stored.capacity) + " and fp-rate " +
         ShortDouble(stored.fp_rate) + " (requested " + std::to_string(requested.capacity) + ", " +
         ShortDouble(requested.fp_rate) + ")");
  }
  if (stored.exact != requested.exact) {
    note(stored.exact ? "the set is exact (created with exact mode): staying exact"
                      : "the set was created without exact mode, so it holds no fingerprints of "
                        "the earlier keys: staying Bloom-only");
  }
  if (EncodeStoredCanonicalize(stored.canonicalize) !=
      EncodeStoredCanonicalize(requested.canonicalize)) {
    note("using the stored canonicalizer options (" +
         EncodeStoredCanonicalize(stored.canonicalize) + ")");
  }
  if (stored.revisit_after_s != requested.revisit_after_s ||
      (requested.revisit_after_s > 0 && stored.generations != requested.generations)) {
    note("using the stored revisit_after " + std::to_string(stored.revisit_after_s) + " s in " +
         std::to_string(stored.generations) + " generations (requested " +
         std::to_string(requested.revisit_after_s) + " s in " +
         std::to_string(requested.generations) + ")");
  }
  if (stored.deletable != requested.deletable && !(requested.exact && stored.exact)) {
    note(stored.deletable ? "the set is deletable (counting): staying deletable"
                          : "the set was created without --deletable: it cannot become a "
                            "counting filter");
  }
}

Status RedisSeenSet::Impl::MarkReady(RedisClient& client) {
  // The shards live on every master and "ready" on one: on the replicas before it, or a failover
  // of a master that lost a shard just made would make a new set look as if it lost data.
  std::vector<uint32_t> all(shards_);
  for (uint32_t s = 0; s < shards_; ++s) all[s] = s;
  URLSIEVE_RETURN_IF_ERROR(WaitForShardReplicas(client, all));
  auto marked = client.Run(Command({"HSET", MetaKey(), "ready", "1"}));
  round_trips_.fetch_add(1, std::memory_order_relaxed);
  if (!marked.ok()) return marked.status();
  if (marked->is_error()) return RedisErrorStatus(client.server(), "HSET " + MetaKey(), *marked);
  ready_ = true;
  return Status::Ok();
}

Status RedisSeenSet::Impl::CheckShards(RedisClient& client, const std::vector<uint32_t>& shards,
                                       std::vector<SeenNotice>* notices) {
  std::vector<RedisCommand> commands;
  for (uint32_t s : shards) {
    commands.push_back(Command({"FCALL", kRedisSeenCheck, "1", CountKey(s), identity_.ToHex(),
                                options_.accept_loss ? "1" : "0"},
                               3));
  }
  std::vector<RedisReply> replies;
  URLSIEVE_RETURN_IF_ERROR(PipelineInChunks(client, commands, kShardCallChunk, &replies));
  std::vector<uint32_t> missing;
  for (size_t i = 0; i < replies.size(); ++i) {
    const RedisReply& reply = replies[i];
    if (!reply.is_error()) {
      if (StartsWith(reply.str, "REPAIRED ")) {
        notices->push_back({SeenNotice::Kind::kLossAccepted,
                            client.server() + ": " + What() + " had lost data: made again, " +
                                "empty, as accept_loss asks: " + reply.str.substr(9)});
      }
    } else if (StartsWith(reply.str, "NOINIT")) {
      missing.push_back(shards[i]);
    } else {
      return ShardCallError(client, "checking " + commands[i].argv[3], reply);
    }
  }
  if (missing.empty()) return Status::Ok();
  if (!options_.accept_loss) return LostShardError(client.server(), CountKey(missing[0]));
  URLSIEVE_RETURN_IF_ERROR(InitShards(client, missing));
  notices->push_back({SeenNotice::Kind::kLossAccepted,
                      client.server() + ": " + What() + " had lost " +
                          std::to_string(missing.size()) + " of its " + std::to_string(shards_) +
                          " shards: made again, empty, as accept_loss asks (the keys they held "
                          "are new again)"});
  return Status::Ok();
}

Status RedisSeenSet::Impl::LostShardError(const std::string& server, const std::string& key) const {
  return Status::Corruption(server + ": " + What() + " lost data: its shard " + key +
                            " is missing (deleted, evicted, or the server restarted without it); "
                            "nothing was answered. Reopen with accept_loss (--accept-loss) to "
                            "make it again, empty");
}

Status RedisSeenSet::Impl::ShardCallError(RedisClient& client, const std::string& what,
                                          const RedisReply& reply) const {
  if (StartsWith(reply.str, "LOST")) {
    return Status::Corruption(client.server() + ": " + What() + " lost data: " +
                              reply.str.substr(std::min<size_t>(reply.str.size(), 14)) +
                              "; nothing was answered. Reopen with accept_loss (--accept-loss) "
                              "to make what was lost again, empty");
  }
  if (StartsWith(reply.str, "IDENTITY") || StartsWith(reply.str, "CORRUPT")) {
    return Status::Corruption(client.server() + ": " + what + ": " + reply.str);
  }
  return RedisErrorStatus(client.server(), what, reply);
}

Result<uint64_t> RedisSeenSet::Impl::DeleteKeys(RedisClient& client) {
  auto names = KeyNames(client);
  if (!names.ok()) return names.status();
  std::vector<RedisCommand> commands;
  for (const std::string& name : *names) commands.push_back(Command({"DEL", name}));
  std::vector<RedisReply> replies;
  URLSIEVE_RETURN_IF_ERROR(PipelineInChunks(client, commands, kPipelineChunk, &replies));
  uint64_t deleted = 0;
  for (size_t i = 0; i < replies.size(); ++i) {
    if (replies[i].is_error()) {
      return RedisErrorStatus(client.server(), "DEL " + commands[i].argv[1], replies[i]);
    }
    deleted += replies[i].integer > 0 ? 1 : 0;
  }
  return deleted;
}

Result<uint64_t> RedisSeenSet::Impl::DeleteAll() {
  auto acquired = Acquire();
  if (!acquired.ok()) return acquired.status();
  std::unique_ptr<PooledClient> pooled = std::move(acquired).value();
  Result<uint64_t> deleted = DeleteKeys(*pooled->client);
  Release(std::move(pooled));
  return deleted;
}

Status RedisSeenSet::Impl::DeleteOrphans(RedisClient& client, const std::string& orphan,
                                         std::vector<SeenNotice>* notices) {
  Result<uint64_t> deleted = DeleteKeys(client);
  if (!deleted.ok()) return deleted.status();
  notices->push_back({SeenNotice::Kind::kLossAccepted,
                      client.server() + ": " + MetaKey() + " was missing while " + orphan +
                          " remained: deleted the " + std::to_string(*deleted) +
                          " keys left of the old set and created it again, as accept_loss asks"});
  return Status::Ok();
}

// INFO memory (maxmemory_policy, maxmemory) of every master.
Status RedisSeenSet::Impl::CheckEvictionPolicy(RedisClient& client,
                                               std::vector<SeenNotice>* notices) {
  std::vector<RedisReply> replies;
  URLSIEVE_RETURN_IF_ERROR(client.OnEveryMaster(Command({"INFO", "memory"}, -1), &replies));
  round_trips_.fetch_add(1, std::memory_order_relaxed);
  for (const RedisReply& reply : replies) {
    if (reply.is_error()) return RedisErrorStatus(client.server(), "INFO memory", reply);
    auto value = [&](std::string_view field) {
      const std::string tag = std::string(field) + ":";
      const size_t at = reply.str.find(tag);
      if (at == std::string::npos) return std::string();
      const size_t begin = at + tag.size();
      return reply.str.substr(begin, reply.str.find_first_of("\r\n", begin) - begin);
    };
    const std::string policy = value("maxmemory_policy");
    const std::string limit = value("maxmemory");
    if (policy.empty() || policy == "noeviction" || limit.empty() || limit == "0") continue;
    const std::string risk =
        client.server() + ": maxmemory-policy " + policy + " (maxmemory " + limit +
        " bytes) lets Redis evict " + What() +
        "'s keys when memory runs short, and an evicted "
        "key is data the set lost (each call then stops with an error). Set it to noeviction "
        "(CONFIG SET maxmemory-policy noeviction), or give the set a server of its own";
    if (parameters_.exact && !options_.accept_loss) {
      return Status::FailedPrecondition(risk +
                                        "; exact mode refuses the risk (accept_loss / "
                                        "--accept-loss takes it)");
    }
    notices->push_back({SeenNotice::Kind::kWarning, risk});
  }
  return Status::Ok();
}

}  // namespace urlsieve
