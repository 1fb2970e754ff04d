#include "dedup/redis/redis_seen_layout.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "base/strings.h"
#include "dedup/bloom/bloom_math.h"
#include "dedup/redis/redis_seen_key_math.h"

namespace urlsieve {
namespace {

// A string's sds header (sdshdr32: 9 bytes) and terminator, rounded up: the blocks of a layer
// fill its size class up to this.
constexpr uint64_t kStringOverhead = 16;
// A string longer than this cannot be a layer (Redis strings end at 512 MiB, and BITFIELD
// offsets must stay below 2^32 bits; the function computes block · 512 exactly below 2^53).
constexpr uint64_t kMaxLayerBlocks = (uint64_t{1} << 23) - 1;
// Layer-0 strings of a shard stay at most this size, so that growth layers fit below 512 MiB.
constexpr uint64_t kMaxShardBytes = uint64_t{16} << 20;
constexpr uint64_t kMaxBuckets = (uint64_t{1} << 21) - 1;
// Fingerprints per exact-mode hash at a layer's capacity: far below hash-max-listpack-entries
// (128), so a hash stays listpack-encoded although bucket loads vary.
constexpr uint64_t kKeysPerBucket = 64;
constexpr uint32_t kMaxLayers = 40;

// A shard's layer must take its mean share of the keys, `capacity / shards`, plus a margin for
// the shards' uneven loads (three standard deviations at least: a shard that passes its capacity
// grows, which doubles its memory), at the layer's ε. Its string fills its jemalloc size class, so
// it can often take more: it takes keys until its expected false-positive rate would pass ε
// (bloom_math.h), at most the mean plus four standard deviations. Thus ε holds in every shard at
// any fill, and a shard seldom grows before the set holds `capacity` keys.
uint64_t ShardMean(uint64_t capacity, uint32_t shards) { return (capacity + shards - 1) / shards; }

uint64_t Deviations(uint64_t mean, uint32_t shards, double count) {
  if (shards == 1) return 0;
  return static_cast<uint64_t>(std::ceil(count * std::sqrt(static_cast<double>(mean))));
}

RedisBloomLayer SizeLayer(uint64_t mean, uint32_t shards, double fp_rate) {
  const uint64_t least = mean + Deviations(mean, shards, 3);
  const uint64_t most = mean + Deviations(mean, shards, 4);
  RedisBloomLayer layer;
  layer.fp_rate = fp_rate;
  BloomLayout actual;
  // Sized for the mean, the class may leave room for the margin; if not, sized for it.
  for (uint64_t sized_for : {mean, least}) {
    const BloomLayout needed = SmallestBloomLayout(sized_for, fp_rate, 1);
    layer.bits = needed.bits_per_line;
    layer.blocks = (RedisStringAllocation(needed.bytes()) - kStringOverhead) / 64;
    actual.num_blocks = layer.blocks;
    actual.bits_per_line = layer.bits;
    if (BlockedFalsePositiveRate(actual, least) <= fp_rate) break;
  }
  uint64_t lo = least;  // holds ε
  uint64_t hi = most;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo + 1) / 2;
    if (BlockedFalsePositiveRate(actual, mid) <= fp_rate) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  layer.capacity = lo;
  layer.buckets =
      std::clamp<uint64_t>((layer.capacity + kKeysPerBucket - 1) / kKeysPerBucket, 1, kMaxBuckets);
  return layer;
}

}  // namespace

uint64_t JemallocSizeClass(uint64_t bytes) {
  if (bytes <= 8) return 8;
  if (bytes <= 128) return (bytes + 15) / 16 * 16;
  const int lg = std::bit_width(bytes - 1) - 1;  // 2^lg < bytes ≤ 2^(lg+1)
  const uint64_t delta = uint64_t{1} << (lg - 2);
  return (bytes + delta - 1) / delta * delta;
}

