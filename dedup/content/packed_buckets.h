// PackedBuckets: a fixed number of growable arrays of fixed-width byte entries, the storage of
// ExactContentIndex and NearDuplicateIndex (docs/features/content-seen.md, "The exact index").
//
// A bucket is one malloc'd block (a 4-byte size, a 4-byte capacity, the entries, 8 bytes of slack
// so that an entry can be read with one unaligned 8-byte load) behind an 8-byte pointer, null while
// the bucket is empty. It grows by an eighth of its capacity (at least one entry) and shrinks when
// erasures leave more than a quarter of it unused, so that its capacity stays within 9/8 of its
// entries plus one: the packing is what keeps the indexes at 14 and 34 bytes per page.
// Internal (not installed). Thread-safety: none; const methods may run concurrently.
#ifndef URLSIEVE_DEDUP_CONTENT_PACKED_BUCKETS_H_
#define URLSIEVE_DEDUP_CONTENT_PACKED_BUCKETS_H_

#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>

namespace urlsieve {

class PackedBuckets {
 public:
  PackedBuckets(uint32_t bucket_count, uint32_t entry_bytes);
  ~PackedBuckets();
  PackedBuckets(PackedBuckets&& other) noexcept;
  PackedBuckets& operator=(PackedBuckets&& other) noexcept;
  PackedBuckets(const PackedBuckets&) = delete;
  PackedBuckets& operator=(const PackedBuckets&) = delete;

  uint32_t bucket_count() const { return bucket_count_; }
  uint32_t entry_bytes() const { return entry_bytes_; }

  uint32_t size(uint32_t bucket) const {
    const uint8_t* block = blocks_[bucket];
    return block == nullptr ? 0 : Header(block)[0];
  }
  // The bucket's entries, size(bucket) * entry_bytes() bytes followed by at least 8 readable bytes
  // (null when empty).
  const uint8_t* entries(uint32_t bucket) const {
    const uint8_t* block = blocks_[bucket];
    return block == nullptr ? nullptr : block + kHeaderBytes;
  }
  uint8_t* entries(uint32_t bucket) {
    uint8_t* block = blocks_[bucket];
    return block == nullptr ? nullptr : block + kHeaderBytes;
  }

  // Opens a slot for one entry at `position` (<= size), moving the later entries up, and returns
  // it for the caller to fill. Aborts when memory runs out, as std::vector does.
  uint8_t* InsertAt(uint32_t bucket, uint32_t position);
  uint8_t* Append(uint32_t bucket) { return InsertAt(bucket, size(bucket)); }
  // Removes the entry at `position`, keeping the order of the others.
  void RemoveAt(uint32_t bucket, uint32_t position);
  // Removes the entry at `position` by moving the last one into it (O(1), order not kept).
  void SwapRemove(uint32_t bucket, uint32_t position);

  // The blocks' bytes (header, entries' capacity, slack) and the pointer array: what is allocated,
  // without the allocator's own per-block overhead.
  uint64_t memory_bytes() const { return memory_bytes_; }

 private:
  static constexpr uint32_t kHeaderBytes = 8;
  static constexpr uint32_t kSlackBytes = 8;

  static uint32_t* Header(uint8_t* block) { return reinterpret_cast<uint32_t*>(block); }
  static const uint32_t* Header(const uint8_t* block) {
    return reinterpret_cast<const uint32_t*>(block);
  }
  uint64_t BlockBytes(uint32_t capacity) const {
    return kHeaderBytes + uint64_t{capacity} * entry_bytes_ + kSlackBytes;
  }
  void Resize(uint32_t bucket, uint32_t capacity);
  void FreeAll();

  uint32_t bucket_count_ = 0;
  uint32_t entry_bytes_ = 0;
  std::unique_ptr<uint8_t*[]> blocks_;
  uint64_t memory_bytes_ = 0;
};

// Loads and stores of the low `bytes` (<= 8) bytes of a value, in the host's order (the buckets
// live in memory only), which is little-endian on every platform urlsieve builds for.
static_assert(std::endian::native == std::endian::little, "PackedBuckets packs little-endian");
inline uint64_t LoadPacked(const uint8_t* p, uint32_t bytes) {
  uint64_t v = 0;
  std::memcpy(&v, p, 8);  // the 8 bytes of slack make this safe at a bucket's end
  return bytes == 8 ? v : v & ((uint64_t{1} << (8 * bytes)) - 1);
}
inline void StorePacked(uint8_t* p, uint64_t v, uint32_t bytes) { std::memcpy(p, &v, bytes); }

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_CONTENT_PACKED_BUCKETS_H_
