#include "dedup/bloom/bloom_math.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

namespace urlsieve {
namespace {

// g(j) = P(a query line is all set | its block holds j key-lines of k bits), computed exactly from
// the occupancy distribution of the block's set-bit count X: g(j) = E[(X/B)^k]. The textbook
// approximation (1 − (1 − 1/B)^(jk))^k underestimates it for a block as small as 511 bits (Bose et
// al., "On the false-positive rate of Bloom filters", 2008): by 2 % at ε = 1e-3, 4 % at 1e-4.
// The table grows on demand, one key (k throws) at a time.
class BlockHitTable {
 public:
  explicit BlockHitTable(uint32_t k) : k_(k), occupancy_(kBloomUsableBlockBits + 1, 0.0) {
    occupancy_[0] = 1;
    all_set_.resize(kBloomUsableBlockBits + 1);
    for (uint32_t x = 0; x <= kBloomUsableBlockBits; ++x) {
      all_set_[x] = std::pow(static_cast<double>(x) / kBloomUsableBlockBits, k);
    }
    g_.push_back(0);
  }

  uint32_t k() const { return k_; }

  double At(uint64_t j) {
    while (g_.size() <= j && g_.back() < 1 - 1e-15) AddKey();
    return j < g_.size() ? g_[j] : g_.back();
  }

 private:
  void AddKey() {
    constexpr double kB = kBloomUsableBlockBits;
    // Only the window [lo_, hi_] of X carries mass; states below 1e-30 are dropped, which keeps a
    // key's update at ~k·50 steps instead of k·511 without changing any printed digit of ε.
    for (uint32_t t = 0; t < k_; ++t) {
      if (hi_ < kBloomUsableBlockBits) occupancy_[++hi_] = 0;
      for (uint32_t x = hi_; x > lo_; --x) {
        occupancy_[x] = occupancy_[x] * (x / kB) + occupancy_[x - 1] * ((kB - (x - 1)) / kB);
      }
      occupancy_[lo_] *= lo_ / kB;
      while (lo_ < hi_ && occupancy_[lo_] < 1e-30) occupancy_[lo_++] = 0;
      while (hi_ > lo_ && occupancy_[hi_] < 1e-30) --hi_;
    }
    double g = 0;
    for (uint32_t x = lo_; x <= hi_; ++x) g += occupancy_[x] * all_set_[x];
    g_.push_back(g);
  }

