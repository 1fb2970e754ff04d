// SimHash: Charikar's similarity hash of a text, 64 bits, for near-duplicate pages
// (docs/features/content-seen.md, "Fingerprints").
//
// Charikar (STOC 2002), as Manku, Jain and Das Sarma (WWW 2007) use it for web pages: the text is
// cut into words (maximal runs of ASCII letters and digits and of bytes >= 0x80, so that any UTF-8
// script forms words; ASCII letters are lowercased); a word with an ASCII digit is dropped (dates,
// counters, times, prices, ids and session tokens are what differs between two fetches of one
// page); the features are the shingles of `shingle_words` consecutive remaining words (a text
// with fewer is one shingle), each hashed to 64 bits; bit i of the result is set when the features
// whose hash has bit i set outnumber those whose hash has it clear. Every feature weighs 1: a
// repeated shingle counts each time it occurs (term frequency), no IDF (a crawler has no corpus
// statistics when it sees a page). Two texts that share most shingles get fingerprints at a small
// Hamming distance; Manku et al. take distance <= 3 of 64 as "near-duplicate". A text without a
// (remaining) word hashes to 0.
// The hashes, exactly (so that other languages can reproduce a fingerprint): a word's hash is
// the fold h = (h ^ chunk) * 0x9e3779b97f4a7c15 (mod 2^64), from h = 0xcbf29ce484222325, over its
// lowercased bytes cut into chunks of 8 from the start, a chunk's value the big-endian number of
// its bytes (the last may hold fewer); a shingle's hash is fmix64(f), MurmurHash3's 64-bit
// finalizer, of the fold f = (f ^ w) * 0x9e3779b97f4a7c15 (mod 2^64) over its words' hashes w,
// oldest first, from f = 0. Each word is hashed once, in the pass that finds it, and a shingle
// costs k multiplies: no copy of the text, no allocation, a few per cent of the HTML parse before
// it (docs/features/content-seen.md, "Fingerprints"). Thread-safety: pure functions.
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
