#include "dedup/bloom/counting_bloom_filter.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <vector>

#include "dedup/bloom/bloom_math.h"
#include "dedup/bloom/bloom_snapshot.h"

namespace urlsieve {
namespace {

constexpr size_t kPrefetchDistance = 8;

}  // namespace

struct CountingBloomFilter::Layer {
  Layer(std::unique_ptr<CountingBlockedBloomFilter> f, uint64_t cap, double rate)
      : filter(std::move(f)), capacity(cap), fp_rate(rate) {}
  uint64_t Keys() const { return count.load(std::memory_order_relaxed); }
  void RestoreKeys(uint64_t keys) { count.store(keys, std::memory_order_relaxed); }

  const std::unique_ptr<CountingBlockedBloomFilter> filter;
  const uint64_t capacity;
  const double fp_rate;
  std::atomic<uint64_t> count{0};  // keys added, net of removals
};

CountingBloomFilter::CountingBloomFilter(const BloomOptions& options) : layers_(options) {}
CountingBloomFilter::~CountingBloomFilter() = default;

Result<std::unique_ptr<CountingBloomFilter>> CountingBloomFilter::Create(
    const BloomOptions& options) {
  URLSIEVE_RETURN_IF_ERROR(ValidateBloomOptions(options));
  std::unique_ptr<CountingBloomFilter> f(new CountingBloomFilter(options));
  URLSIEVE_RETURN_IF_ERROR(f->layers_.AddFirstLayer());
  return f;
}

bool CountingBloomFilter::MayContain(const KeyHash& key) const { return layers_.MayContain(key); }

bool CountingBloomFilter::AddLocked(const KeyHash& key, uint32_t* index) {
  // Read under the key's lock: a previous holder's insert is in a layer below this count.
  const uint32_t n = layers_.num_layers();
  *index = n - 1;
  Layer& layer = layers_.layer(n - 1);
  if (n == 1) {
    layer.filter->Add(key);  // the key's lock is this block's
  } else {
    layer.filter->LockKey(key);
    layer.filter->Add(key);
    layer.filter->UnlockKey(key);
  }
  return layer.count.fetch_add(1, std::memory_order_relaxed) + 1 >= layer.capacity;
}

bool CountingBloomFilter::InsertIfNew(const KeyHash& key) {
  layers_.base()->LockKey(key);
  const bool fresh = !MayContain(key);
  uint32_t layer = 0;
  const bool full = fresh && AddLocked(key, &layer);
  layers_.base()->UnlockKey(key);
  if (full) layers_.Grow(layer);
  return fresh;
}

void CountingBloomFilter::InsertIfNewBatch(std::span<const KeyHash> keys, bool* is_new) {
  const size_t n = keys.size();
  auto prefetch = [&](size_t i) {
    const uint32_t layers = layers_.num_layers();
    for (uint32_t l = 0; l < layers; ++l) layers_.layer(l).filter->Prefetch(keys[i]);
  };
  for (size_t i = 0; i < std::min(n, kPrefetchDistance); ++i) prefetch(i);
  for (size_t i = 0; i < n; ++i) {
    if (i + kPrefetchDistance < n) prefetch(i + kPrefetchDistance);
    is_new[i] = InsertIfNew(keys[i]);
  }
}

void CountingBloomFilter::AddBatch(std::span<const KeyHash> keys) {
  for (const KeyHash& key : keys) {
    layers_.base()->LockKey(key);
    uint32_t layer = 0;
    const bool full = AddLocked(key, &layer);
    layers_.base()->UnlockKey(key);
    if (full) layers_.Grow(layer);
  }
}

bool CountingBloomFilter::Remove(const KeyHash& key) {
  layers_.base()->LockKey(key);
  const uint32_t n = layers_.num_layers();
  bool removed = false;
  // Every layer that may hold it: the key is then absent whichever layer its insert reached (a
  // layer that tests present by a false positive pays with the caveat in the header).
  for (uint32_t i = 0; i < n; ++i) {
    Layer& layer = layers_.layer(i);
    if (i > 0) layer.filter->LockKey(key);
    const bool was_there = layer.filter->Remove(key);
    if (i > 0) layer.filter->UnlockKey(key);
    if (!was_there) continue;
    removed = true;
    uint64_t c = layer.count.load(std::memory_order_relaxed);
    while (c > 0 && !layer.count.compare_exchange_weak(c, c - 1, std::memory_order_relaxed)) {
    }
  }
  layers_.base()->UnlockKey(key);
  return removed;
}

void CountingBloomFilter::RemoveBatch(std::span<const KeyHash> keys, bool* removed) {
  for (size_t i = 0; i < keys.size(); ++i) removed[i] = Remove(keys[i]);
}

CountingBloomStats CountingBloomFilter::Stats() const {
  CountingBloomStats cs;
  cs.bloom =
      layers_.Stats([&cs](const Layer& layer) { cs.saturated += layer.filter->CountSaturated(); });
  return cs;
}

uint64_t CountingBloomFilter::bytes() const { return layers_.bytes(); }

Status CountingBloomFilter::Save(const std::string& path, uint64_t generation,
                                 const StateIdentity& identity) const {
  return layers_.Save(path, generation, identity);
}

Result<std::unique_ptr<CountingBloomFilter>> CountingBloomFilter::Load(const std::string& path,
                                                                       uint64_t* generation,
                                                                       StateIdentity* identity) {
  BloomOptions options;
  auto snapshot = decltype(layers_)::ReadSnapshot(path, &options);
  if (!snapshot.ok()) return snapshot.status();
  std::unique_ptr<CountingBloomFilter> f(new CountingBloomFilter(options));
  f->layers_.Restore(snapshot.value(), generation, identity);
  return f;
}

}  // namespace urlsieve