uint64_t RedisStringAllocation(uint64_t length) {
  return JemallocSizeClass(length + kStringOverhead);
}

double RedisLayerFpRate(double fp_rate, uint32_t layer) {
  if (layer == 0) return fp_rate * 0.9;
  return fp_rate * 0.1 * 0.5 * std::pow(0.5, layer - 1);
}

Result<RedisSeenLayout> ChooseRedisSeenLayout(uint64_t capacity, double fp_rate, uint32_t shards,
                                              uint32_t spread, uint64_t min_shard_keys,
                                              uint32_t growth_shift) {
  if (capacity < 1 || capacity > (uint64_t{1} << 40)) {
    return Status::InvalidArgument("capacity " + std::to_string(capacity) +
                                   " is outside [1, 2^40]");
  }
  if (!(fp_rate > 0 && fp_rate < 1)) {
    return Status::InvalidArgument("fp-rate " + FormatDouble(fp_rate) + " is outside (0, 1)");
  }
  if (growth_shift < 1 || growth_shift > 4) {
    return Status::InvalidArgument("growth 2^" + std::to_string(growth_shift) +
                                   " is outside 2 .. 16");
  }
  if (shards > 4096) {
    return Status::InvalidArgument("shards " + std::to_string(shards) + " is above 4096");
  }
  const double rate0 = RedisLayerFpRate(fp_rate, 0);
  RedisSeenLayout best;
  if (shards != 0) {
    best.shards = shards;
  } else {
    // Candidates: as few as the string sizes allow (each layer-0 string at most kMaxShardBytes),
    // and at least `spread` once the filter passes 1 MiB; up to twice that, or up to 32 once it
    // passes 4 MiB (and at most one per 16 KiB). The fewest shards whose size classes waste at
    // most 0.5 % more than the best of those win: each shard is one function call per batch, so
    // fewer shards carry more keys per call, but past 4 MiB the size classes cost more than the
    // calls: 10^7 keys at 1e-3 take 2.10 B/key of filter in 2 shards, 1.99 in 19.
    const uint64_t total = SmallestBloomLayout(capacity, rate0, 1).bytes();
    uint64_t lo = std::max<uint64_t>((total + kMaxShardBytes - 1) / kMaxShardBytes,
                                     total >= (uint64_t{1} << 20) ? std::max(spread, 1u) : 1);
    const uint64_t widest = total >= (uint64_t{4} << 20) ? 32 : 2 * lo;
    uint64_t hi =
        std::max<uint64_t>(lo, std::min<uint64_t>(std::max(2 * lo, widest), total / (16 << 10)));
    lo = std::min<uint64_t>(lo, 4096);
    hi = std::min<uint64_t>(hi, 4096);
    std::vector<uint64_t> bytes;
    for (uint64_t s = lo; s <= hi; ++s) {
      const auto count = static_cast<uint32_t>(s);
      const RedisBloomLayer layer = SizeLayer(ShardMean(capacity, count), count, rate0);
      bytes.push_back(s * RedisStringAllocation(layer.blocks * 64));
    }
    const uint64_t least = *std::min_element(bytes.begin(), bytes.end());
    for (size_t i = 0; i < bytes.size(); ++i) {
      if (bytes[i] <= least + least / 200) {
        best.shards = static_cast<uint32_t>(lo + i);
        break;
      }
    }
  }
  const uint64_t shard_mean =
      std::max(ShardMean(capacity, best.shards), std::min<uint64_t>(min_shard_keys, 1ULL << 40));
  for (uint32_t l = 0; l < kMaxLayers; ++l) {
    const uint32_t shift = l * growth_shift;
    if (l > 0 && (shift >= 62 || shard_mean > (uint64_t{1} << 62) >> shift)) break;
    RedisBloomLayer layer =
        SizeLayer(shard_mean << shift, best.shards, RedisLayerFpRate(fp_rate, l));
    if (layer.blocks > kMaxLayerBlocks) {
      if (l == 0) {
        return Status::InvalidArgument("capacity " + std::to_string(capacity) + " over " +
                                       std::to_string(best.shards) +
                                       " shards needs strings above 512 MiB: use more shards");
      }
      break;
    }
    best.layers.push_back(layer);
  }
  return best;
}

