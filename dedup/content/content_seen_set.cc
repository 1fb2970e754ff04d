#include "dedup/content/content_seen_set.h"

#include <xxhash.h>

namespace urlsieve {
namespace {

// RFC 4648 §6: 'A'..'Z' are 0..25, '2'..'7' are 26..31 (lower-case letters accepted too, as some
// WARC writers emit them); -1 for anything else.
int Base32Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= '2' && c <= '7') return c - '2' + 26;
  return -1;
}

bool StartsWithNoCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != prefix[i]) return false;
  }
  return true;
}

}  // namespace

std::optional<uint64_t> DigestFromWarcPayloadDigest(std::string_view warc_digest) {
  // "sha1:" (the label is case-insensitive in practice: Heritrix writes "sha1:", others "SHA1:")
  // and the 160 bits of SHA-1 in exactly 32 characters, which need no padding.
  constexpr std::string_view kLabel = "sha1:";
  if (!StartsWithNoCase(warc_digest, kLabel)) return std::nullopt;
  std::string_view base32 = warc_digest.substr(kLabel.size());
  if (base32.size() != 32) return std::nullopt;
  uint64_t first64 = 0;
  for (size_t i = 0; i < base32.size(); ++i) {
    const int v = Base32Value(base32[i]);
    if (v < 0) return std::nullopt;
    // Characters 0..11 carry bits 0..59, character 12 bits 60..64: its top 4 bits complete 64.
    if (i < 12) {
      first64 = (first64 << 5) | static_cast<uint64_t>(v);
    } else if (i == 12) {
      first64 = (first64 << 4) | static_cast<uint64_t>(v >> 1);
    }
  }
  return first64;
}

uint64_t PayloadDigest(std::string_view payload) {
  return XXH3_64bits(payload.data(), payload.size());
}

}  // namespace urlsieve
