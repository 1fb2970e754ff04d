#include "dedup/bloom/scalable_bloom_filter.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <vector>

#include "dedup/bloom/bloom_math.h"
#include "dedup/bloom/bloom_snapshot.h"
#include "dedup/bloom/thread_slot.h"

namespace urlsieve {
namespace {

// How far ahead of the current key the batch calls prefetch: enough to cover a DRAM miss at a
// few nanoseconds per key, few enough that prefetched lines are not evicted before use.
constexpr size_t kPrefetchDistance = 16;
constexpr uint64_t kCounterShards = kThreadSlots + 1;  // one per thread slot, and the shared one

}  // namespace

// One layer and its insert counter. The counter is sharded by thread slot (thread_slot.h): a
// thread that owns its slot counts with a plain load and store. Each chunk a shard completes is
// added to `approx`, which is what the growth check reads, so the check touches a shared line once
// per chunk, and the layer overshoots its capacity by at most shards·chunk keys.
struct ScalableBloomFilter::Layer {
  struct alignas(64) Shard {
    std::atomic<uint64_t> count{0};
  };

  Layer(std::unique_ptr<BlockedBloomFilter> f, uint64_t cap, double rate)
      : filter(std::move(f)),
        capacity(cap),
        fp_rate(rate),
        chunk_shift(std::bit_width(std::clamp<uint64_t>(cap / (kCounterShards * 1024), 1, 256)) -
                    1) {}

  uint64_t Keys() const {
    uint64_t sum = 0;
    for (const Shard& s : shards) sum += s.count.load(std::memory_order_relaxed);
    return sum;
  }

  // A snapshot's count: the shared shard's (which no thread owns) and the growth counter.
  void RestoreKeys(uint64_t keys) {
    shards[kSharedThreadSlot].count.store(keys, std::memory_order_relaxed);
    approx.store(keys, std::memory_order_relaxed);
  }

