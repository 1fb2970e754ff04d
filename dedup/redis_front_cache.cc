#include "dedup/redis_front_cache.h"

#include <algorithm>
#include <utility>

namespace urlsieve {
namespace {

bool IsZero(const KeyHash& hash) { return hash.low == 0 && hash.high == 0; }

}  // namespace

bool RedisFrontCache::Table::Contains(const KeyHash& hash) const {
  if (IsZero(hash)) return has_zero_;
  if (slots_.empty()) return false;
  const uint64_t mask = slots_.size() - 1;
  for (uint64_t i = hash.low & mask;; i = (i + 1) & mask) {
    const KeyHash& slot = slots_[i];
    if (slot == hash) return true;
    if (IsZero(slot)) return false;
  }
}

void RedisFrontCache::Table::Insert(const KeyHash& hash) {
  if (IsZero(hash)) {
    size_ += has_zero_ ? 0 : 1;
    has_zero_ = true;
    return;
  }
  if ((size_ + 1) * 4 > slots_.size() * 3) Grow();
  const uint64_t mask = slots_.size() - 1;
  uint64_t i = hash.low & mask;
  while (!IsZero(slots_[i])) {
    if (slots_[i] == hash) return;
    i = (i + 1) & mask;
  }
  slots_[i] = hash;
  ++size_;
}

void RedisFrontCache::Table::Grow() {
  std::vector<KeyHash> old = std::move(slots_);
  slots_.assign(std::max<size_t>(64, old.size() * 2), KeyHash{});
  const uint64_t mask = slots_.size() - 1;
  for (const KeyHash& hash : old) {
    if (IsZero(hash)) continue;
    uint64_t i = hash.low & mask;
    while (!IsZero(slots_[i])) i = (i + 1) & mask;
    slots_[i] = hash;
  }
}

RedisFrontCache::RedisFrontCache(uint64_t max_keys)
    : per_generation_(std::max<uint64_t>(1, max_keys / 2 / (1 << kShardBits))) {}

bool RedisFrontCache::Contains(const KeyHash& hash) const {
  Shard& shard = ShardOf(hash);
  std::lock_guard<std::mutex> lock(shard.mu);
  return shard.current.Contains(hash) || shard.previous.Contains(hash);
}

void RedisFrontCache::Insert(const KeyHash& hash) {
  Shard& shard = ShardOf(hash);
  std::lock_guard<std::mutex> lock(shard.mu);
  if (shard.current.Contains(hash)) return;
  if (shard.current.size() >= per_generation_) {
    shard.previous = std::move(shard.current);
    shard.current = Table();
  }
  shard.current.Insert(hash);
}

uint64_t RedisFrontCache::size() const {
  uint64_t total = 0;
  for (const Shard& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard.mu);
    total += shard.current.size() + shard.previous.size();
  }
  return total;
}

}  // namespace urlsieve