  uint32_t k_;
  uint32_t lo_ = 0;  // occupancy_ is zero outside [lo_, hi_]
  uint32_t hi_ = 0;
  std::vector<double> occupancy_;  // P(X = x) after g_.size() − 1 keys
  std::vector<double> all_set_;    // (x/B)^k
  std::vector<double> g_;
};

// The Poisson mixture over the load of the queried block. Terms are computed in log space so that
// large means (an overfull layer in Stats) do not underflow.
double LineFalsePositiveRate(double mean, BlockHitTable& table) {
  if (mean <= 0) return 0;
  const double spread = 12 * std::sqrt(mean) + 30;
  const uint64_t first = static_cast<uint64_t>(std::max(0.0, mean - spread));
  const uint64_t last = static_cast<uint64_t>(mean + spread);
  // The first term in log space (12 standard deviations below the mean it is ~1e-32, far from
  // underflow), the others by the recurrence P(j) = P(j − 1) · mean / j: one exp and lgamma per
  // call instead of one per term, which made choosing a 1024-shard layout take ~0.1 s.
  double term = std::exp(static_cast<double>(first) * std::log(mean) - mean -
                         std::lgamma(static_cast<double>(first) + 1));
  double sum = 0;
  for (uint64_t j = first; j <= last; ++j) {
    if (j > first) term *= mean / static_cast<double>(j);
    sum += term * table.At(j);
  }
  return std::min(sum, 1.0);
}

double FalsePositiveRate(const BloomLayout& layout, uint64_t keys, BlockHitTable& table) {
  const double mean = static_cast<double>(layout.lines_per_key) * static_cast<double>(keys) /
                      static_cast<double>(layout.num_blocks);
  return std::pow(LineFalsePositiveRate(mean, table), layout.lines_per_key);
}

// The fewest blocks meeting `fp_rate` with k bits per line, by binary search (the rate falls as
// blocks are added). The search starts at the classic filter's size, which a blocked filter never
// beats: probing far smaller sizes would be slow (huge block loads) as well as pointless.
uint64_t MinBlocks(uint64_t capacity, double fp_rate, uint32_t lines, BlockHitTable& table) {
  const double classic_bits =
      -static_cast<double>(capacity) * std::log(fp_rate) / (std::log(2.0) * std::log(2.0));
  BloomLayout layout{1, table.k(), lines};
  uint64_t lo = std::max<uint64_t>(1, static_cast<uint64_t>(classic_bits / kBloomBlockBits / 2));
  uint64_t hi = lo;
  for (;;) {
    layout.num_blocks = hi;
    if (FalsePositiveRate(layout, capacity, table) <= fp_rate) break;
    if (hi > (uint64_t{1} << 50)) return UINT64_MAX;  // this k cannot reach fp_rate
    lo = hi + 1;
    hi *= 2;
  }
  while (lo < hi) {
    layout.num_blocks = lo + (hi - lo) / 2;
    if (FalsePositiveRate(layout, capacity, table) <= fp_rate) {
      hi = layout.num_blocks;
    } else {
      lo = layout.num_blocks + 1;
    }
  }
  return hi;
}

// The tables depend on k only, so the one- and two-line searches share them.
using BlockHitTables = std::vector<std::optional<BlockHitTable>>;

// The rate is unimodal in k, so the search stops two steps past the best k.
BloomLayout SmallestLayout(uint64_t capacity, double fp_rate, uint32_t lines,
                           BlockHitTables& tables) {
  BloomLayout best{UINT64_MAX, 1, lines};
  for (uint32_t k = 1; k <= kBloomMaxBitsPerLine && k <= best.bits_per_line + 2; ++k) {
    if (!tables[k]) tables[k].emplace(k);
    const uint64_t blocks = MinBlocks(capacity, fp_rate, lines, *tables[k]);
    if (blocks < best.num_blocks) best = BloomLayout{blocks, k, lines};
  }
  return best;
}

}  // namespace

// The tables are pure functions of k that grow on demand: each thread keeps its own, so that the
// many searches of a layout (a Redis set sizes every layer of every shard count it considers)
// build each once.
BlockHitTables& ThreadTables() {
  thread_local BlockHitTables tables(kBloomMaxBitsPerLine + 1);
  return tables;
}

double BlockedFalsePositiveRate(const BloomLayout& layout, uint64_t keys) {
  if (layout.bits_per_line < 1 || layout.bits_per_line > kBloomMaxBitsPerLine) {
    BlockHitTable table(layout.bits_per_line);  // not a layout this build makes (a stored one)
    return FalsePositiveRate(layout, keys, table);
  }
  std::optional<BlockHitTable>& table = ThreadTables()[layout.bits_per_line];
  if (!table) table.emplace(layout.bits_per_line);
  return FalsePositiveRate(layout, keys, *table);
}

BloomLayout SmallestBloomLayout(uint64_t capacity, double fp_rate, uint32_t lines_per_key) {
  return SmallestLayout(std::max<uint64_t>(capacity, 1), fp_rate, lines_per_key, ThreadTables());
}

BloomLayout ChooseBloomLayout(uint64_t capacity, double fp_rate) {
  capacity = std::max<uint64_t>(capacity, 1);
  BlockHitTables& tables = ThreadTables();
  BloomLayout one = SmallestLayout(capacity, fp_rate, 1, tables);
  if (fp_rate > kTwoLineMaxFpRate) return one;
  BloomLayout two = SmallestLayout(capacity, fp_rate, 2, tables);
  return two.num_blocks < one.num_blocks ? two : one;
}

}  // namespace urlsieve
