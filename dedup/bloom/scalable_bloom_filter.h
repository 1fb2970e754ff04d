// ScalableBloomFilter: the concurrent URL-seen Bloom filter
// (docs/features/seen-stage.md, "The seen stage (SeenSet)"). A stack of blocked
// layers (Almeida, Baquero, Preguiça, Hutchison, "Scalable Bloom Filters", 2007): when the newest
// layer holds its capacity, a layer with twice the capacity and a tighter ε is added, so the
// false-positive rate stays ≤ options.fp_rate however many keys arrive.
//
// Error budget: bloom_options.h. The layers, their growth, statistics and snapshots are
// LayeredBloomFilter's (layered_bloom_filter.h), shared with CountingBloomFilter.
//
// Thread-safety: all members may be called concurrently.
//  - MayContain / MayContainBatch / Stats: lock-free (relaxed loads of the bits; acquire load of
//    the layer count).
//  - InsertIfNew / InsertIfNewBatch: exactly one of several concurrent callers with the same key is
//    told "new" (invariant 5; with a false positive, none is). The key's lock is bit 0 of its block
//    in layer 0, which exists for the filter's lifetime: same key, same lock, whatever layers are
//    added meanwhile. Under it the caller tests the older layers and test-and-sets the newest. The
//    lock shares the cache line of the key's layer-0 bits, so it costs no extra miss, and because
//    every write to a layer-0 block happens under that block's lock, layer 0 is updated with plain
//    stores: one locked instruction per insert (see BlockedBloomFilter's "locked discipline").
//    Growth layers are written with fetch_or (their blocks are not covered by those locks).
//  - Growth: the inserter whose insert reaches the newest layer's capacity adds a layer under
//    grow_mu_; the new layer is fully built before the release store of the layer count publishes
//    it. Inserts racing with growth may land in the previous layer (it overshoots its capacity by
//    < 1 %); an insert that read the new count sees every bit set by earlier holders of the key's
//    lock, because lock release/acquire orders them.
//  - Counters: per layer, sharded by thread slot (thread_slot.h), so a thread counts its inserts
//    with a plain load and store, not a second locked instruction; a shard passes its count to
//    the shared growth counter once per chunk of ≤ 256 inserts (≤ capacity/65536).
#ifndef URLSIEVE_DEDUP_BLOOM_SCALABLE_BLOOM_FILTER_H_
#define URLSIEVE_DEDUP_BLOOM_SCALABLE_BLOOM_FILTER_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>

#include "base/status.h"
#include "dedup/bloom/blocked_bloom_filter.h"
#include "dedup/bloom/bloom_options.h"
#include "dedup/bloom/key_hash.h"
#include "dedup/bloom/layered_bloom_filter.h"
#include "dedup/state/state_identity.h"

namespace urlsieve {

class ScalableBloomFilter {
 public:
  static constexpr uint32_t kMaxLayers = kMaxBloomLayers;

  // InvalidArgument for a capacity outside [1, 2^48] or rates/shares outside (0, 1); IoError if
  // memory cannot be mapped.
  static Result<std::unique_ptr<ScalableBloomFilter>> Create(const BloomOptions& options);

  ScalableBloomFilter(const ScalableBloomFilter&) = delete;
  ScalableBloomFilter& operator=(const ScalableBloomFilter&) = delete;
  ~ScalableBloomFilter();

  // True: the key was definitely absent and is now in.
  bool InsertIfNew(const KeyHash& key);
  bool MayContain(const KeyHash& key) const;
  // One answer per key, in order (is_new / may_contain point to keys.size() bools). Computes block
  // addresses and prefetches a window ahead, so misses overlap. A key repeated in one batch is new
  // at most once.
  void InsertIfNewBatch(std::span<const KeyHash> keys, bool* is_new);
  void MayContainBatch(std::span<const KeyHash> keys, bool* may_contain) const;

  // Reads every bit array (for the fill ratio): O(bytes), not for a hot loop.
  BloomStats Stats() const;
  // The bit arrays' size (Stats().bytes) without reading them: O(layers).
  uint64_t bytes() const;
  const BloomOptions& options() const { return layers_.options(); }

  // Writes a snapshot atomically (temp file in the same directory, fsync, rename, fsync directory):
  // a crash mid-save leaves the previous file intact. `generation` and `identity` (the state's,
  // see state_identity.h) are stored opaquely for the owner. Inserts may run meanwhile; each key
  // inserted before Save began is in the snapshot.
  Status Save(const std::string& path, uint64_t generation = 0,
              const StateIdentity& identity = StateIdentity()) const;
  // Corruption for a truncated, damaged or foreign file; Unsupported for a newer format version or
  // another hash; NotFound for a missing file. Never modifies the file. *identity is zero for a
  // version-1 snapshot (written before identities existed).
  static Result<std::unique_ptr<ScalableBloomFilter>> Load(const std::string& path,
                                                           uint64_t* generation = nullptr,
                                                           StateIdentity* identity = nullptr);

 private:
  struct Layer;
  explicit ScalableBloomFilter(const BloomOptions& options);

  // Records `count` keys newly inserted into layer `index`; grows when it is full.
  inline void CountInserts(uint32_t index, uint64_t count);
  // Adds completed chunks of inserts to layer `index`'s growth counter; grows when it is full.
  void PublishChunks(uint32_t index, uint64_t inserts);
  // Exactly-one-new test-and-set of the key across all layers; reports the layer written to.
  [[gnu::always_inline]] inline bool TestAndSet(const KeyHash& key, uint32_t* inserted_layer);

  // The options, the layers (layer(0).filter is base()), the layer count and the growth lock.
  LayeredBloomFilter<BlockedBloomFilter, Layer> layers_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_BLOOM_SCALABLE_BLOOM_FILTER_H_
