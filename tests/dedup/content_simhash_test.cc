// SimHash (dedup/content/simhash.h): the documented construction, reproduced here the slow and
// obvious way, and the properties a near-duplicate test relies on.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <random>
#include <string>
#include <vector>

#include "dedup/content/simhash.h"

namespace urlsieve {
namespace {

// The header's construction, word by word with strings and plain counters.
uint64_t ReferenceSimHash(std::string_view text, int k) {
  std::vector<uint64_t> word_hashes;
  std::string word;
  auto flush = [&] {
    if (!word.empty()) word_hashes.push_back(XXH3_64bits(word.data(), word.size()));
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
    features.push_back(XXH3_64bits(word_hashes.data(), n * 8));
  } else {
    for (size_t i = 0; i + ks <= n; ++i) features.push_back(XXH3_64bits(&word_hashes[i], ks * 8));
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
  EXPECT_EQ(SimHash("Hello, World! It's 2024."), SimHash("hello world it s 2024"));
  EXPECT_EQ(SimHash(std::string(80, 'A') + " b c"), SimHash(std::string(80, 'a') + "  B\tC"));
  EXPECT_NE(SimHash("hello world it s 2024"), SimHash("hello world it s 2025"));
}

TEST(SimHashTest, ShorterThanAShingleIsOneShingle) {
  // Two words with shingles of 3: one feature, so the fingerprint is that feature's hash.
  uint64_t words[2] = {XXH3_64bits("ab", 2), XXH3_64bits("cd", 2)};
  EXPECT_EQ(SimHash("AB cd"), XXH3_64bits(words, sizeof(words)));
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
