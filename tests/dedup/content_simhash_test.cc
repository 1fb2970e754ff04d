// SimHash (dedup/content/simhash.h): the documented construction, reproduced here the slow and
// obvious way, and the properties a near-duplicate test relies on.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "dedup/content/simhash.h"

namespace urlsieve {
namespace {

// simhash.h's word hash, written plainly: 8-byte big-endian chunks folded by multiplication.
uint64_t WordHash(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t at = 0; at < s.size(); at += 8) {
    uint64_t chunk = 0;
    for (size_t i = at; i < s.size() && i < at + 8; ++i) {
      chunk = (chunk << 8) | static_cast<unsigned char>(s[i]);
    }
    h = (h ^ chunk) * 0x9e3779b97f4a7c15ULL;
  }
  return h;
}

uint64_t Fmix64(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

uint64_t Shingle(const std::vector<uint64_t>& word_hashes, size_t from, size_t count) {
  uint64_t f = 0;
  for (size_t i = from; i < from + count; ++i) f = (f ^ word_hashes[i]) * 0x9e3779b97f4a7c15ULL;
  return Fmix64(f);
}

// The header's construction, word by word with strings and plain counters.
uint64_t ReferenceSimHash(std::string_view text, int k) {
  std::vector<uint64_t> word_hashes;
  std::string word;
  auto flush = [&] {
    bool digit = word.find_first_of("0123456789") != std::string::npos;
    if (!word.empty() && !digit) word_hashes.push_back(WordHash(word));
    word.clear();
  };
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    bool letter =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
    if (!letter) {
      flush();
      continue;
    }
    word.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : ch);
  }
  flush();
  if (word_hashes.empty()) return 0;
  std::vector<uint64_t> features;
  const size_t n = word_hashes.size(), ks = static_cast<size_t>(k);
  if (n < ks) {
    features.push_back(Shingle(word_hashes, 0, n));
  } else {
    for (size_t i = 0; i + ks <= n; ++i) features.push_back(Shingle(word_hashes, i, ks));
  }
  int64_t counts[64] = {};
  for (uint64_t f : features)
    for (int b = 0; b < 64; ++b) counts[b] += (f >> b & 1) ? 1 : -1;
  uint64_t out = 0;
  for (int b = 0; b < 64; ++b)
    if (counts[b] > 0) out |= uint64_t{1} << b;
  return out;
}

std::string RandomText(uint64_t seed, int words) {
  std::mt19937_64 rng(seed);
  std::string text;
  for (int i = 0; i < words; ++i) {
    if (i > 0) text += rng() % 10 == 0 ? ". " : " ";
    int len = 2 + static_cast<int>(rng() % 8);
    for (int j = 0; j < len; ++j) text.push_back(static_cast<char>('a' + rng() % 26));
  }
  return text;
}

TEST(SimHashTest, TextWithoutAWordHashesToZero) {
  EXPECT_EQ(SimHash(""), 0u);
  EXPECT_EQ(SimHash("  ,;!? -- \t\n"), 0u);
  EXPECT_NE(SimHash("a"), 0u);
}

TEST(SimHashTest, MatchesTheDocumentedConstruction) {
  const std::vector<std::string> texts = {
      "one",
      "two words",
      "Three Words Here",
      "The quick brown fox jumps over the lazy dog; the DOG sleeps.",
      "x1 y2 z3 a b4 c",
      "caf\xC3\xA9 na\xC3\xAFve \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E r\xC3\xA9sum\xC3\xA9, "
      "2024-01-02",
      std::string(100, 'Q') + " " + std::string(70, 'x') + "Y tail",  // words past 64 bytes
      RandomText(1, 2000),  // more than 255 features: the counters flush
  };
  for (const std::string& text : texts) {
    for (int k = 1; k <= 16; ++k) {
      EXPECT_EQ(SimHash(text, {.shingle_words = k}), ReferenceSimHash(text, k))
          << "k=" << k << " text=" << text.substr(0, 40);
    }
  }
}

TEST(SimHashTest, CaseAndPunctuationDoNotMatter) {
  EXPECT_EQ(SimHash("Hello, World! It's here."), SimHash("hello world it s here"));
  EXPECT_EQ(SimHash(std::string(80, 'A') + " b c"), SimHash(std::string(80, 'a') + "  B\tC"));
  EXPECT_NE(SimHash("hello world it s here"), SimHash("hello world it s there"));
}

TEST(SimHashTest, WordsWithDigitsAreNotFeatures) {
  // A date, a counter, a session token: the shingles close over them.
  EXPECT_EQ(SimHash("Published 2024-03-05, 1234 views. Session 9f8e7d6c. The text follows"),
            SimHash("Published 2025-11-30, 98 views. Session a0b1c2d3. The text follows"));
  EXPECT_EQ(SimHash("the text follows"), SimHash("the 3rd text follows 42"));
  EXPECT_EQ(SimHash("2024 12 31 4th"), 0u);
  EXPECT_NE(SimHash("the text follows"), SimHash("the next text follows"));
}

TEST(SimHashTest, ShorterThanAShingleIsOneShingle) {
  // Two words with shingles of 3: one feature, so the fingerprint is that feature's hash.
  EXPECT_EQ(SimHash("AB cd"), Shingle({WordHash("ab"), WordHash("cd")}, 0, 2));
  // One word, shingles of 1: the fingerprint is the word's shingle hash.
  EXPECT_EQ(SimHash("word", {.shingle_words = 1}),
            Fmix64(WordHash("word") * 0x9e3779b97f4a7c15ULL));
}

TEST(SimHashTest, AFewEditedWordsStayNearAnUnrelatedTextIsFar) {
  const std::string text = RandomText(7, 1000);
  std::string edited = text;
  // Replace one word in the middle by another of the same length.
  size_t at = edited.find(' ', edited.size() / 2) + 1;
  edited[at] = edited[at] == 'z' ? 'y' : 'z';
  EXPECT_LE(HammingDistance(SimHash(text), SimHash(edited)), 3);
  EXPECT_GE(HammingDistance(SimHash(text), SimHash(RandomText(8, 1000))), 16);
}

TEST(SimHashTest, HammingDistanceCountsDifferingBits) {
  EXPECT_EQ(HammingDistance(0, 0), 0);
  EXPECT_EQ(HammingDistance(0, ~uint64_t{0}), 64);
  EXPECT_EQ(HammingDistance(0b1011, 0b0110), 3);
}

}  // namespace
}  // namespace urlsieve
