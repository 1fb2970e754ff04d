#include "dedup/bloom_math.h"

#include <algorithm>
#include <cmath>

namespace urlsieve {
namespace {

// P(a query's line in one block is all set) when that block holds Poisson(mean) key-lines of k
// bits. Terms are computed in log space so that large means (an overfull layer in Stats) do not
// underflow.
double LineFalsePositiveRate(double mean, uint32_t k) {
  if (mean <= 0) return 0;
  const double log_keep = std::log1p(-1.0 / kBloomUsableBlockBits);  // ln(1 − 1/B)
  const double spread = 12 * std::sqrt(mean) + 30;
  const uint64_t first = static_cast<uint64_t>(std::max(0.0, mean - spread));
  const uint64_t last = static_cast<uint64_t>(mean + spread);
  const double log_mean = std::log(mean);
  double sum = 0;
  for (uint64_t j = first; j <= last; ++j) {
    const double jd = static_cast<double>(j);
    const double poisson = std::exp(jd * log_mean - mean - std::lgamma(jd + 1));
    const double bit_set = -std::expm1(jd * k * log_keep);  // 1 − (1 − 1/B)^(j·k)
    sum += poisson * std::pow(bit_set, k);
  }
  return std::min(sum, 1.0);
}

// The fewest blocks meeting `fp_rate` with k bits per line, by binary search (the rate falls as
// blocks are added).
uint64_t MinBlocks(uint64_t capacity, double fp_rate, uint32_t k, uint32_t lines) {
  BloomLayout layout{1, k, lines};
  uint64_t hi = 1;
  for (;;) {
    layout.num_blocks = hi;
    if (BlockedFalsePositiveRate(layout, capacity) <= fp_rate) break;
    if (hi > (uint64_t{1} << 50)) return UINT64_MAX;  // this k cannot reach fp_rate
    hi *= 2;
  }
  uint64_t lo = hi / 2 + 1;
  if (hi == 1) return 1;
  while (lo < hi) {
    layout.num_blocks = lo + (hi - lo) / 2;
    if (BlockedFalsePositiveRate(layout, capacity) <= fp_rate) {
      hi = layout.num_blocks;
    } else {
      lo = layout.num_blocks + 1;
    }
  }
  return hi;
}

BloomLayout SmallestLayout(uint64_t capacity, double fp_rate, uint32_t lines) {
  BloomLayout best{UINT64_MAX, 1, lines};
  for (uint32_t k = 1; k <= kBloomMaxBitsPerLine; ++k) {
    const uint64_t blocks = MinBlocks(capacity, fp_rate, k, lines);
    if (blocks < best.num_blocks) best = BloomLayout{blocks, k, lines};
  }
  return best;
}

}  // namespace

double BlockedFalsePositiveRate(const BloomLayout& layout, uint64_t keys) {
  const double mean = static_cast<double>(layout.lines_per_key) * static_cast<double>(keys) /
                      static_cast<double>(layout.num_blocks);
  return std::pow(LineFalsePositiveRate(mean, layout.bits_per_line), layout.lines_per_key);
}

BloomLayout ChooseBloomLayout(uint64_t capacity, double fp_rate) {
  capacity = std::max<uint64_t>(capacity, 1);
  BloomLayout one = SmallestLayout(capacity, fp_rate, 1);
  if (fp_rate > kTwoLineMaxFpRate) return one;
  BloomLayout two = SmallestLayout(capacity, fp_rate, 2);
  return two.num_blocks < one.num_blocks ? two : one;
}

}  // namespace urlsieve
