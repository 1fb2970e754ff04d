// ExactContentIndex: 64-bit payload digests (the first 8 bytes of a page's SHA-1) with a 48-bit
// value each: the first copy of each payload (docs/features/content-seen.md, "The exact index").
//
// 65536 buckets addressed by the digest's top 16 bits; a bucket holds the other 48 bits and the
// value, packed (12 bytes), and grows by an eighth: about 14 bytes per digest, plus the bucket
// headers. Two payloads whose SHA-1s share 64 bits are taken as one (probability ~n^2 / 2^65).
// Thread-safety: none; the caller serialises (const methods may run concurrently with each other).
#ifndef URLSIEVE_DEDUP_CONTENT_EXACT_CONTENT_INDEX_H_
#define URLSIEVE_DEDUP_CONTENT_EXACT_CONTENT_INDEX_H_

#include <cstdint>
#include <memory>
#include <optional>

namespace urlsieve {

class ExactContentIndex {
 public:
  static constexpr uint64_t kMaxValue = (uint64_t{1} << 48) - 1;

  ExactContentIndex();
  ~ExactContentIndex();
  ExactContentIndex(ExactContentIndex&&) noexcept;
  ExactContentIndex& operator=(ExactContentIndex&&) noexcept;

  std::optional<uint64_t> Find(uint64_t digest) const;
  // Stores digest -> value when the digest is not stored; returns the value stored before (the
  // first copy's), or nullopt when this call stored it. value <= kMaxValue.
  std::optional<uint64_t> FindOrInsert(uint64_t digest, uint64_t value);
  bool Erase(uint64_t digest);  // false when not stored

  uint64_t size() const;
  uint64_t memory_bytes() const;

 private:
  struct Buckets;
  std::unique_ptr<Buckets> buckets_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_CONTENT_EXACT_CONTENT_INDEX_H_
