// What a RedisSeenSet holds and costs (redis_seen_set_impl.h): Stats (counters and BITCOUNTs of
// every layer or live generation) and Usage (MEMORY USAGE of every key, the inboxes apart).
#include <algorithm>

#include "dedup/bloom/bloom_math.h"
#include "dedup/redis_seen_set_impl.h"

namespace urlsieve {

using namespace redis_seen_internal;

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
  std::vector<LayerLoad> loads;
  commands.clear();
  CollectLoads(states, &stats, &loads, &commands);
  std::vector<RedisReply> bitcounts;
  for (size_t begin = 0; begin < commands.size() && status.ok(); begin += kPipelineChunk) {
    const size_t end = std::min(commands.size(), begin + kPipelineChunk);
    std::vector<RedisReply> part;
    status = client.Pipeline(std::span(commands).subspan(begin, end - begin), &part);
    round_trips_.fetch_add(1, std::memory_order_relaxed);
    for (RedisReply& reply : part) bitcounts.push_back(std::move(reply));
  }
  Release(std::move(pooled));
  SumLoads(loads, bitcounts, &stats);
  return stats;
}

void RedisSeenSet::Impl::CollectLoads(const std::vector<RedisReply>& states, SeenStats* stats,
                                      std::vector<LayerLoad>* loads,
                                      std::vector<RedisCommand>* bitcounts) const {
  // A generational set: the live generations' counts (fields g<index> of the newest G + 1 a
  // shard has), each a filter of the one geometry.
  for (uint32_t s = 0; s < shards_ && generational(); ++s) {
    auto state = AsMap(states[s]);
    uint64_t value = 0;
    if (ParseStoredUint(state["maybe"], &value)) stats->maybe_lookups += value;
    if (ParseStoredUint(state["fp"], &value)) stats->false_positives += value;
    std::map<uint64_t, uint64_t> gens;
    for (const auto& [name, text] : state) {
      uint64_t index = 0;
      if (name.size() > 1 && name[0] == 'g' && ParseStoredUint(name.substr(1), &index) &&
          ParseStoredUint(text, &value)) {
        gens[index] = value;
      }
    }
    if (gens.empty()) continue;
    const uint64_t newest = gens.rbegin()->first;
    uint32_t live = 0;
    for (const auto& [index, count] : gens) {
      if (index + parameters_.generations < newest) continue;
      ++live;
      loads->push_back({s, 0, count});
      bitcounts->push_back(Command({"BITCOUNT", ShardPrefix(s) + "gen:" + std::to_string(index)}));
    }
    stats->bloom_layers = std::max(stats->bloom_layers, live);
  }
  for (uint32_t s = 0; s < shards_ && !generational(); ++s) {
    auto state = AsMap(states[s]);
    uint64_t layers = 0;
    uint64_t count = 0;
    if (!ParseStoredUint(state["layers"], &layers) || layers == 0) continue;
    layers = std::min<uint64_t>(layers, layers_.size());
    uint64_t value = 0;
    if (ParseStoredUint(state["maybe"], &value)) stats->maybe_lookups += value;
    if (ParseStoredUint(state["fp"], &value)) stats->false_positives += value;
    stats->bloom_layers = std::max<uint32_t>(stats->bloom_layers, static_cast<uint32_t>(layers));
    for (uint32_t l = 0; l < layers; ++l) {
      const bool newest = l + 1 == layers;
      if (!ParseStoredUint(state[newest ? std::string("count") : 'n' + std::to_string(l)],
                           &count)) {
        count = 0;
      }
      loads->push_back({s, l, count});
      bitcounts->push_back(Command({"BITCOUNT", ShardPrefix(s) + "bloom:" + std::to_string(l)}));
    }
  }
}

