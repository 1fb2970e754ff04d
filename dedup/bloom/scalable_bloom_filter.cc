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

Status ValidateOptions(const BloomOptions& o) {
  if (o.capacity == 0 || o.capacity > (uint64_t{1} << 48)) {
    return Status::InvalidArgument("bloom capacity must be in [1, 2^48]");
  }
  if (!(o.fp_rate > 0 && o.fp_rate < 1)) {
    return Status::InvalidArgument("bloom fp_rate must be in (0, 1)");
  }
  if (!(o.first_layer_share > 0 && o.first_layer_share < 1)) {
    return Status::InvalidArgument("bloom first_layer_share must be in (0, 1)");
  }
  if (!(o.tightening > 0 && o.tightening < 1)) {
    return Status::InvalidArgument("bloom tightening must be in (0, 1)");
  }
  return Status::Ok();
}

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

  uint64_t Inserted() const {
    uint64_t sum = 0;
    for (const Shard& s : shards) sum += s.count.load(std::memory_order_relaxed);
    return sum;
  }

  const std::unique_ptr<BlockedBloomFilter> filter;
  const uint64_t capacity;
  const double fp_rate;
  const int chunk_shift;  // a chunk is 2^chunk_shift inserts
  std::array<Shard, kCounterShards> shards;
  alignas(64) std::atomic<uint64_t> approx{0};
};

ScalableBloomFilter::ScalableBloomFilter(const BloomOptions& options) : options_(options) {}
ScalableBloomFilter::~ScalableBloomFilter() = default;

uint64_t BloomOptions::LayerCapacity(uint32_t index) const {
  // Doubling saturates rather than overflows (capacity ≤ 2^48); such layers are out of reach.
  const uint32_t shift = std::min<uint32_t>(index, 63 - std::bit_width(capacity));
  return capacity << shift;
}

double BloomOptions::LayerFpRate(uint32_t index) const {
  const double eps = fp_rate;
  const double share = first_layer_share;
  const double r = tightening;
  if (index == 0) return eps * share;
  return eps * (1 - share) * (1 - r) * std::pow(r, index - 1);
}

Result<std::unique_ptr<ScalableBloomFilter>> ScalableBloomFilter::Create(
    const BloomOptions& options) {
  URLSIEVE_RETURN_IF_ERROR(ValidateOptions(options));
  std::unique_ptr<ScalableBloomFilter> f(new ScalableBloomFilter(options));
  const uint64_t cap = options.LayerCapacity(0);
  const double rate = options.LayerFpRate(0);
  auto layer = BlockedBloomFilter::Create(ChooseBloomLayout(cap, rate));
  if (!layer.ok()) return layer.status();
  f->layers_[0] = std::make_unique<Layer>(std::move(layer).value(), cap, rate);
  f->base_ = f->layers_[0]->filter.get();
  f->num_layers_.store(1, std::memory_order_release);
  return f;
}

