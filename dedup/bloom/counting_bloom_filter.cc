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

struct CountingBloomFilter::Layer {
  Layer(std::unique_ptr<CountingBlockedBloomFilter> f, uint64_t cap, double rate, uint64_t keys)
      : filter(std::move(f)), capacity(cap), fp_rate(rate), count(keys) {}
  const std::unique_ptr<CountingBlockedBloomFilter> filter;
  const uint64_t capacity;
  const double fp_rate;
  std::atomic<uint64_t> count;  // keys added, net of removals
};

CountingBloomFilter::CountingBloomFilter(const BloomOptions& options) : options_(options) {}
CountingBloomFilter::~CountingBloomFilter() = default;

Result<std::unique_ptr<CountingBloomFilter>> CountingBloomFilter::Create(
    const BloomOptions& options) {
  URLSIEVE_RETURN_IF_ERROR(ValidateOptions(options));
  std::unique_ptr<CountingBloomFilter> f(new CountingBloomFilter(options));
  const uint64_t cap = options.LayerCapacity(0);
  const double rate = options.LayerFpRate(0);
  auto layer = CountingBlockedBloomFilter::Create(ChooseBloomLayout(cap, rate));
  if (!layer.ok()) return layer.status();
  f->layers_[0] = std::make_unique<Layer>(std::move(layer).value(), cap, rate, 0);
  f->base_ = f->layers_[0]->filter.get();
  f->num_layers_.store(1, std::memory_order_release);
  return f;
}

bool CountingBloomFilter::MayContain(const KeyHash& key) const {
  const uint32_t n = num_layers_.load(std::memory_order_acquire);
  for (uint32_t i = n; i-- > 0;) {
    if (layers_[i]->filter->MayContain(key)) return true;
  }
  return false;
}

bool CountingBloomFilter::AddLocked(const KeyHash& key, uint32_t* index) {
  // Read under the key's lock: a previous holder's insert is in a layer below this count.
  const uint32_t n = num_layers_.load(std::memory_order_acquire);
  *index = n - 1;
  Layer& layer = *layers_[n - 1];
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
  base_->LockKey(key);
  const bool fresh = !MayContain(key);
  uint32_t layer = 0;
  const bool full = fresh && AddLocked(key, &layer);
  base_->UnlockKey(key);
  if (full) Grow(layer);
  return fresh;
}

void CountingBloomFilter::InsertIfNewBatch(std::span<const KeyHash> keys, bool* is_new) {
  const size_t n = keys.size();
  auto prefetch = [&](size_t i) {
    const uint32_t layers = num_layers_.load(std::memory_order_acquire);
    for (uint32_t l = 0; l < layers; ++l) layers_[l]->filter->Prefetch(keys[i]);
  };
  for (size_t i = 0; i < std::min(n, kPrefetchDistance); ++i) prefetch(i);
  for (size_t i = 0; i < n; ++i) {
    if (i + kPrefetchDistance < n) prefetch(i + kPrefetchDistance);
    is_new[i] = InsertIfNew(keys[i]);
  }
}

void CountingBloomFilter::AddBatch(std::span<const KeyHash> keys) {
  for (const KeyHash& key : keys) {
    base_->LockKey(key);
    uint32_t layer = 0;
    const bool full = AddLocked(key, &layer);
    base_->UnlockKey(key);
    if (full) Grow(layer);
  }
}

bool CountingBloomFilter::Remove(const KeyHash& key) {
  base_->LockKey(key);
  const uint32_t n = num_layers_.load(std::memory_order_acquire);
  bool removed = false;
  // Every layer that may hold it: the key is then absent whichever layer its insert reached (a
  // layer that tests present by a false positive pays with the caveat in the header).
  for (uint32_t i = 0; i < n; ++i) {
    Layer& layer = *layers_[i];
    if (i > 0) layer.filter->LockKey(key);
    const bool was_there = layer.filter->Remove(key);
    if (i > 0) layer.filter->UnlockKey(key);
    if (!was_there) continue;
    removed = true;
    uint64_t c = layer.count.load(std::memory_order_relaxed);
    while (c > 0 && !layer.count.compare_exchange_weak(c, c - 1, std::memory_order_relaxed)) {
    }
  }
  base_->UnlockKey(key);
  return removed;
}

void CountingBloomFilter::RemoveBatch(std::span<const KeyHash> keys, bool* removed) {
  for (size_t i = 0; i < keys.size(); ++i) removed[i] = Remove(keys[i]);
}

