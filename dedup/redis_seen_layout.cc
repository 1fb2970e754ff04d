#include "dedup/redis_seen_layout.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "dedup/bloom_math.h"

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

// The capacity of a shard of `capacity` keys over `shards`: the mean plus four standard
// deviations, so that no shard's layer 0 fills before the set holds `capacity` keys.
uint64_t ShardCapacity(uint64_t capacity, uint32_t shards) {
  const double mean = static_cast<double>(capacity) / shards;
  if (shards == 1) return capacity;
  return static_cast<uint64_t>(std::ceil(mean + 4 * std::sqrt(mean)));
}

RedisBloomLayer SizeLayer(uint64_t capacity, double fp_rate) {
  const BloomLayout layout = SmallestBloomLayout(capacity, fp_rate, 1);
  RedisBloomLayer layer;
  layer.capacity = capacity;
  layer.fp_rate = fp_rate;
  layer.bits = layout.bits_per_line;
  const uint64_t allocation = RedisStringAllocation(layout.bytes());
  layer.blocks = (allocation - kStringOverhead) / 64;
  layer.buckets =
      std::clamp<uint64_t>((capacity + kKeysPerBucket - 1) / kKeysPerBucket, 1, kMaxBuckets);
  return layer;
}

std::string FormatDouble(double value) {
  char buffer[40];
  std::snprintf(buffer, sizeof(buffer), "%.17g", value);
  return buffer;
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

Result<RedisSeenLayout> ChooseRedisSeenLayout(uint64_t capacity, double fp_rate, uint32_t shards) {
  if (capacity < 1 || capacity > (uint64_t{1} << 40)) {
    return Status::InvalidArgument("capacity " + std::to_string(capacity) +
                                   " is outside [1, 2^40]");
  }
  if (!(fp_rate > 0 && fp_rate < 1)) {
    return Status::InvalidArgument("fp-rate " + FormatDouble(fp_rate) + " is outside (0, 1)");
  }
  if (shards > 4096) {
    return Status::InvalidArgument("shards " + std::to_string(shards) + " is above 4096");
  }
  const double rate0 = RedisLayerFpRate(fp_rate, 0);
  RedisSeenLayout best;
  if (shards != 0) {
    best.shards = shards;
  } else {
    // Candidates: at least 16 shards (a cluster spreads them) once the filter passes 1 MiB, at
    // most 64 or one per 64 KiB; each layer-0 string at most kMaxShardBytes. The count whose
    // size classes waste least wins.
    const uint64_t total = SmallestBloomLayout(capacity, rate0, 1).bytes();
    uint64_t lo = std::max<uint64_t>((total + kMaxShardBytes - 1) / kMaxShardBytes,
                                     total >= (uint64_t{1} << 20) ? 16 : 1);
    uint64_t hi = std::max<uint64_t>(lo, std::min<uint64_t>(64, total / (64 << 10)));
    lo = std::min<uint64_t>(lo, 4096);
    hi = std::min<uint64_t>(hi, 4096);
    uint64_t best_bytes = UINT64_MAX;
    for (uint64_t s = lo; s <= hi; ++s) {
      const RedisBloomLayer layer =
          SizeLayer(ShardCapacity(capacity, static_cast<uint32_t>(s)), rate0);
      const uint64_t bytes = s * RedisStringAllocation(layer.blocks * 64);
      if (bytes < best_bytes) {
        best_bytes = bytes;
        best.shards = static_cast<uint32_t>(s);
      }
    }
  }
  const uint64_t shard_capacity = ShardCapacity(capacity, best.shards);
  for (uint32_t l = 0; l < kMaxLayers; ++l) {
    if (l > 0 && shard_capacity > (uint64_t{1} << 62) >> l) break;
    RedisBloomLayer layer = SizeLayer(shard_capacity << l, RedisLayerFpRate(fp_rate, l));
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
    out += ',';
    out += FormatDouble(layer.fp_rate);
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
    bool ok = number(&layer.capacity) && *p++ == ',' && number(&layer.blocks) && *p++ == ',' &&
              number(&bits) && *p++ == ',' && number(&layer.buckets) && *p++ == ',';
    if (ok) {
      layer.fp_rate = std::strtod(p, &end);
      ok = end != p;
      p = end;
    }
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

std::array<char, 16> RedisFingerprint(const KeyHash& hash) {
  std::array<char, 16> out;
  for (int i = 0; i < 8; ++i) {
    out[i] = static_cast<char>(hash.high >> (56 - 8 * i));
    out[8 + i] = static_cast<char>(hash.low >> (56 - 8 * i));
  }
  return out;
}

}  // namespace urlsieve
