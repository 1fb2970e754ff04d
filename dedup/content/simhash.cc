#include "dedup/content/simhash.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

namespace urlsieve {
namespace {

// Per byte: 0 when it separates words, else the byte itself with ASCII capitals lowercased, plus
// kDigit for a digit. One table lookup classifies, lowercases and flags digits.
constexpr uint16_t kDigit = 0x100;
constexpr std::array<uint16_t, 256> kByte = [] {
  std::array<uint16_t, 256> t{};
  for (int c = 0; c < 256; ++c) {
    if ((c >= 'a' && c <= 'z') || c >= 0x80) t[c] = static_cast<uint16_t>(c);
    if (c >= '0' && c <= '9') t[c] = static_cast<uint16_t>(c | kDigit);
    if (c >= 'A' && c <= 'Z') t[c] = static_cast<uint16_t>(c - 'A' + 'a');
  }
  return t;
}();

constexpr uint64_t kWordSeed = 0xcbf29ce484222325ULL;
constexpr uint64_t kFoldMultiplier = 0x9e3779b97f4a7c15ULL;

// MurmurHash3's 64-bit finalizer: every input bit flips each output bit with probability ~1/2.
inline uint64_t Fmix64(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

// Charikar's 64 counters as vertical counters, so that a feature costs a few word operations and
// no branch per bit. Nibble q of Nibbles::n[j] counts bit 4q+j of the features added since the
// last flush (4 shifts, ands and adds per feature, in registers); a nibble holds 15, so every 15
// features they move into byte lanes (byte m of bytes[j] counts bit 8m+j), which hold 255, so
// every 17 nibble flushes those move into 32-bit counters.
struct Nibbles {
  uint64_t n0 = 0, n1 = 0, n2 = 0, n3 = 0;
  int room = 15;  // features the nibbles can still take

  void Add(uint64_t h) {
    constexpr uint64_t kLow = 0x1111111111111111ULL;
    n0 += h & kLow;
    n1 += (h >> 1) & kLow;
    n2 += (h >> 2) & kLow;
    n3 += (h >> 3) & kLow;
    --room;
  }
};

class Counters {
 public:
  void Flush(Nibbles* nibbles) {
    constexpr uint64_t kLowNibbles = 0x0f0f0f0f0f0f0f0fULL;
    const uint64_t n[4] = {nibbles->n0, nibbles->n1, nibbles->n2, nibbles->n3};
    for (int j = 0; j < 4; ++j) {
      bytes_[j] += n[j] & kLowNibbles;             // nibble 2m: bit 8m+j
      bytes_[j + 4] += (n[j] >> 4) & kLowNibbles;  // nibble 2m+1: bit 8m+4+j
    }
    features_ += static_cast<uint64_t>(15 - nibbles->room);
    *nibbles = Nibbles();
    if (++nibble_flushes_ == 17) FlushBytes();  // 17 x 15 = 255
  }

  uint64_t Result(Nibbles* nibbles) {
    Flush(nibbles);
    FlushBytes();
    uint64_t out = 0;
    // Bit i is set when the features with bit i set outnumber those with it clear (ties: clear).
    for (int i = 0; i < 64; ++i) {
      out |= static_cast<uint64_t>(2 * static_cast<uint64_t>(counts_[i]) > features_) << i;
    }
    return out;
  }

 private:
  void FlushBytes() {
    for (int j = 0; j < 8; ++j) {
      for (int m = 0; m < 8; ++m) counts_[8 * m + j] += (bytes_[j] >> (8 * m)) & 0xff;
      bytes_[j] = 0;
    }
    nibble_flushes_ = 0;
  }

  uint64_t bytes_[8] = {};
  uint32_t counts_[64] = {};
  uint64_t features_ = 0;
  int nibble_flushes_ = 0;
};

// The hash of a shingle from its words' hashes, oldest first.
template <size_t K>
inline uint64_t ShingleHash(const std::array<uint64_t, K>& words, size_t count) {
  uint64_t fold = 0;
  for (size_t j = K - count; j < K; ++j) fold = (fold ^ words[j]) * kFoldMultiplier;
  return Fmix64(fold);
}

template <size_t K>
uint64_t SimHashOf(std::string_view text) {
  // The last K word hashes, oldest first; shifted by one per word (K is a constant: registers).
  std::array<uint64_t, K> window{};
  size_t words = 0;
  Nibbles nibbles;
  Counters counters;  // in memory, touched every 15 features
  auto add = [&](uint64_t feature) {
    nibbles.Add(feature);
    if (nibbles.room == 0) counters.Flush(&nibbles);
  };
  const auto* p = reinterpret_cast<const uint8_t*>(text.data());
  const auto* end = p + text.size();
  while (p < end) {
    while (p < end && kByte[*p] == 0) ++p;
    if (p == end) break;
    // The lowercased bytes of the word packed 8 to a chunk (shifts and ors: no multiply chain per
    // byte), each chunk folded into h; `seen` collects kDigit.
    uint64_t h = kWordSeed;
    uint64_t packed = 0;
    int packed_bytes = 0;
    uint16_t c, seen = 0;
#define PACK(c)                         \
  packed = (packed << 8) | ((c)&0xff);  \
  if (++packed_bytes == 8) {            \
    h = (h ^ packed) * kFoldMultiplier; \
    packed = 0;                         \
    packed_bytes = 0;                   \
  }
    while (p + 4 <= end) {  // unrolled: no bounds check per byte
      if ((c = kByte[p[0]]) == 0) goto word_end;
      PACK(c);  // kDigit only reaches the hash of a word that is dropped
      seen |= c;
      if ((c = kByte[p[1]]) == 0) {
        p += 1;
        goto word_end;
      }
      PACK(c);
      seen |= c;
      if ((c = kByte[p[2]]) == 0) {
        p += 2;
        goto word_end;
      }
      PACK(c);
      seen |= c;
      if ((c = kByte[p[3]]) == 0) {
        p += 3;
        goto word_end;
      }
      PACK(c);
      seen |= c;
      p += 4;
    }
    while (p < end && (c = kByte[*p]) != 0) {
      PACK(c);
      seen |= c;
      ++p;
    }
  word_end:
#undef PACK
    if (packed_bytes > 0) h = (h ^ packed) * kFoldMultiplier;
    if (p < end) ++p;  // the byte that ended the word separates
    // A word with a digit is no feature: dates, counters, times, prices, ids and tokens are what
    // changes between two fetches of one page (docs/features/content-seen.md, "Fingerprints").
    if (seen & kDigit) continue;
    for (size_t j = 0; j + 1 < K; ++j) window[j] = window[j + 1];
    window[K - 1] = h;
    if (++words >= K) add(ShingleHash(window, K));
  }
  if (words == 0) return 0;
  // A text of fewer than K words is one shingle of all its words.
  if (words < K) add(ShingleHash(window, words));
  return counters.Result(&nibbles);
}

template <size_t... Ks>
constexpr auto MakeTable(std::index_sequence<Ks...>) {
  return std::array<uint64_t (*)(std::string_view), sizeof...(Ks)>{&SimHashOf<Ks + 1>...};
}
constexpr auto kSimHashOf = MakeTable(std::make_index_sequence<16>());

}  // namespace

uint64_t SimHash(std::string_view text, const SimHashOptions& options) {
  return kSimHashOf[static_cast<size_t>(std::clamp(options.shingle_words, 1, 16)) - 1](text);
}

}  // namespace urlsieve
