#include "dedup/content/near_duplicate_index.h"

#include <algorithm>
#include <vector>

#include "dedup/content/packed_buckets.h"

namespace urlsieve {
namespace {

constexpr uint32_t kMaxBucketBits = 16;  // 2^16 buckets per table at most (k = 0 .. 3)
constexpr uint32_t kValueBytes = 6;

uint64_t LowMask(uint32_t bits) { return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }

// Inline SWAR popcount: the build targets baseline x86-64, where std::popcount is a libgcc call.
inline int PopCount(uint64_t x) {
  x = x - ((x >> 1) & 0x5555555555555555ULL);
  x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
  return static_cast<int>((x * 0x0101010101010101ULL) >> 56);
}

// The scan of a bucket, the whole cost of a query: the first entry at or after `i` whose remainder
// is within k of `query` (n when none). Compiled twice on x86-64, with the POPCNT instruction for
// the CPUs that have it (all since 2008) and with the SWAR count for the others.
template <bool kHardwarePopcount>
[[gnu::always_inline]] inline uint32_t ScanImpl(const uint8_t* entries, uint32_t i, uint32_t n,
                                                uint32_t stride, uint64_t mask, uint64_t query,
                                                int k) {
  const uint8_t* p = entries + uint64_t{i} * stride;
  for (; i < n; ++i, p += stride) {
    uint64_t remainder;
    std::memcpy(&remainder, p, 8);
    const uint64_t x = (remainder & mask) ^ query;
    const int distance = kHardwarePopcount ? __builtin_popcountll(x) : PopCount(x);
    if (distance <= k) return i;
  }
  return n;
}

#if defined(__x86_64__) && defined(__GNUC__)
[[gnu::target("popcnt")]] uint32_t ScanPopcnt(const uint8_t* entries, uint32_t i, uint32_t n,
                                              uint32_t stride, uint64_t mask, uint64_t query,
                                              int k) {
  return ScanImpl<true>(entries, i, n, stride, mask, query, k);
}
uint32_t ScanSwar(const uint8_t* entries, uint32_t i, uint32_t n, uint32_t stride, uint64_t mask,
                  uint64_t query, int k) {
  return ScanImpl<false>(entries, i, n, stride, mask, query, k);
}
const auto Scan = [] {
  __builtin_cpu_init();  // this may run before libgcc's own constructor
  return __builtin_cpu_supports("popcnt") ? ScanPopcnt : ScanSwar;
}();
#else
uint32_t Scan(const uint8_t* entries, uint32_t i, uint32_t n, uint32_t stride, uint64_t mask,
              uint64_t query, int k) {
  return ScanImpl<true>(entries, i, n, stride, mask, query, k);
}
#endif

}  // namespace

// Table j is keyed by block j (blocks counted from the most significant bit). Its bucket is the
// top `bucket_bits` of the block: the whole block when it has at most 16 bits (k >= 3), its top 16
// bits otherwise (k = 0 .. 2, whose blocks are 22 .. 64 bits: 2^16 buckets is what memory allows;
// a bucket then holds a superset of the block's candidates, and popcount sorts them out). The
// entry is the fingerprint without the bucket bits (the remainder), in `remainder_bytes`; table 0's
// entries add the value. Buckets are unordered: every entry of the query's bucket is a candidate.
struct NearDuplicateIndex::Tables {
  struct Table {
    uint32_t shift = 0;  // the bucket bits are fingerprint bits [shift, shift + bucket_bits)
    uint32_t bucket_bits = 0;
    uint32_t remainder_bytes = 0;
    uint64_t remainder_mask = 0;
    PackedBuckets buckets;

    uint32_t BucketOf(uint64_t fp) const {
      return static_cast<uint32_t>((fp >> shift) & LowMask(bucket_bits));
    }
    uint64_t RemainderOf(uint64_t fp) const {
      const uint32_t top = shift + bucket_bits;
      const uint64_t high = top >= 64 ? 0 : (fp >> top) << shift;
      return high | (fp & LowMask(shift));
    }
    uint64_t Fingerprint(uint32_t bucket, uint64_t remainder) const {
      const uint32_t top = shift + bucket_bits;
      const uint64_t high = top >= 64 ? 0 : (remainder >> shift) << top;
      return high | (uint64_t{bucket} << shift) | (remainder & LowMask(shift));
    }
  };

  int k = 3;
  uint64_t size = 0;
  std::vector<Table> tables;

  explicit Tables(int max_distance) : k(std::clamp(max_distance, 0, 7)) {
    const uint32_t blocks = static_cast<uint32_t>(k) + 1;
    uint32_t top = 64;  // block j ends below bit `top`
    for (uint32_t j = 0; j < blocks; ++j) {
      const uint32_t width = 64 / blocks + (j < 64 % blocks ? 1 : 0);
      const uint32_t bucket_bits = std::min(width, kMaxBucketBits);
      const uint32_t shift = top - bucket_bits;
      const uint32_t remainder_bits = 64 - bucket_bits;
      const uint32_t remainder_bytes = (remainder_bits + 7) / 8;
      const uint32_t entry_bytes = remainder_bytes + (j == 0 ? kValueBytes : 0);
      tables.push_back(Table{shift, bucket_bits, remainder_bytes, LowMask(8 * remainder_bytes),
                             PackedBuckets(uint32_t{1} << bucket_bits, entry_bytes)});
      top -= width;
    }
  }

