// DuplicateFinder: the exact and near-duplicate groups among the records of WARC files, for
// `urlsieve dupes` (docs/features/content-seen.md, "urlsieve dupes").
//
// Each 2xx HTTP response is fingerprinted as the crawl does it: its payload digest (the first 64
// bits of the SHA-1 of the payload: the record's "sha1:" WARC-Payload-Digest when it has one, else
// the one WarcReader computed), and for an HTML page (Content-Type text/html or
// application/xhtml+xml; without a Content-Type, a body that starts like HTML) the SimHash of its
// visible text: decoded as the crawl decodes it (DecodedPage with the HTTP Content-Type) and read
// by LinkExtractor with collect_text. A page with fewer than min_words words, or whose payload
// could not be kept whole (cut at the reader's cap, an unsupported or corrupt Content-Encoding),
// gets no SimHash.
// Groups: exact — the records with one digest, the first one read first; near — a page that is
// not an exact copy and whose SimHash is within max_distance of an earlier page's (the nearest,
// NearDuplicateIndex), grouped under that earlier page. Revisit records carrying a sha1 payload
// digest (any profile) join the exact group of their digest marked as revisits: the archive has
// already deduplicated them.
// Memory: about 100 bytes plus the URI, date and record id per distinct payload, plus the
// indexes' (dedup/content/exact_content_index.h, near_duplicate_index.h).
// Thread-safety: none; one finder per thread.
#ifndef URLSIEVE_CRAWLER_PAGE_DUPLICATE_FINDER_H_
#define URLSIEVE_CRAWLER_PAGE_DUPLICATE_FINDER_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "crawler/output/warc_reader.h"
#include "crawler/page/link_extractor.h"
#include "dedup/content/exact_content_index.h"
#include "dedup/content/near_duplicate_index.h"
#include "url/url_canonicalizer.h"

namespace urlsieve {

struct DuplicateMember {
  uint32_t file = 0;  // the caller's file number
  uint64_t offset = 0;
  uint64_t offset_in_member = 0;
  std::string uri;
  std::string date;
  std::string record_id;
  bool revisit = false;
};

struct DuplicateGroup {
  enum class Kind : uint8_t { kExact, kNear };
  struct Copy {
    size_t member;  // DuplicateFinder::member()
    int distance;   // near: the SimHash distance to the first; exact: 0
  };
  Kind kind = Kind::kExact;
  size_t first = 0;
  std::vector<Copy> copies;
};

struct DuplicateFinderOptions {
  int max_distance = 3;  // k, 0 .. 7
  bool near = true;
  int min_words = 1;  // pages with fewer words get no SimHash (a page without a word hashes to 0)
  std::string default_encoding = "windows-1252";  // the crawl's --default-encoding
};

struct DuplicateCounts {
  uint64_t records = 0;
  uint64_t responses = 0;      // HTTP response records
  uint64_t fingerprinted = 0;  // 2xx responses with a digest
  uint64_t html_pages = 0;
  uint64_t simhashed = 0;  // HTML pages that got a SimHash
  uint64_t revisits = 0;   // revisit records with a sha1 payload digest
  uint64_t exact_groups = 0;
  uint64_t exact_copies = 0;
  uint64_t near_groups = 0;
  uint64_t near_copies = 0;
};

class DuplicateFinder {
 public:
  explicit DuplicateFinder(const DuplicateFinderOptions& options);

  // For WarcReaderOptions::keep_payload: the payloads Add needs (2xx HTML pages, when near).
  bool WantsPayload(const WarcReadRecord& record) const;
  void Add(uint32_t file, const WarcReadRecord& record);

  // The groups with at least one copy: exact ones, then near ones, each in the order of their
  // first records.
  std::vector<const DuplicateGroup*> Groups() const;
  const DuplicateMember& member(size_t i) const { return members_[i]; }
  const DuplicateCounts& counts() const { return counts_; }

 private:
  size_t AddMember(uint32_t file, const WarcReadRecord& record, bool revisit);
  DuplicateGroup& GroupOf(std::unordered_map<size_t, size_t>* index, DuplicateGroup::Kind kind,
                          size_t first);
  bool SimHashOf(const WarcReadRecord& record, uint64_t* simhash) const;

  DuplicateFinderOptions options_;
  const TextEncoding* default_encoding_;
  UrlCanonicalizer canonicalizer_;
  LinkExtractor extractor_;
  ExactContentIndex exact_;
  NearDuplicateIndex near_;
  std::vector<DuplicateMember> members_;
  std::vector<DuplicateGroup> groups_;
  std::unordered_map<size_t, size_t> exact_group_of_;  // first member -> groups_ index
  std::unordered_map<size_t, size_t> near_group_of_;
  DuplicateCounts counts_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_PAGE_DUPLICATE_FINDER_H_
