// BloomOptions and BloomStats: the sizing and the figures of the layered Bloom filters
// (ScalableBloomFilter, CountingBloomFilter; docs/features/seen-stage.md, "The seen stage
// (SeenSet)").
//
// Error budget: a filter sized right never grows, so layer 0 gets most of it,
// ε0 = ε·first_layer_share; growth layers share the rest geometrically,
// ε_i = ε·(1 − first_layer_share)·(1 − tightening)·tightening^(i−1) for i ≥ 1; the sum is ≤ ε.
// Layer i holds capacity·2^i keys.
//
// Thread-safety: plain values.
#ifndef URLSIEVE_DEDUP_BLOOM_BLOOM_OPTIONS_H_
#define URLSIEVE_DEDUP_BLOOM_BLOOM_OPTIONS_H_

#include <cstdint>

#include "base/status.h"

namespace urlsieve {

struct BloomOptions {
  uint64_t capacity = 10'000'000;  // keys layer 0 holds at fp_rate; later layers double it
  double fp_rate = 1e-3;           // bound on the false-positive rate at any fill
  double first_layer_share = 0.9;  // ε0 = fp_rate · first_layer_share
  double tightening = 0.5;         // r: each growth layer's ε is r times the previous one's

  // The capacity and ε of layer `index` (the error budget above).
  uint64_t LayerCapacity(uint32_t index) const;
  double LayerFpRate(uint32_t index) const;
};

// InvalidArgument for a capacity outside [1, 2^48] or rates/shares outside (0, 1).
Status ValidateBloomOptions(const BloomOptions& options);

struct BloomStats {
  uint64_t inserted = 0;  // keys told "new"
  uint64_t capacity = 0;  // sum of the layers' capacities
  uint32_t layers = 0;
  uint64_t bytes = 0;           // bit arrays
  double fill_ratio = 0;        // set bits / usable bits, over all layers
  double expected_fp_rate = 0;  // from bloom_math at the layers' current loads
  double bits_per_key = 0;      // bytes · 8 / max(inserted, 1)
};

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_BLOOM_BLOOM_OPTIONS_H_
