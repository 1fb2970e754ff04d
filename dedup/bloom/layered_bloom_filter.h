// LayeredBloomFilter<Filter, Layer>: the stack of layers that ScalableBloomFilter (bit layers,
// BlockedBloomFilter) and CountingBloomFilter (counting layers, CountingBlockedBloomFilter) share:
// the layers' sizes, growth, membership test, statistics and snapshots (bloom_snapshot.h). The
// owning filter keeps what differs: how a key is inserted, removed and counted, and its locks.
//
// `Layer` is the owner's layer type, with at least
//   Layer(std::unique_ptr<Filter> filter, uint64_t capacity, double fp_rate);
//   const std::unique_ptr<Filter> filter; const uint64_t capacity; const double fp_rate;
//   uint64_t Keys() const;            // keys the layer holds (relaxed loads)
//   void RestoreKeys(uint64_t keys);  // before the layer is published
// Filter decides the snapshot kind read and written: plain (counter_bits 0) for BlockedBloomFilter,
// counting for CountingBlockedBloomFilter.
//
// Thread-safety: as the owners' headers state. layer(i) is valid for i < num_layers(), read with
// acquire: layers_[i] is written once, fully built, before the release store of the layer count
// publishes it (AddFirstLayer and Restore before the object is shared, Grow under grow_mu_).
// MayContain, Stats, bytes and Save read without locks.
#ifndef URLSIEVE_DEDUP_BLOOM_LAYERED_BLOOM_FILTER_H_
#define URLSIEVE_DEDUP_BLOOM_LAYERED_BLOOM_FILTER_H_

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/status.h"
#include "dedup/bloom/bloom_math.h"
#include "dedup/bloom/bloom_options.h"
#include "dedup/bloom/bloom_snapshot.h"
#include "dedup/bloom/key_hash.h"
#include "dedup/state/state_identity.h"

namespace urlsieve {

inline constexpr uint32_t kMaxBloomLayers = 40;

template <typename Filter, typename Layer>
class LayeredBloomFilter {
 public:
  static constexpr bool kCounting = std::is_same_v<Filter, CountingBlockedBloomFilter>;
  static_assert(kCounting || std::is_same_v<Filter, BlockedBloomFilter>);

  explicit LayeredBloomFilter(const BloomOptions& options) : options_(options) {}
  LayeredBloomFilter(const LayeredBloomFilter&) = delete;
  LayeredBloomFilter& operator=(const LayeredBloomFilter&) = delete;

  // Adds layer 0 of an empty filter (IoError if memory cannot be mapped); before the object is
  // shared. The options must be valid (ValidateBloomOptions).
  Status AddFirstLayer() {
    const uint64_t cap = options_.LayerCapacity(0);
    const double rate = options_.LayerFpRate(0);
    auto filter = Filter::Create(ChooseBloomLayout(cap, rate));
    if (!filter.ok()) return filter.status();
    layers_[0] = std::make_unique<Layer>(std::move(filter).value(), cap, rate);
    base_ = layers_[0]->filter.get();
    num_layers_.store(1, std::memory_order_release);
    return Status::Ok();
  }

  // The snapshot at `path`, checked to be of this kind (plain or counting) with valid options and
  // 1 to kMaxBloomLayers layers; *options are its options. Corruption naming `path` otherwise, or
  // ReadBloomSnapshot's error.
  static Result<BloomSnapshot> ReadSnapshot(const std::string& path, BloomOptions* options) {
    auto snapshot = ReadBloomSnapshot(path);
    if (!snapshot.ok()) return snapshot.status();
    BloomSnapshot& snap = snapshot.value();
    if (kCounting && snap.meta.counter_bits == 0) {
      return Status::Corruption(
          path + ": the snapshot of a plain filter, not of a counting (deletable) one");
    }
    if (!kCounting && snap.meta.counter_bits != 0) {
      return Status::Corruption(
          path + ": the snapshot of a counting (deletable) filter, not of a plain one");
    }
    *options = BloomOptions{snap.meta.base_capacity, snap.meta.fp_rate, snap.meta.first_layer_share,
                            snap.meta.tightening};
    Status valid = ValidateBloomOptions(*options);
    if (!valid.ok()) return Status::Corruption(path + ": " + valid.message());
    if (snap.layers.empty() || snap.layers.size() > kMaxBloomLayers) {
      return Status::Corruption(path + ": bad layer count");
    }
    return snapshot;
  }

  // Takes the layers of a snapshot that ReadSnapshot returned (with this object's options); before
  // the object is shared. Stores the snapshot's generation and identity where not null.
  void Restore(BloomSnapshot& snap, uint64_t* generation, StateIdentity* identity) {
    for (size_t i = 0; i < snap.layers.size(); ++i) {
      BloomSnapshotLayer& src = snap.layers[i];
      std::unique_ptr<Filter>& filter = LayerFilter(src);
      layers_[i] = std::make_unique<Layer>(std::move(filter), src.capacity, src.fp_rate);
      layers_[i]->RestoreKeys(src.inserted);
    }
    base_ = layers_[0]->filter.get();
    num_layers_.store(static_cast<uint32_t>(snap.layers.size()), std::memory_order_release);
    if (generation != nullptr) *generation = snap.meta.generation;
    if (identity != nullptr) *identity = snap.meta.identity;
  }

