// The Bloom filter snapshot file format
// (docs/formats/state-directory.md, "State files and the checkpoint protocol").
//
// Layout, all integers little-endian, every byte covered by a checksum (no padding):
//   fixed header, 128 bytes
//     0  magic "URLSVBLM"         8  u32 format version (2)   12 u32 header bytes (128 + 64·layers)
//     16 hash id "xxh3-128", NUL-padded to 16 bytes            32 u32 block bits (512)
//     36 u32 layer count          40 u64 generation            48 u64 base capacity
//     56 f64 fp_rate              64 f64 first_layer_share     72 f64 tightening
//     80 u64 total inserted       88 16 bytes state identity   104 u32 counter bits (version 3)
//     108 12 bytes zero
//     120 u64 XXH3-64 of the header bytes (with this field zeroed)
//   one 64-byte record per layer
//     0 u64 capacity   8 f64 ε   16 u64 inserted   24 u64 num_blocks   32 u32 bits per line
//     36 u32 lines per key   40 u64 data offset   48 u64 XXH3-64 of the bit array   56 u64 zero
//   the bit arrays (num_blocks · 64 bytes each, lock bits cleared), back to back in layer order;
//   the file ends after the last one.
// Version 3 is the counting filter's (docs/features/forgetting.md, "Forgetting";
// counting_bloom_filter.h): counter bits 4, and each layer's array is its counters, num_blocks ·
// 256 bytes (counter p of a block in bits 4·(p mod 16).. of its 64-bit word p / 16). A plain filter
// is still written as version 2 (0 at 104), so that older builds read it; a version-3 file is
// refused by them (newer version) and by a plain filter's Load, and a version-2 file by the
// counting filter's. The state identity (state_identity.h) and the generation say which state
// directory and which checkpoint the snapshot belongs to. Version 1 had zeros at 88 (no identity):
// it is still read, with a zero identity.
// A reader rejects: a short file or bad sizes/offsets or checksum mismatch (Corruption), a foreign
// magic (Corruption), a version above its own or another hash id or block size (Unsupported).
//
// Thread-safety: free functions without shared state. WriteBloomSnapshot reads the layers' bits
// with atomic loads, so inserts may continue while it runs.
#ifndef URLSIEVE_DEDUP_BLOOM_BLOOM_SNAPSHOT_H_
#define URLSIEVE_DEDUP_BLOOM_BLOOM_SNAPSHOT_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "dedup/bloom/blocked_bloom_filter.h"
#include "dedup/bloom/counting_blocked_bloom_filter.h"
#include "dedup/state/state_identity.h"

namespace urlsieve {

inline constexpr uint32_t kBloomSnapshotVersion = 3;  // the newest this build reads
inline constexpr uint32_t kBloomSnapshotCounterBits = CountingBlockedBloomFilter::kCounterBits;

struct BloomSnapshotMeta {
  uint64_t base_capacity = 0;
  double fp_rate = 0;
  double first_layer_share = 0;
  double tightening = 0;
  uint64_t generation = 0;
  StateIdentity identity;     // zero in a version-1 file
  uint32_t counter_bits = 0;  // 0: a plain filter (bits); kBloomSnapshotCounterBits: counting
};

struct BloomSnapshotLayerView {
  uint64_t capacity = 0;
  double fp_rate = 0;
  uint64_t inserted = 0;
  const BlockedBloomFilter* filter = nullptr;            // a plain filter's layer, or
  const CountingBlockedBloomFilter* counting = nullptr;  // a counting filter's
};

struct BloomSnapshotLayer {
  uint64_t capacity = 0;
  double fp_rate = 0;
  uint64_t inserted = 0;
  std::unique_ptr<BlockedBloomFilter> filter;            // meta.counter_bits == 0
  std::unique_ptr<CountingBlockedBloomFilter> counting;  // meta.counter_bits != 0
};

struct BloomSnapshot {
  BloomSnapshotMeta meta;
  std::vector<BloomSnapshotLayer> layers;
};

// Atomic replace of `path`: temp file in the same directory, fsync, rename, fsync the directory.
// On failure the temp file is removed and `path` is untouched.
Status WriteBloomSnapshot(const std::string& path, const BloomSnapshotMeta& meta,
                          std::span<const BloomSnapshotLayerView> layers);
// Validates everything before returning; never writes to `path`.
Result<BloomSnapshot> ReadBloomSnapshot(const std::string& path);

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_BLOOM_BLOOM_SNAPSHOT_H_
