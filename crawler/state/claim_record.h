// ClaimRecord: the crawl's record of a URL handed to a shared seen set with the URL (the claim of
// SeenSet::InsertHashedIfNewClaiming, or the inbox payload of RedisSeenSet::InsertRouted in a
// crawl cluster): "1 <depth> <fetch form> <parent>" (a canonical URL holds no space; the parent
// is empty for a seed). The leading 1 is the record's version; "S" instead marks a sitemap to read
// (a cluster routes sitemaps to the owner of their host). A resumed crawl queues its claims
// again; a cluster node queues the ones it reads from its inboxes.
//
// Thread-safety: plain values and pure functions.
#ifndef URLSIEVE_CRAWLER_STATE_CLAIM_RECORD_H_
#define URLSIEVE_CRAWLER_STATE_CLAIM_RECORD_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace urlsieve {

struct ClaimRecord {
  bool sitemap = false;  // a sitemap to read ("S ..."; depth: its nesting level)
  uint32_t depth = 0;
  std::string url;     // fetch form
  std::string parent;  // "" for a seed
};

std::string EncodeClaim(std::string_view url, uint32_t depth, std::string_view parent);
// A sitemap's record in a cluster's inbox: "S <nesting> <url> <parent>".
std::string EncodeSitemapClaim(std::string_view url, uint32_t nesting, std::string_view parent);
// nullopt when `claim` is not a record of this version.
std::optional<ClaimRecord> DecodeClaim(std::string_view claim);

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_STATE_CLAIM_RECORD_H_