  const BloomOptions& options() const { return options_; }
  uint32_t num_layers() const { return num_layers_.load(std::memory_order_acquire); }
  // The layer count itself, for a guard read under a key's lock (BlockedBloomFilter's
  // InsertLockedIf).
  const std::atomic<uint32_t>& layer_count() const { return num_layers_; }
  Layer& layer(uint32_t index) const { return *layers_[index]; }
  // Layer 0's filter: it exists for the object's lifetime, and its block locks are the keys'.
  Filter* base() const { return base_; }

  bool MayContain(const KeyHash& key) const {
    const uint32_t n = num_layers();
    for (uint32_t i = n; i-- > 0;) {
      if (layers_[i]->filter->MayContain(key)) return true;
    }
    return false;
  }

  // Adds a layer when layer `full_index` is the newest. Nothing when another caller grew the
  // filter already, when it has kMaxBloomLayers layers (the newest then fills past its capacity
  // and Stats shows the rising expected rate), or when memory cannot be mapped (the same).
  void Grow(uint32_t full_index) {
    std::lock_guard<std::mutex> lock(grow_mu_);
    const uint32_t n = num_layers_.load(std::memory_order_relaxed);
    if (full_index + 1 != n || n == kMaxBloomLayers) return;
    const uint64_t cap = options_.LayerCapacity(n);
    const double rate = options_.LayerFpRate(n);
    auto filter = Filter::Create(ChooseBloomLayout(cap, rate));
    if (!filter.ok()) return;
    layers_[n] = std::make_unique<Layer>(std::move(filter).value(), cap, rate);
    num_layers_.store(n + 1, std::memory_order_release);
  }

  // Reads every layer (O(bytes)); visit(layer) is called once for each, for the owner's figures.
  // fill_ratio counts set bits (plain) or non-zero counters (counting).
  template <typename Visit>
  BloomStats Stats(Visit&& visit) const {
    BloomStats s;
    const uint32_t n = num_layers();
    s.layers = n;
    uint64_t occupied = 0;
    uint64_t usable = 0;
    double all_clear = 1;  // P(a query passes no layer)
    for (uint32_t i = 0; i < n; ++i) {
      const Layer& layer = *layers_[i];
      const uint64_t keys = layer.Keys();
      s.inserted += keys;
      s.capacity += layer.capacity;
      s.bytes += layer.filter->bytes();
      if constexpr (kCounting) {
        occupied += layer.filter->CountNonZero();
      } else {
        occupied += layer.filter->CountSetBits();
      }
      visit(layer);
      usable += layer.filter->layout().num_blocks * kBloomUsableBlockBits;
      all_clear *= 1 - BlockedFalsePositiveRate(layer.filter->layout(), keys);
    }
    s.fill_ratio = static_cast<double>(occupied) / static_cast<double>(usable);
    s.expected_fp_rate = 1 - all_clear;
    s.bits_per_key =
        static_cast<double>(s.bytes) * 8 / static_cast<double>(std::max<uint64_t>(s.inserted, 1));
    return s;
  }

  // The layers' sizes without reading them: O(layers).
  uint64_t bytes() const {
    const uint32_t n = num_layers();
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; ++i) total += layers_[i]->filter->bytes();
    return total;
  }

  // WriteBloomSnapshot of the layers published when it starts (see the owners' Save).
  Status Save(const std::string& path, uint64_t generation, const StateIdentity& identity) const {
    const uint32_t n = num_layers();
    std::vector<BloomSnapshotLayerView> views;
    for (uint32_t i = 0; i < n; ++i) {
      const Layer& layer = *layers_[i];
      BloomSnapshotLayerView view{layer.capacity, layer.fp_rate, layer.Keys()};
      if constexpr (kCounting) {
        view.counting = layer.filter.get();
      } else {
        view.filter = layer.filter.get();
      }
      views.push_back(view);
    }
    BloomSnapshotMeta meta{options_.capacity,
                           options_.fp_rate,
                           options_.first_layer_share,
                           options_.tightening,
                           generation,
                           identity,
                           kCounting ? kBloomSnapshotCounterBits : 0};
    return WriteBloomSnapshot(path, meta, views);
  }

 private:
  static std::unique_ptr<Filter>& LayerFilter(BloomSnapshotLayer& src) {
    if constexpr (kCounting) {
      return src.counting;
    } else {
      return src.filter;
    }
  }

  BloomOptions options_;
  std::array<std::unique_ptr<Layer>, kMaxBloomLayers> layers_;
  std::atomic<uint32_t> num_layers_{0};
  Filter* base_ = nullptr;
  std::mutex grow_mu_;  // serializes Grow
};

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_BLOOM_LAYERED_BLOOM_FILTER_H_
