#include "dedup/redis/redis_front_cache.h"

#include <algorithm>
#include <utility>

namespace urlsieve {
namespace {

bool IsZero(const KeyHash& hash) { return hash.low == 0 && hash.high == 0; }

}  // namespace

uint64_t RedisFrontCache::Table::Find(const KeyHash& hash) const {
  if (IsZero(hash)) return has_zero_ ? zero_until_ : 0;
  if (slots_.empty()) return 0;
  const uint64_t mask = slots_.size() - 1;
  for (uint64_t i = hash.low & mask;; i = (i + 1) & mask) {
    const KeyHash& slot = slots_[i];
    if (slot == hash) return timed_ ? until_[i] : kForever;
    if (IsZero(slot)) return 0;
  }
}

void RedisFrontCache::Table::Insert(const KeyHash& hash, uint64_t until) {
  if (!timed_) until = kForever;
  if (IsZero(hash)) {
    size_ += has_zero_ ? 0 : 1;
    has_zero_ = true;
    zero_until_ = std::max(zero_until_, until);
    return;
  }
  if ((size_ + 1) * 4 > slots_.size() * 3) Grow();
  const uint64_t mask = slots_.size() - 1;
  uint64_t i = hash.low & mask;
  while (!IsZero(slots_[i])) {
    if (slots_[i] == hash) {
      if (timed_) until_[i] = std::max(until_[i], until);
      return;
    }
    i = (i + 1) & mask;
  }
  slots_[i] = hash;
  if (timed_) until_[i] = until;
  ++size_;
}

void RedisFrontCache::Table::Grow() {
  std::vector<KeyHash> old = std::move(slots_);
  std::vector<uint64_t> old_until = std::move(until_);
  slots_.assign(std::max<size_t>(64, old.size() * 2), KeyHash{});
  if (timed_) until_.assign(slots_.size(), 0);
  const uint64_t mask = slots_.size() - 1;
  for (size_t j = 0; j < old.size(); ++j) {
    const KeyHash& hash = old[j];
    if (IsZero(hash)) continue;
    uint64_t i = hash.low & mask;
    while (!IsZero(slots_[i])) i = (i + 1) & mask;
    slots_[i] = hash;
    if (timed_) until_[i] = old_until[j];
  }
}

RedisFrontCache::RedisFrontCache(uint64_t max_keys, bool timed)
    : per_generation_(std::max<uint64_t>(1, max_keys / 2 / (1 << kShardBits))), timed_(timed) {
  for (Shard& shard : shards_) {
    shard.current = Table(timed_);
    shard.previous = Table(timed_);
  }
}

bool RedisFrontCache::Contains(const KeyHash& hash, uint64_t now) const {
  Shard& shard = ShardOf(hash);
  std::lock_guard<std::mutex> lock(shard.mu);
  return shard.current.Find(hash) > now || shard.previous.Find(hash) > now;
}

void RedisFrontCache::Insert(const KeyHash& hash, uint64_t until, uint64_t epoch) {
  Shard& shard = ShardOf(hash);
  std::lock_guard<std::mutex> lock(shard.mu);
  // Learned before a Forget this cache has heard of: Redis may no longer hold it.
  if (epoch != epoch_.load(std::memory_order_acquire)) return;
  const uint64_t known = shard.current.Find(hash);
  if (known != 0 && (!timed_ || known >= until)) return;
  if (known == 0 && shard.current.size() >= per_generation_) {
    shard.previous = std::move(shard.current);
    shard.current = Table(timed_);
  }
  shard.current.Insert(hash, until);
}

void RedisFrontCache::Validate(uint64_t epoch) {
  if (epoch_.load(std::memory_order_acquire) == epoch) return;
  epoch_.store(epoch, std::memory_order_release);
  for (Shard& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard.mu);
    shard.current = Table(timed_);
    shard.previous = Table(timed_);
  }
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