// Inline: on the single-insert path a call costs as much as the count.
inline void ScalableBloomFilter::CountInserts(uint32_t index, uint64_t count) {
  Layer& layer = *layers_[index];
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
  switch (base_->InsertLockedIf(key, num_layers_, 1)) {
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
  const uint32_t n = num_layers_.load(std::memory_order_acquire);
  *inserted_layer = n - 1;
  bool fresh = true;
  for (uint32_t i = 0; i + 1 < n && fresh; ++i) fresh = !layers_[i]->filter->MayContain(key);
  if (fresh) fresh = layers_[n - 1]->filter->InsertAtomic(key);
  base_->UnlockKey(key);
  return fresh;
}

bool ScalableBloomFilter::InsertIfNew(const KeyHash& key) {
  uint32_t layer = 0;
  const bool fresh = TestAndSet(key, &layer);
  if (fresh) CountInserts(layer, 1);
  return fresh;
}

bool ScalableBloomFilter::MayContain(const KeyHash& key) const {
  const uint32_t n = num_layers_.load(std::memory_order_acquire);
  for (uint32_t i = n; i-- > 0;) {
    if (layers_[i]->filter->MayContain(key)) return true;
  }
  return false;
}

void ScalableBloomFilter::InsertIfNewBatch(std::span<const KeyHash> keys, bool* is_new) {
  const size_t n = keys.size();
  const BlockedBloomFilter& base = *base_;
  auto prefetch = [&](size_t i) {
    BlockedBloomFilter::PrefetchLine(base.LineOf(keys[i]));
    const uint32_t layers = num_layers_.load(std::memory_order_acquire);
    for (uint32_t l = 1; l < layers; ++l) layers_[l]->filter->Prefetch(keys[i]);
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
    if (layer != pending_layer || pending >> layers_[layer]->chunk_shift != 0) {
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
    const uint32_t layers = num_layers_.load(std::memory_order_acquire);
    for (uint32_t l = 0; l < layers; ++l) layers_[l]->filter->Prefetch(keys[i]);
  };
  for (size_t i = 0; i < std::min(n, kPrefetchDistance); ++i) prefetch(i);
  for (size_t i = 0; i < n; ++i) {
    if (i + kPrefetchDistance < n) prefetch(i + kPrefetchDistance);
    may_contain[i] = MayContain(keys[i]);
  }
}

void ScalableBloomFilter::PublishChunks(uint32_t index, uint64_t inserts) {
  Layer& layer = *layers_[index];
  const uint64_t total = layer.approx.fetch_add(inserts, std::memory_order_relaxed) + inserts;
  if (total >= layer.capacity) Grow(index);
}

void ScalableBloomFilter::Grow(uint32_t full_index) {
  std::lock_guard<std::mutex> lock(grow_mu_);
  const uint32_t n = num_layers_.load(std::memory_order_relaxed);
  // Already grown by another inserter, or out of layers (the newest then fills past capacity and
  // Stats shows the rising expected rate).
  if (full_index + 1 != n || n == kMaxLayers) return;
  const uint64_t cap = options_.LayerCapacity(n);
  const double rate = options_.LayerFpRate(n);
  auto filter = BlockedBloomFilter::Create(ChooseBloomLayout(cap, rate));
  if (!filter.ok()) return;  // out of memory: keep filling the current layer, as above
  layers_[n] = std::make_unique<Layer>(std::move(filter).value(), cap, rate);
  num_layers_.store(n + 1, std::memory_order_release);
}

BloomStats ScalableBloomFilter::Stats() const {
  BloomStats s;
  const uint32_t n = num_layers_.load(std::memory_order_acquire);
  s.layers = n;
  uint64_t set_bits = 0;
  uint64_t usable_bits = 0;
  double all_clear = 1;  // P(a query passes no layer)
  for (uint32_t i = 0; i < n; ++i) {
    const Layer& layer = *layers_[i];
    const uint64_t inserted = layer.Inserted();
    s.inserted += inserted;
    s.capacity += layer.capacity;
    s.bytes += layer.filter->bytes();
    set_bits += layer.filter->CountSetBits();
    usable_bits += layer.filter->layout().num_blocks * kBloomUsableBlockBits;
    all_clear *= 1 - BlockedFalsePositiveRate(layer.filter->layout(), inserted);
  }
  s.fill_ratio = static_cast<double>(set_bits) / static_cast<double>(usable_bits);
  s.expected_fp_rate = 1 - all_clear;
  s.bits_per_key =
      static_cast<double>(s.bytes) * 8 / static_cast<double>(std::max<uint64_t>(s.inserted, 1));
  return s;
}

uint64_t ScalableBloomFilter::bytes() const {
  const uint32_t n = num_layers_.load(std::memory_order_acquire);
  uint64_t total = 0;
  for (uint32_t i = 0; i < n; ++i) total += layers_[i]->filter->bytes();
  return total;
}

Status ScalableBloomFilter::Save(const std::string& path, uint64_t generation,
                                 const StateIdentity& identity) const {
  const uint32_t n = num_layers_.load(std::memory_order_acquire);
  std::vector<BloomSnapshotLayerView> views;
  for (uint32_t i = 0; i < n; ++i) {
    const Layer& layer = *layers_[i];
    views.push_back({layer.capacity, layer.fp_rate, layer.Inserted(), layer.filter.get()});
  }
  BloomSnapshotMeta meta{options_.capacity,   options_.fp_rate, options_.first_layer_share,
                         options_.tightening, generation,       identity};
  return WriteBloomSnapshot(path, meta, views);
}

Result<std::unique_ptr<ScalableBloomFilter>> ScalableBloomFilter::Load(const std::string& path,
                                                                       uint64_t* generation,
                                                                       StateIdentity* identity) {
  auto snapshot = ReadBloomSnapshot(path);
  if (!snapshot.ok()) return snapshot.status();
  BloomSnapshot& snap = snapshot.value();
  if (snap.meta.counter_bits != 0) {
    return Status::Corruption(
        path + ": the snapshot of a counting (deletable) filter, not of a plain one");
  }
  BloomOptions options{snap.meta.base_capacity, snap.meta.fp_rate, snap.meta.first_layer_share,
                       snap.meta.tightening};
  Status valid = ValidateOptions(options);
  if (!valid.ok()) return Status::Corruption(path + ": " + valid.message());
  if (snap.layers.empty() || snap.layers.size() > kMaxLayers) {
    return Status::Corruption(path + ": bad layer count");
  }
  std::unique_ptr<ScalableBloomFilter> f(new ScalableBloomFilter(options));
  for (size_t i = 0; i < snap.layers.size(); ++i) {
    BloomSnapshotLayer& src = snap.layers[i];
    auto layer = std::make_unique<Layer>(std::move(src.filter), src.capacity, src.fp_rate);
    layer->shards[kSharedThreadSlot].count.store(src.inserted, std::memory_order_relaxed);
    layer->approx.store(src.inserted, std::memory_order_relaxed);
    f->layers_[i] = std::move(layer);
  }
  f->base_ = f->layers_[0]->filter.get();
  f->num_layers_.store(static_cast<uint32_t>(snap.layers.size()), std::memory_order_release);
  if (generation != nullptr) *generation = snap.meta.generation;
  if (identity != nullptr) *identity = snap.meta.identity;
  return f;
}

}  // namespace urlsieve
