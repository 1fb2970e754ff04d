// Sizing of blocked Bloom filters.
//
// A blocked filter puts all of a key's bits into one 512-bit cache line (or one line in each of two
// blocks), so a lookup costs one cache miss. The price is a worse false-positive rate than the
// classic formula predicts, because block loads vary: some blocks receive many more keys than the
// mean. The expected rate is therefore a Poisson mixture over the load of the queried block (Putze,
// Sanders, Singler, "Cache-, Hash- and Space-Efficient Bloom Filters", 2007, §3):
//   f = ( sum_j Poisson(j; L·n/b) · (1 − (1 − 1/B)^(j·k))^k )^L
// for n keys, b blocks of B usable bits, k bits per line and L lines per key. ChooseBloomLayout
// searches k and b so that f meets the target, instead of using the classic m = −n·ln ε / ln² 2.
//
// Thread-safety: pure functions.
#ifndef URLSIEVE_DEDUP_BLOOM_BLOOM_MATH_H_
#define URLSIEVE_DEDUP_BLOOM_BLOOM_MATH_H_

#include <cstdint>

namespace urlsieve {

// A block is one 64-byte cache line. Bit 0 of every block is reserved (BlockedBloomFilter uses it
// as the block's lock), so 511 bits per block hold keys.
inline constexpr uint32_t kBloomBlockBits = 512;
inline constexpr uint32_t kBloomUsableBlockBits = kBloomBlockBits - 1;
inline constexpr uint32_t kBloomMaxBitsPerLine = 48;

struct BloomLayout {
  uint64_t num_blocks = 1;     // b: the filter holds num_blocks · 512 bits
  uint32_t bits_per_line = 1;  // k: bits a key sets in each of its lines
  uint32_t lines_per_key = 1;  // L: 1, or 2 for small ε where a second line saves memory

  uint64_t bytes() const { return num_blocks * (kBloomBlockBits / 8); }
  friend bool operator==(const BloomLayout&, const BloomLayout&) = default;
};

// The expected false-positive rate of `layout` holding `keys` keys (the formula above).
double BlockedFalsePositiveRate(const BloomLayout& layout, uint64_t keys);

// The smallest layout with `lines_per_key` lines whose expected false-positive rate at `capacity`
// keys is ≤ `fp_rate`. Requires capacity ≥ 1 and 0 < fp_rate < 1.
BloomLayout SmallestBloomLayout(uint64_t capacity, double fp_rate, uint32_t lines_per_key);

// The layout filters use: the smallest one line per key, or two lines when fp_rate ≤
// kTwoLineMaxFpRate and they take less memory. A second line costs a second cache miss per
// operation, so it is worth it only where it saves much: 15 % of the memory at 1e-5 (20 % at
// 1e-6), against 10 % at 1e-4 and 6 % at 1e-3, not taken (bench_bloom's BM_Lines* time it).
inline constexpr double kTwoLineMaxFpRate = 1e-5;
BloomLayout ChooseBloomLayout(uint64_t capacity, double fp_rate);

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_BLOOM_BLOOM_MATH_H_