std::string RedisSeenLayout::EncodeLayers() const {
  std::string out;
  for (const RedisBloomLayer& layer : layers) {
    if (!out.empty()) out += ';';
    out += std::to_string(layer.capacity);
    out += ',';
    out += std::to_string(layer.blocks);
    out += ',';
    out += std::to_string(layer.bits);
    out += ',';
    out += std::to_string(layer.buckets);
  }
  return out;
}

Result<std::vector<RedisBloomLayer>> RedisSeenLayout::DecodeLayers(std::string_view text) {
  std::vector<RedisBloomLayer> layers;
  const std::string copy(text);
  const char* p = copy.c_str();
  while (*p != '\0') {
    RedisBloomLayer layer;
    char* end = nullptr;
    auto number = [&](uint64_t* out) {
      errno = 0;
      const unsigned long long v = std::strtoull(p, &end, 10);
      if (end == p || errno != 0) return false;
      *out = v;
      p = end;
      return true;
    };
    uint64_t bits = 0;
    const bool ok = number(&layer.capacity) && *p++ == ',' && number(&layer.blocks) &&
                    *p++ == ',' && number(&bits) && *p++ == ',' && number(&layer.buckets);
    layer.bits = static_cast<uint32_t>(bits);
    if (!ok || layer.capacity == 0 || layer.blocks == 0 || layer.blocks > kMaxLayerBlocks ||
        layer.bits == 0 || layer.bits > 48 || layer.buckets == 0 || layer.buckets > kMaxBuckets ||
        (*p != '\0' && *p != ';')) {
      return Status::Corruption("unreadable layer table \"" + copy + "\"");
    }
    layers.push_back(layer);
    if (*p == ';') ++p;
  }
  if (layers.empty()) return Status::Corruption("empty layer table");
  return layers;
}

std::string RedisKeyField(const KeyHash& hash) {
  std::string field(kRedisKeyFieldBytes, '\0');
  RedisKeyFieldBytes(hash.low, hash.high, field.data());
  return field;
}

uint64_t RedisBucketOf(const KeyHash& hash, uint64_t buckets) {
  return RedisBucketOfLow(hash.low, buckets);
}

uint64_t RedisBitOffset(const KeyHash& hash, const RedisBloomLayer& layer, uint32_t bit) {
  return RedisBlockOf(hash.low, layer.blocks) * 512 + RedisPositionOf(hash.high, bit);
}

void AppendRedisKeyArguments(const KeyHash& hash, std::span<const RedisBloomLayer> layers,
                             uint32_t provided, bool exact, const std::string_view* payload,
                             std::vector<std::string>* argv, uint32_t counter_bits) {
  if (exact) argv->push_back(RedisKeyField(hash));
  if (payload != nullptr) argv->emplace_back(*payload);
  char buffer[24];
  for (uint32_t l = 0; l < provided; ++l) {
    const RedisBloomLayer& layer = layers[l];
    if (exact) {
      const auto end =
          std::to_chars(buffer, buffer + sizeof(buffer), RedisBucketOf(hash, layer.buckets)).ptr;
      argv->emplace_back(buffer, end);
    }
    const uint64_t base = RedisBlockOf(hash.low, layer.blocks) * 512;
    for (uint32_t b = 0; b < layer.bits; ++b) {
      const uint64_t offset = (base + RedisPositionOf(hash.high, b)) * counter_bits;
      const auto end = std::to_chars(buffer, buffer + sizeof(buffer), offset).ptr;
      argv->emplace_back(buffer, end);
    }
  }
}

}  // namespace urlsieve
