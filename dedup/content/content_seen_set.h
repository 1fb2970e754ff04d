// ContentSeenSet: the content-seen test, as SeenSet is the URL-seen test
// (docs/features/content-seen.md, "The content-seen test"). Mercator's second test: has the crawl
// already fetched this page's content, under any URL?
//
// A page is given by its fingerprints (ContentFingerprint): 64 bits of its payload digest, and for
// a decoded HTML page the SimHash of its visible text. Test() answers, and records the page when
// it is a first:
//   - exact: a stored page has the same digest -> kExact, nothing stored;
//   - near: else, with a simhash, a stored page's simhash is within max_distance -> kNear; the
//     digest is stored (later exact copies of this page are copies of this one), the simhash not
//     (the near index holds the first of each neighbourhood);
//   - else kFirst: the digest and the simhash are stored.
// Each stored page carries a ContentCopy: its id (the crawl: the URL) and data (the crawl: the
// WARC record a revisit refers to), returned with the verdicts that name it. A page whose id equals
// the stored first's id is the same page fetched again (a re-crawl, a retry after a crash): kFirst,
// `refetch` set, nothing changes.
// Implementations: LocalContentSeenSet (in memory, checkpointed into SQLite), RedisContentSeenSet
// (shared; of two pages with one fingerprint tested at once anywhere, exactly one is first).
// Thread-safety: every method may be called concurrently.
#ifndef URLSIEVE_DEDUP_CONTENT_CONTENT_SEEN_SET_H_
#define URLSIEVE_DEDUP_CONTENT_CONTENT_SEEN_SET_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace urlsieve {

struct ContentFingerprint {
  // 64 bits of a payload digest. The crawl and `urlsieve dupes` use the first 8 bytes of the
  // payload's SHA-1 (DigestFromWarcPayloadDigest); an embedder may use any 64-bit hash of the
  // bytes (PayloadDigest), as long as one set sees one kind.
  uint64_t digest = 0;
  std::optional<uint64_t> simhash;  // SimHash of the visible text (decoded HTML pages only)
};

// The first 8 bytes (big-endian) of the SHA-1 in a WARC digest "sha1:<32 base32 characters>"
// (RFC 4648 §6); nullopt for any other form.
std::optional<uint64_t> DigestFromWarcPayloadDigest(std::string_view warc_digest);
// XXH3-64 of the bytes, for embedders without a SHA-1 at hand.
uint64_t PayloadDigest(std::string_view payload);

struct ContentCopy {
  std::string id;    // who the page is (the crawl: its URL); 1 .. 4096 bytes, no NUL
  std::string data;  // what the caller keeps with it (the crawl: its WARC reference); <= 4096 bytes
};

struct ContentVerdict {
  enum class Kind : uint8_t { kFirst, kExact, kNear };
  Kind kind = Kind::kFirst;
  bool refetch = false;  // kFirst: the stored first is this page (same id)
  ContentCopy first;     // kExact, kNear: the stored first copy
  int distance = 0;      // kNear: the Hamming distance of the simhashes (1 .. max_distance; 0 can
                         // happen: another payload with an identical visible text)
};

class ContentSeenSet {
 public:
  virtual ~ContentSeenSet() = default;

  // `page`: the tested page's own copy, stored when it is a first (see above).
  virtual Result<ContentVerdict> Test(const ContentFingerprint& fingerprint,
                                      const ContentCopy& page) = 0;
  // Removes what is stored for the page with this fingerprint and id (its digest and simhash, when
  // they are stored as this id's); false when nothing was.
  virtual Result<bool> Forget(const ContentFingerprint& fingerprint, std::string_view id) = 0;

  virtual int max_distance() const = 0;
  virtual uint64_t size() const = 0;  // digests stored (pages tested as exact-first)
};

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_CONTENT_CONTENT_SEEN_SET_H_
