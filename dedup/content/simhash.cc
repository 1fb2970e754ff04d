#include "dedup/content/simhash.h"

#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <string>

namespace urlsieve {
namespace {

// Byte classes: 0 separates words, 1 is part of a word as it is, 2 is an ASCII capital (part of
// a word, lowercased).
constexpr std::array<uint8_t, 256> kClass = [] {
  std::array<uint8_t, 256> t{};
  for (int c = 0; c < 256; ++c) {
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c >= 0x80) t[c] = 1;
    if (c >= 'A' && c <= 'Z') t[c] = 2;
  }
  return t;
}();

// Charikar's 64 counters, bit-sliced: lane j of byte b of lanes_[j] counts bit 8b+j of the
// features added since the last flush, so one feature costs 8 shifts, ands and adds (no branch per
// bit). A byte holds 255 before it overflows; every 255 features the lanes flush into 32-bit
// counters.
class Counters {
 public:
  void Add(uint64_t h) {
    constexpr uint64_t kLow = 0x0101010101010101ULL;
    for (int j = 0; j < 8; ++j) lanes_[j] += (h >> j) & kLow;
    ++features_;
    if (++pending_ == 255) Flush();
  }

  uint64_t Result() {
    Flush();
    uint64_t out = 0;
    // Bit i is set when the features with bit i set outnumber those with it clear (ties: clear).
    for (int i = 0; i < 64; ++i) {
      out |= static_cast<uint64_t>(2 * static_cast<uint64_t>(counts_[i]) > features_) << i;
    }
    return out;
  }

 private:
  void Flush() {
    for (int j = 0; j < 8; ++j) {
      for (int b = 0; b < 8; ++b) counts_[8 * b + j] += (lanes_[j] >> (8 * b)) & 0xff;
      lanes_[j] = 0;
    }
    pending_ = 0;
  }

  uint64_t lanes_[8] = {};
  uint32_t counts_[64] = {};
  uint64_t features_ = 0;
  int pending_ = 0;
};

}  // namespace

uint64_t SimHash(std::string_view text, const SimHashOptions& options) {
  const size_t k = static_cast<size_t>(std::clamp(options.shingle_words, 1, 16));
  // The last k word hashes, each written twice (at i and i + k) so that the k most recent are
  // always contiguous and in order: window[start .. start + k).
  uint64_t window[32];
  size_t words = 0;
  Counters counters;
  char lower[64];
  std::string long_lower;  // a word longer than `lower` (rare): grows once, reused

  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  while (p < end) {
    while (p < end && kClass[*p] == 0) ++p;
    if (p == end) break;
    const unsigned char* begin = p;
    uint8_t seen = 0;
    while (p < end && kClass[*p] != 0) seen |= kClass[*p++];
    const size_t len = static_cast<size_t>(p - begin);
    uint64_t word_hash;
    if (!(seen & 2)) {
      word_hash = XXH3_64bits(begin, len);
    } else {
      char* dst = lower;
      if (len > sizeof(lower)) {
        long_lower.resize(len);
        dst = long_lower.data();
      }
      for (size_t i = 0; i < len; ++i)
        dst[i] = static_cast<char>(begin[i] | (kClass[begin[i]] & 2) << 4);
      word_hash = XXH3_64bits(dst, len);
    }
    const size_t slot = words % k;
    window[slot] = word_hash;
    window[slot + k] = word_hash;
    ++words;
    // The shingle ending at this word: the k word hashes in order, oldest first.
    if (words >= k) counters.Add(XXH3_64bits(&window[words % k], k * sizeof(uint64_t)));
  }
  if (words == 0) return 0;
  // A text of fewer than k words is one shingle of all its words.
  if (words < k) counters.Add(XXH3_64bits(&window[0], words * sizeof(uint64_t)));
  return counters.Result();
}

}  // namespace urlsieve