  const std::unique_ptr<BlockedBloomFilter> filter;
  const uint64_t capacity;
  const double fp_rate;
  const int chunk_shift;  // a chunk is 2^chunk_shift inserts
  std::array<Shard, kCounterShards> shards;
  alignas(64) std::atomic<uint64_t> approx{0};
};

ScalableBloomFilter::ScalableBloomFilter(const BloomOptions& options) : layers_(options) {}
ScalableBloomFilter::~ScalableBloomFilter() = default;

Result<std::unique_ptr<ScalableBloomFilter>> ScalableBloomFilter::Create(
    const BloomOptions& options) {
  URLSIEVE_RETURN_IF_ERROR(ValidateBloomOptions(options));
  std::unique_ptr<ScalableBloomFilter> f(new ScalableBloomFilter(options));
  URLSIEVE_RETURN_IF_ERROR(f->layers_.AddFirstLayer());
  return f;
}

// Inline: on the single-insert path a call costs as much as the count.
inline void ScalableBloomFilter::CountInserts(uint32_t index, uint64_t count) {
  Layer& layer = layers_.layer(index);
  const uint32_t slot = CurrentThreadSlot();
  std::atomic<uint64_t>& shard = layer.shards[slot].count;
  uint64_t before;
  if (slot != kSharedThreadSlot) [[likely]] {
    // This thread is the shard's only writer.
    before = shard.load(std::memory_order_relaxed);
    shard.store(before + count, std::memory_order_relaxed);
  } else {
    before = shard.fetch_add(count, std::memory_order_relaxed);
  }
  // Chunks completed by this shard move to the shared count, which the growth check reads.
  const uint64_t chunks = ((before + count) >> layer.chunk_shift) - (before >> layer.chunk_shift);
  if (chunks != 0) PublishChunks(index, chunks << layer.chunk_shift);
}

inline bool ScalableBloomFilter::TestAndSet(const KeyHash& key, uint32_t* inserted_layer) {
  // Layer 0 is written in the locked discipline (its locks are the keys' locks), while the filter
  // has one layer: the layer count is the guard, read under the key's lock.
  *inserted_layer = 0;
  switch (layers_.base()->InsertLockedIf(key, layers_.layer_count(), 1)) {
    case LockedSet::kNew:
      return true;
    case LockedSet::kSeen:
      return false;
    case LockedSet::kGuardChanged:
      break;
  }
  // The filter has grown, and the key's lock is held. Read under it, the count cannot be less than
  // a previous holder of the lock saw (the key may be in the newest layer it saw); the acquire
  // pairs with Grow's release, so the layers below it are fully built. Growth layers, whose lines
  // are not covered by the keys' locks, are written in the lock-free discipline.
  const uint32_t n = layers_.num_layers();
  *inserted_layer = n - 1;
  bool fresh = true;
  for (uint32_t i = 0; i + 1 < n && fresh; ++i) fresh = !layers_.layer(i).filter->MayContain(key);
  if (fresh) fresh = layers_.layer(n - 1).filter->InsertAtomic(key);
  layers_.base()->UnlockKey(key);
  return fresh;
}

bool ScalableBloomFilter::InsertIfNew(const KeyHash& key) {
  uint32_t layer = 0;
  const bool fresh = TestAndSet(key, &layer);
  if (fresh) CountInserts(layer, 1);
  return fresh;
}

bool ScalableBloomFilter::MayContain(const KeyHash& key) const { return layers_.MayContain(key); }

void ScalableBloomFilter::InsertIfNewBatch(std::span<const KeyHash> keys, bool* is_new) {
  const size_t n = keys.size();
  const BlockedBloomFilter& base = *layers_.base();
  auto prefetch = [&](size_t i) {
    BlockedBloomFilter::PrefetchLine(base.LineOf(keys[i]));
    const uint32_t layers = layers_.num_layers();
    for (uint32_t l = 1; l < layers; ++l) layers_.layer(l).filter->Prefetch(keys[i]);
  };
  for (size_t i = 0; i < std::min(n, kPrefetchDistance); ++i) prefetch(i);
  uint32_t pending_layer = 0;
  uint64_t pending = 0;
  for (size_t i = 0; i < n; ++i) {
    if (i + kPrefetchDistance < n) prefetch(i + kPrefetchDistance);
    uint32_t layer = 0;
    const bool fresh = TestAndSet(keys[i], &layer);
    is_new[i] = fresh;
    if (!fresh) continue;
    // Inserts are counted in runs of up to one chunk (one call per run, not per key); flushing at
    // each chunk keeps the growth check as timely as single inserts.
    if (layer != pending_layer || pending >> layers_.layer(layer).chunk_shift != 0) {
      if (pending > 0) CountInserts(pending_layer, pending);
      pending_layer = layer;
      pending = 0;
    }
    ++pending;
  }
  if (pending > 0) CountInserts(pending_layer, pending);
}

void ScalableBloomFilter::MayContainBatch(std::span<const KeyHash> keys, bool* may_contain) const {
  const size_t n = keys.size();
  auto prefetch = [&](size_t i) {
    const uint32_t layers = layers_.num_layers();
    for (uint32_t l = 0; l < layers; ++l) layers_.layer(l).filter->Prefetch(keys[i]);
  };
  for (size_t i = 0; i < std::min(n, kPrefetchDistance); ++i) prefetch(i);
  for (size_t i = 0; i < n; ++i) {
    if (i + kPrefetchDistance < n) prefetch(i + kPrefetchDistance);
    may_contain[i] = MayContain(keys[i]);
  }
}

void ScalableBloomFilter::PublishChunks(uint32_t index, uint64_t inserts) {
  Layer& layer = layers_.layer(index);
  const uint64_t total = layer.approx.fetch_add(inserts, std::memory_order_relaxed) + inserts;
  if (total >= layer.capacity) layers_.Grow(index);
}

BloomStats ScalableBloomFilter::Stats() const {
  return layers_.Stats([](const Layer&) {});
}

uint64_t ScalableBloomFilter::bytes() const { return layers_.bytes(); }

Status ScalableBloomFilter::Save(const std::string& path, uint64_t generation,
                                 const StateIdentity& identity) const {
  return layers_.Save(path, generation, identity);
}

Result<std::unique_ptr<ScalableBloomFilter>> ScalableBloomFilter::Load(const std::string& path,
                                                                       uint64_t* generation,
                                                                       StateIdentity* identity) {
  BloomOptions options;
  auto snapshot = decltype(layers_)::ReadSnapshot(path, &options);
  if (!snapshot.ok()) return snapshot.status();
  std::unique_ptr<ScalableBloomFilter> f(new ScalableBloomFilter(options));
  f->layers_.Restore(snapshot.value(), generation, identity);
  return f;
}

}  // namespace urlsieve