void CountingBloomFilter::Grow(uint32_t full_index) {
  std::lock_guard<std::mutex> lock(grow_mu_);
  const uint32_t n = num_layers_.load(std::memory_order_relaxed);
  if (full_index + 1 != n || n == kMaxLayers) return;
  const uint64_t cap = options_.LayerCapacity(n);
  const double rate = options_.LayerFpRate(n);
  auto filter = CountingBlockedBloomFilter::Create(ChooseBloomLayout(cap, rate));
  if (!filter.ok()) return;  // out of memory: keep filling the current layer
  layers_[n] = std::make_unique<Layer>(std::move(filter).value(), cap, rate, 0);
  num_layers_.store(n + 1, std::memory_order_release);
}

CountingBloomStats CountingBloomFilter::Stats() const {
  CountingBloomStats cs;
  BloomStats& s = cs.bloom;
  const uint32_t n = num_layers_.load(std::memory_order_acquire);
  s.layers = n;
  uint64_t non_zero = 0;
  uint64_t usable = 0;
  double all_clear = 1;
  for (uint32_t i = 0; i < n; ++i) {
    const Layer& layer = *layers_[i];
    const uint64_t keys = layer.count.load(std::memory_order_relaxed);
    s.inserted += keys;
    s.capacity += layer.capacity;
    s.bytes += layer.filter->bytes();
    non_zero += layer.filter->CountNonZero();
    cs.saturated += layer.filter->CountSaturated();
    usable += layer.filter->layout().num_blocks * kBloomUsableBlockBits;
    all_clear *= 1 - BlockedFalsePositiveRate(layer.filter->layout(), keys);
  }
  s.fill_ratio = static_cast<double>(non_zero) / static_cast<double>(usable);
  s.expected_fp_rate = 1 - all_clear;
  s.bits_per_key =
      static_cast<double>(s.bytes) * 8 / static_cast<double>(std::max<uint64_t>(s.inserted, 1));
  return cs;
}

uint64_t CountingBloomFilter::bytes() const {
  const uint32_t n = num_layers_.load(std::memory_order_acquire);
  uint64_t total = 0;
  for (uint32_t i = 0; i < n; ++i) total += layers_[i]->filter->bytes();
  return total;
}

Status CountingBloomFilter::Save(const std::string& path, uint64_t generation,
                                 const StateIdentity& identity) const {
  const uint32_t n = num_layers_.load(std::memory_order_acquire);
  std::vector<BloomSnapshotLayerView> views;
  for (uint32_t i = 0; i < n; ++i) {
    const Layer& layer = *layers_[i];
    views.push_back({layer.capacity, layer.fp_rate, layer.count.load(std::memory_order_relaxed),
                     nullptr, layer.filter.get()});
  }
  BloomSnapshotMeta meta{options_.capacity,        options_.fp_rate, options_.first_layer_share,
                         options_.tightening,      generation,       identity,
                         kBloomSnapshotCounterBits};
  return WriteBloomSnapshot(path, meta, views);
}

Result<std::unique_ptr<CountingBloomFilter>> CountingBloomFilter::Load(const std::string& path,
                                                                       uint64_t* generation,
                                                                       StateIdentity* identity) {
  auto snapshot = ReadBloomSnapshot(path);
  if (!snapshot.ok()) return snapshot.status();
  BloomSnapshot& snap = snapshot.value();
  if (snap.meta.counter_bits == 0) {
    return Status::Corruption(
        path + ": the snapshot of a plain filter, not of a counting (deletable) one");
  }
  BloomOptions options{snap.meta.base_capacity, snap.meta.fp_rate, snap.meta.first_layer_share,
                       snap.meta.tightening};
  Status valid = ValidateOptions(options);
  if (!valid.ok()) return Status::Corruption(path + ": " + valid.message());
  if (snap.layers.empty() || snap.layers.size() > kMaxLayers) {
    return Status::Corruption(path + ": bad layer count");
  }
  std::unique_ptr<CountingBloomFilter> f(new CountingBloomFilter(options));
  for (size_t i = 0; i < snap.layers.size(); ++i) {
    BloomSnapshotLayer& src = snap.layers[i];
    f->layers_[i] =
        std::make_unique<Layer>(std::move(src.counting), src.capacity, src.fp_rate, src.inserted);
  }
  f->base_ = f->layers_[0]->filter.get();
  f->num_layers_.store(static_cast<uint32_t>(snap.layers.size()), std::memory_order_release);
  if (generation != nullptr) *generation = snap.meta.generation;
  if (identity != nullptr) *identity = snap.meta.identity;
  return f;
}

}  // namespace urlsieve