void RedisSeenSet::Impl::SumLoads(const std::vector<LayerLoad>& loads,
                                  const std::vector<RedisReply>& bitcounts,
                                  SeenStats* stats) const {
  std::vector<double> shard_pass(shards_, 1.0);  // probability a fresh key passes no layer
  uint64_t set_bits = 0;
  for (size_t i = 0; i < loads.size(); ++i) {
    const RedisBloomLayer& layer = layers_[loads[i].layer];
    stats->bloom_inserted += loads[i].count;
    stats->bloom_capacity += layer.capacity;
    stats->bloom_bytes += layer.blocks * 64 * unit();
    if (i < bitcounts.size() && bitcounts[i].type == RedisReply::Type::kInteger) {
      set_bits += static_cast<uint64_t>(bitcounts[i].integer);
    }
    BloomLayout layout;
    layout.num_blocks = layer.blocks;
    layout.bits_per_line = layer.bits;
    shard_pass[loads[i].shard] *= 1 - BlockedFalsePositiveRate(layout, loads[i].count);
  }
  if (stats->bloom_bytes > 0 && unit() == 1) {  // (a counting filter's BITCOUNT is no fill)
    stats->bloom_fill_ratio = static_cast<double>(set_bits) / (stats->bloom_bytes * 8.0);
  }
  double fp = 0;
  for (double pass : shard_pass) fp += 1 - pass;
  stats->bloom_expected_fp_rate = fp / shards_;
  if (parameters_.exact) stats->stored_keys = stats->bloom_inserted;
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
  auto names = KeyNames(client);
  if (!names.ok()) return names.status();
  std::vector<RedisCommand> commands;
  for (size_t begin = 0; begin < names->size(); begin += kPipelineChunk) {
    const size_t end = std::min(names->size(), begin + kPipelineChunk);
    commands.clear();
    for (size_t i = begin; i < end; ++i) {
      commands.push_back(Command({"MEMORY", "USAGE", (*names)[i], "SAMPLES", "0"}, 2));
    }
    status = client.Pipeline(commands, &replies);
    round_trips_.fetch_add(1, std::memory_order_relaxed);
    if (!status.ok()) return status;
    for (size_t i = 0; i < replies.size(); ++i) {
      if (replies[i].is_error()) {
        return RedisErrorStatus(client.server(), "MEMORY USAGE " + (*names)[begin + i], replies[i]);
      }
      if (replies[i].type != RedisReply::Type::kInteger) continue;  // no such key
      usage.bytes += static_cast<uint64_t>(replies[i].integer);
      ++usage.keys;
    }
  }
  URLSIEVE_RETURN_IF_ERROR(AddInboxUsage(client, &usage));
  Release(std::move(pooled));
  return usage;
}

Result<std::vector<std::string>> RedisSeenSet::Impl::KeyNames(RedisClient& client) {
  // Every key the set may have: its metadata, and per shard its state, layers, buckets and claim
  // log. (The function's per-connection answer records, `done:<token>`, expire within 300 s and
  // are not counted.)
  std::vector<std::string> names = {MetaKey(), EpochKey()};
  std::vector<RedisCommand> commands;
  for (uint32_t s = 0; s < shards_; ++s) {
    commands.push_back(generational() ? Command({"HKEYS", CountKey(s)})
                                      : Command({"HGET", CountKey(s), "layers"}));
  }
  std::vector<RedisReply> replies;
  Status status = client.Pipeline(commands, &replies);
  round_trips_.fetch_add(1, std::memory_order_relaxed);
  if (!status.ok()) return status;
  for (uint32_t s = 0; s < shards_; ++s) {
    const std::string prefix = ShardPrefix(s);
    names.push_back(prefix + "count");
    if (has_claim_log()) names.push_back(ClaimsKey(s));
    // A generational shard: the generations its counts name (an expired one is no key).
    for (const RedisReply& field :
         generational() ? replies[s].elements : std::vector<RedisReply>()) {
      uint64_t index = 0;
      if (field.str.size() < 2 || field.str[0] != 'g' ||
          !ParseStoredUint(field.str.substr(1), &index)) {
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
    if (!ParseStoredUint(replies[s].str, &layers)) continue;
    layers = std::min<uint64_t>(layers, layers_.size());
    for (uint32_t l = 0; l < layers; ++l) {
      names.push_back(prefix + "bloom:" + std::to_string(l));
      if (!parameters_.exact) continue;
      for (uint64_t b = 0; b < layers_[l].buckets; ++b) {
        names.push_back(prefix + "fp:" + std::to_string(l) + ":" + std::to_string(b));
      }
    }
  }
  return names;
}

Status RedisSeenSet::Impl::AddInboxUsage(RedisClient& client, RedisSeenSetUsage* usage) {
  // A routed set's inboxes: the crawl cluster's work queue, counted apart from the set.
  std::vector<RedisCommand> commands;
  std::vector<RedisReply> replies;
  for (uint32_t begin = 0; has_stream() && begin < shards_; begin += kPipelineChunk / 2) {
    const uint32_t end = std::min<uint32_t>(shards_, begin + kPipelineChunk / 2);
    commands.clear();
    for (uint32_t s = begin; s < end; ++s) {
      commands.push_back(Command({"XLEN", InboxKey(s)}));
      commands.push_back(Command({"MEMORY", "USAGE", InboxKey(s), "SAMPLES", "0"}, 2));
    }
    Status status = client.Pipeline(commands, &replies);
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
      ++usage->inbox_streams;
      usage->inbox_entries += static_cast<uint64_t>(std::max(0LL, replies[i].integer));
      usage->inbox_bytes += static_cast<uint64_t>(replies[i + 1].integer);
    }
  }
  return Status::Ok();
}

}  // namespace urlsieve