  // The smallest value stored with `fp` in table 0 (there is one whenever a later table holds fp).
  std::optional<uint64_t> ValueOf(uint64_t fp) const {
    const Table& t = tables[0];
    const uint32_t bucket = t.BucketOf(fp);
    const uint64_t remainder = t.RemainderOf(fp);
    const uint32_t n = t.buckets.size(bucket);
    const uint32_t stride = t.buckets.entry_bytes();
    const uint8_t* p = t.buckets.entries(bucket);
    std::optional<uint64_t> best;
    for (uint32_t i = 0; i < n; ++i, p += stride) {
      if ((LoadPacked(p, 8) & t.remainder_mask) != remainder) continue;
      const uint64_t value = LoadPacked(p + t.remainder_bytes, kValueBytes);
      if (!best || value < *best) best = value;
    }
    return best;
  }
};

NearDuplicateIndex::NearDuplicateIndex(int max_distance)
    : tables_(std::make_unique<Tables>(max_distance)) {}
NearDuplicateIndex::~NearDuplicateIndex() = default;
NearDuplicateIndex::NearDuplicateIndex(NearDuplicateIndex&&) noexcept = default;
NearDuplicateIndex& NearDuplicateIndex::operator=(NearDuplicateIndex&&) noexcept = default;

std::optional<NearMatch> NearDuplicateIndex::Find(uint64_t fingerprint) const {
  const Tables& t = *tables_;
  std::optional<NearMatch> best;
  auto consider = [&best](uint64_t fp, uint64_t value, int distance) {
    if (!best || distance < best->distance || (distance == best->distance && value < best->value)) {
      best = NearMatch{fp, value, distance};
    }
  };
  // The k + 1 buckets are far apart in memory: start fetching them all before scanning the first.
  for (const Tables::Table& table : t.tables) {
    const uint8_t* entries = table.buckets.entries(table.BucketOf(fingerprint));
    if (entries != nullptr) {
      __builtin_prefetch(entries);
      __builtin_prefetch(entries + 64);
      __builtin_prefetch(entries + 128);
    }
  }
  for (size_t j = 0; j < t.tables.size(); ++j) {
    const Tables::Table& table = t.tables[j];
    const uint32_t bucket = table.BucketOf(fingerprint);
    const uint64_t query = table.RemainderOf(fingerprint);
    const uint32_t n = table.buckets.size(bucket);
    const uint32_t stride = table.buckets.entry_bytes();
    const uint64_t mask = table.remainder_mask;
    const uint8_t* entries = table.buckets.entries(bucket);
    for (uint32_t i = Scan(entries, 0, n, stride, mask, query, t.k); i < n;
         i = Scan(entries, i + 1, n, stride, mask, query, t.k)) {
      const uint8_t* p = entries + uint64_t{i} * stride;
      const uint64_t remainder = LoadPacked(p, 8);
      const int distance = PopCount((remainder & mask) ^ query);
      const uint64_t fp = table.Fingerprint(bucket, remainder & mask);
      if (j == 0) {
        consider(fp, LoadPacked(p + table.remainder_bytes, kValueBytes), distance);
        continue;
      }
      // A candidate sharing an earlier table's bucket with the query was seen there already.
      bool seen = false;
      for (size_t e = 0; e < j && !seen; ++e) {
        seen = t.tables[e].BucketOf(fp) == t.tables[e].BucketOf(fingerprint);
      }
      if (seen) continue;
      if (std::optional<uint64_t> value = t.ValueOf(fp)) consider(fp, *value, distance);
    }
  }
  return best;
}

void NearDuplicateIndex::Insert(uint64_t fingerprint, uint64_t value) {
  Tables& t = *tables_;
  for (size_t j = 0; j < t.tables.size(); ++j) {
    Tables::Table& table = t.tables[j];
    uint8_t* slot = table.buckets.Append(table.BucketOf(fingerprint));
    StorePacked(slot, table.RemainderOf(fingerprint), table.remainder_bytes);
    if (j == 0) StorePacked(slot + table.remainder_bytes, value & kMaxValue, kValueBytes);
  }
  ++t.size;
}

std::optional<NearMatch> NearDuplicateIndex::FindOrInsert(uint64_t fingerprint, uint64_t value) {
  std::optional<NearMatch> match = Find(fingerprint);
  if (!match) Insert(fingerprint, value);
  return match;
}

bool NearDuplicateIndex::Erase(uint64_t fingerprint, uint64_t value) {
  Tables& t = *tables_;
  value &= kMaxValue;
  for (size_t j = 0; j < t.tables.size(); ++j) {
    Tables::Table& table = t.tables[j];
    const uint32_t bucket = table.BucketOf(fingerprint);
    const uint64_t remainder = table.RemainderOf(fingerprint);
    const uint32_t n = table.buckets.size(bucket);
    const uint32_t stride = table.buckets.entry_bytes();
    const uint8_t* p = table.buckets.entries(bucket);
    uint32_t found = n;
    for (uint32_t i = 0; i < n && found == n; ++i, p += stride) {
      if ((LoadPacked(p, 8) & table.remainder_mask) != remainder) continue;
      if (j == 0 && LoadPacked(p + table.remainder_bytes, kValueBytes) != value) continue;
      found = i;
    }
    // Table 0 decides (it holds the values); the later tables hold one entry per stored pair.
    if (found == n) return false;
    table.buckets.SwapRemove(bucket, found);
  }
  --t.size;
  return true;
}

int NearDuplicateIndex::max_distance() const { return tables_->k; }
uint64_t NearDuplicateIndex::size() const { return tables_->size; }

uint64_t NearDuplicateIndex::memory_bytes() const {
  uint64_t total = sizeof(NearDuplicateIndex) + sizeof(Tables) +
                   tables_->tables.capacity() * sizeof(Tables::Table);
  for (const auto& table : tables_->tables) total += table.buckets.memory_bytes();
  return total;
}

}  // namespace urlsieve
