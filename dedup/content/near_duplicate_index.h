// NearDuplicateIndex: 64-bit fingerprints (SimHash) with a 48-bit value each, answering "is there
// one within Hamming distance k of this one?" (docs/features/content-seen.md, "The near index").
//
// Manku, Jain and Das Sarma (WWW 2007): split the 64 bits into k+1 blocks; two fingerprints within
// distance k agree exactly on at least one block (pigeonhole), so k+1 tables, table j keyed by
// block j, find every candidate, and a popcount of the XOR checks each. A table is 2^b buckets
// (b = the block's bits: 16 for k = 3), addressed by the block's value; a bucket holds the other
// 64 - b bits of each fingerprint, packed (6 bytes for k = 3), and table 0 also the value (6
// bytes). Buckets grow by an eighth, so memory stays within 9/8 of the packed entries: about 34
// bytes per fingerprint at k = 3, plus 2^b bucket headers per table. A query reads k+1 buckets of
// about n / 2^b entries each (n / 65536 at k = 3). Blocks wider than 16 bits (k = 0 .. 2) address
// their table by their top 16 bits (2^16 buckets; the entry keeps the rest), so their queries read
// n / 65536 entries per table too; k > 3 has more, smaller tables and entries of 7 bytes.
// Thread-safety: none; the caller serialises (const methods may run concurrently with each other).
#ifndef URLSIEVE_DEDUP_CONTENT_NEAR_DUPLICATE_INDEX_H_
#define URLSIEVE_DEDUP_CONTENT_NEAR_DUPLICATE_INDEX_H_

#include <cstdint>
#include <memory>
#include <optional>

namespace urlsieve {

struct NearMatch {
  uint64_t fingerprint = 0;  // the stored fingerprint found
  uint64_t value = 0;        // its value
  int distance = 0;          // HammingDistance(query, fingerprint) <= max_distance
};

class NearDuplicateIndex {
 public:
  static constexpr uint64_t kMaxValue = (uint64_t{1} << 48) - 1;

  // max_distance: k, 0 .. 7 (k + 1 blocks of 64 / (k + 1) bits, the first ones one bit wider).
  explicit NearDuplicateIndex(int max_distance = 3);
  ~NearDuplicateIndex();
  NearDuplicateIndex(NearDuplicateIndex&&) noexcept;
  NearDuplicateIndex& operator=(NearDuplicateIndex&&) noexcept;

  // The nearest stored fingerprint within max_distance (the smallest value among equally near
  // ones: the first inserted when values grow, as LocalContentSeenSet's do), or nullopt.
  std::optional<NearMatch> Find(uint64_t fingerprint) const;
  // Stores (fingerprint, value): value <= kMaxValue. A fingerprint may be stored more than once.
  void Insert(uint64_t fingerprint, uint64_t value);
  // Find, and Insert when nothing is within max_distance; returns what Find returned.
  std::optional<NearMatch> FindOrInsert(uint64_t fingerprint, uint64_t value);
  // Removes the entry (fingerprint, value); false when it is not stored.
  bool Erase(uint64_t fingerprint, uint64_t value);

  int max_distance() const;
  uint64_t size() const;
  uint64_t memory_bytes() const;  // buckets' capacity and headers: what the index holds

 private:
  struct Tables;
  std::unique_ptr<Tables> tables_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_CONTENT_NEAR_DUPLICATE_INDEX_H_
