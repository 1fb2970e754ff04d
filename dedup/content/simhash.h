// SimHash: Charikar's similarity hash of a text, 64 bits, for near-duplicate pages
// (docs/features/content-seen.md, "Fingerprints").
//
// Charikar (STOC 2002), as Manku, Jain and Das Sarma (WWW 2007) use it for web pages: the text is
// cut into words (maximal runs of letters and digits; every byte >= 0x80 counts as a letter, so
// any UTF-8 script forms words; ASCII letters are lowercased), the features are the shingles of
// `shingle_words` consecutive words (a text shorter than that is one shingle), each feature is
// hashed to 64 bits, and bit i of the result is set when
// the features whose hash has bit i set outnumber those whose hash has it clear. Every feature
// weighs 1: a repeated shingle counts each time it occurs (term frequency), no IDF (a crawler has
// no corpus statistics when it sees a page). Two texts that share most shingles get fingerprints
// at a small Hamming distance; Manku et al. take distance <= 3 of 64 as "near-duplicate".
// A text without a word hashes to 0.
// The hashes, exactly (so that other languages can reproduce a fingerprint): a word's hash is
// XXH3-64 (seed 0) of its lowercased bytes; a shingle's hash is XXH3-64 (seed 0) of its words'
// hashes, oldest first, each as 8 little-endian bytes (8 x shingle_words bytes). Hashing word
// hashes rather than the joined words lets each word be hashed once, without copying the text.
// Thread-safety: pure functions.
#ifndef URLSIEVE_DEDUP_CONTENT_SIMHASH_H_
#define URLSIEVE_DEDUP_CONTENT_SIMHASH_H_

#include <bit>
#include <cstdint>
#include <string_view>

namespace urlsieve {

struct SimHashOptions {
  int shingle_words = 3;  // 1 .. 16
};

uint64_t SimHash(std::string_view utf8_text, const SimHashOptions& options = {});

inline int HammingDistance(uint64_t a, uint64_t b) { return std::popcount(a ^ b); }

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_CONTENT_SIMHASH_H_
