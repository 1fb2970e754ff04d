// CountingBloomFilter: the deletable URL-seen Bloom filter (docs/features/forgetting.md,
// "Forgetting"): the scalable filter of scalable_bloom_filter.h with counting layers
// (counting_blocked_bloom_filter.h) instead of bit layers, so that Remove can forget a key.
//
// Same sizing and growth as ScalableBloomFilter, from the same BloomOptions: layer 0 holds
// `capacity` keys at ε·first_layer_share, each growth layer twice the previous capacity at a
// geometrically tighter ε, the sum ≤ fp_rate; a layer's layout is ChooseBloomLayout's, so the
// false-positive rate equals the plain filter's at the same parameters. Memory: 4 bits per
// position instead of 1, 4x the plain filter's bytes (e.g. 57.5 bits per key at ε = 1e-3 against
// 14.4).
//
// A layer's key count is net of removals; the newest layer grows the filter when it reaches its
// capacity (removals from older layers give no room back: their ε was budgeted).
//
// Remove(key) decrements the key's counters in every layer that may contain it, so the key is
// absent afterwards (unless all of its counters in a layer are saturated, a chance of about
// (kn/m)^15/15! per counter at the design load: negligible). The caveat of every counting Bloom
// filter: removing a key that was never inserted but tests present (a false positive, at most ε)
// decrements other keys' counters and can make one of them absent. The seen set forgets only
// what the caller names; exact mode (ExactSeenSet) has no such caveat.
//
// Thread-safety: all members may be called concurrently. A key's lock is its block lock(s) in
// layer 0, which exists for the filter's lifetime (as in ScalableBloomFilter): InsertIfNew and
// Remove of one key hold it across the test and the update, so exactly one of several concurrent
// inserts of a key is told "new", and a remove never interleaves with an insert of the same key.
// Every write to a block holds that block's lock (counting_blocked_bloom_filter.h: a write to a
// growth layer takes its blocks' locks too, always after layer 0's and one layer at a time, so
// no cycle can form), and counters are rewritten with plain stores. MayContain takes no lock.
// Growth as in ScalableBloomFilter: the layers, their growth, statistics and snapshots are
// LayeredBloomFilter's (layered_bloom_filter.h).
#ifndef URLSIEVE_DEDUP_BLOOM_COUNTING_BLOOM_FILTER_H_
#define URLSIEVE_DEDUP_BLOOM_COUNTING_BLOOM_FILTER_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>

#include "base/status.h"
#include "dedup/bloom/counting_blocked_bloom_filter.h"
#include "dedup/bloom/key_hash.h"
#include "dedup/bloom/layered_bloom_filter.h"
#include "dedup/bloom/scalable_bloom_filter.h"
#include "dedup/state/state_identity.h"

namespace urlsieve {

struct CountingBloomStats {
  BloomStats bloom;        // fill_ratio: non-zero counters / usable counters
  uint64_t saturated = 0;  // counters at 15
};

class CountingBloomFilter {
 public:
  static constexpr uint32_t kMaxLayers = ScalableBloomFilter::kMaxLayers;

  // InvalidArgument for options out of range (as ScalableBloomFilter::Create); IoError if memory
  // cannot be mapped.
  static Result<std::unique_ptr<CountingBloomFilter>> Create(const BloomOptions& options);

  CountingBloomFilter(const CountingBloomFilter&) = delete;
  CountingBloomFilter& operator=(const CountingBloomFilter&) = delete;
  ~CountingBloomFilter();

  // True: the key was absent from every layer and is now in the newest.
  bool InsertIfNew(const KeyHash& key);
  void InsertIfNewBatch(std::span<const KeyHash> keys, bool* is_new);
  bool MayContain(const KeyHash& key) const;
  // True: the key may have been present (in some layer) and its counters were decremented.
  bool Remove(const KeyHash& key);
  void RemoveBatch(std::span<const KeyHash> keys, bool* removed);
  // Replay of a delta log (bloom_delta_log.h): adds the key to the newest layer without testing
  // the others (it was told new when it was recorded).
  void AddBatch(std::span<const KeyHash> keys);

  CountingBloomStats Stats() const;
  uint64_t bytes() const;
  const BloomOptions& options() const { return layers_.options(); }

  // As ScalableBloomFilter::Save / Load; the snapshot is a counting one (bloom_snapshot.h,
  // version 3), which ScalableBloomFilter::Load refuses and Load requires.
  Status Save(const std::string& path, uint64_t generation = 0,
              const StateIdentity& identity = StateIdentity()) const;
  static Result<std::unique_ptr<CountingBloomFilter>> Load(const std::string& path,
                                                           uint64_t* generation = nullptr,
                                                           StateIdentity* identity = nullptr);

 private:
  struct Layer;
  explicit CountingBloomFilter(const BloomOptions& options);
  // Adds to the newest layer, under the key's lock (layer 0's); true when that layer is full.
  bool AddLocked(const KeyHash& key, uint32_t* layer);

  // The options, the layers (layer 0's block locks are the keys'), the count and the growth lock.
  LayeredBloomFilter<CountingBlockedBloomFilter, Layer> layers_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_BLOOM_COUNTING_BLOOM_FILTER_H_
