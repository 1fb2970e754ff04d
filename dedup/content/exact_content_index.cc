#include "dedup/content/exact_content_index.h"

#include "dedup/content/packed_buckets.h"

namespace urlsieve {
namespace {

// A bucket per value of the digest's top 16 bits; an entry is the low 48 bits (the remainder) and
// the value, 6 bytes each. A bucket is kept sorted by remainder: the digests are hash bits, so the
// remainders are uniform and a key's position is about remainder * size / 2^48 (interpolation),
// from which a galloping search finds it in a few probes, however large the bucket.
constexpr uint32_t kBucketBits = 16;
constexpr uint32_t kRemainderBits = 64 - kBucketBits;
constexpr uint32_t kRemainderBytes = kRemainderBits / 8;
constexpr uint32_t kValueBytes = 6;
constexpr uint32_t kEntryBytes = kRemainderBytes + kValueBytes;
constexpr uint64_t kRemainderMask = (uint64_t{1} << kRemainderBits) - 1;

uint32_t BucketOf(uint64_t digest) { return static_cast<uint32_t>(digest >> kRemainderBits); }

}  // namespace

struct ExactContentIndex::Buckets {
  PackedBuckets buckets{uint32_t{1} << kBucketBits, kEntryBytes};
  uint64_t size = 0;

  uint64_t RemainderAt(const uint8_t* entries, uint32_t i) const {
    return LoadPacked(entries + uint64_t{i} * kEntryBytes, kRemainderBytes);
  }

  // The first position whose remainder is >= `remainder` (lower bound), and whether it is equal.
  uint32_t LowerBound(uint32_t bucket, uint64_t remainder, bool* found) const {
    const uint32_t n = buckets.size(bucket);
    *found = false;
    if (n == 0) return 0;
    const uint8_t* entries = buckets.entries(bucket);
    // Interpolate, then gallop away from the guess to bracket the key, then bisect.
    uint32_t guess = static_cast<uint32_t>(((remainder >> (kRemainderBits - 32)) * n) >> 32);
    if (guess >= n) guess = n - 1;
    uint32_t lo, hi;  // the answer is in (lo, hi]; lo == UINT32_MAX stands for -1
    if (RemainderAt(entries, guess) < remainder) {
      uint32_t step = 1;
      lo = guess;
      for (;;) {
        const uint64_t next = uint64_t{guess} + step;
        if (next >= n) {
          hi = n;
          break;
        }
        if (RemainderAt(entries, static_cast<uint32_t>(next)) >= remainder) {
          hi = static_cast<uint32_t>(next);
          break;
        }
        lo = static_cast<uint32_t>(next);
        step *= 2;
      }
    } else {
      uint32_t step = 1;
      hi = guess;
      for (;;) {
        if (step > guess) {
          lo = UINT32_MAX;
          break;
        }
        const uint32_t next = guess - step;
        if (RemainderAt(entries, next) < remainder) {
          lo = next;
          break;
        }
        hi = next;
        step *= 2;
      }
    }
    // Invariant: entry lo < remainder (or lo = -1), entry hi >= remainder (or hi = n).
    while (hi - (lo + 1) > 0) {
      const uint32_t mid = lo + 1 + (hi - (lo + 1)) / 2;
      if (RemainderAt(entries, mid) < remainder) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    *found = hi < n && RemainderAt(entries, hi) == remainder;
    return hi;
  }
};

ExactContentIndex::ExactContentIndex() : buckets_(std::make_unique<Buckets>()) {}
ExactContentIndex::~ExactContentIndex() = default;
ExactContentIndex::ExactContentIndex(ExactContentIndex&&) noexcept = default;
ExactContentIndex& ExactContentIndex::operator=(ExactContentIndex&&) noexcept = default;

std::optional<uint64_t> ExactContentIndex::Find(uint64_t digest) const {
  const uint32_t bucket = BucketOf(digest);
  bool found = false;
  const uint32_t i = buckets_->LowerBound(bucket, digest & kRemainderMask, &found);
  if (!found) return std::nullopt;
  return LoadPacked(buckets_->buckets.entries(bucket) + uint64_t{i} * kEntryBytes + kRemainderBytes,
                    kValueBytes);
}

std::optional<uint64_t> ExactContentIndex::FindOrInsert(uint64_t digest, uint64_t value) {
  const uint32_t bucket = BucketOf(digest);
  bool found = false;
  const uint32_t i = buckets_->LowerBound(bucket, digest & kRemainderMask, &found);
  if (found) {
    return LoadPacked(
        buckets_->buckets.entries(bucket) + uint64_t{i} * kEntryBytes + kRemainderBytes,
        kValueBytes);
  }
  uint8_t* slot = buckets_->buckets.InsertAt(bucket, i);
  StorePacked(slot, digest & kRemainderMask, kRemainderBytes);
  StorePacked(slot + kRemainderBytes, value & kMaxValue, kValueBytes);
  ++buckets_->size;
  return std::nullopt;
}

bool ExactContentIndex::Erase(uint64_t digest) {
  const uint32_t bucket = BucketOf(digest);
  bool found = false;
  const uint32_t i = buckets_->LowerBound(bucket, digest & kRemainderMask, &found);
  if (!found) return false;
  buckets_->buckets.RemoveAt(bucket, i);
  --buckets_->size;
  return true;
}

uint64_t ExactContentIndex::size() const { return buckets_->size; }

uint64_t ExactContentIndex::memory_bytes() const {
  return sizeof(ExactContentIndex) + sizeof(Buckets) + buckets_->buckets.memory_bytes();
}

}  // namespace urlsieve
