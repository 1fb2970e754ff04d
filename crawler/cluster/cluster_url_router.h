// ClusterUrlRouter: where a URL goes in a crawl cluster (docs/features/cluster.md, "The crawl
// cluster").
//
// The UrlRouter seam (url_router.h) routes the URLs the seen stage found new. In a cluster the two
// steps are one: the routed seen set (RedisSeenSet::InsertRouted) tests and sets each URL in its
// partition's shard and, for each one new to the cluster, appends its claim record (claim_record.h:
// depth, fetch form, parent) to that partition's inbox in the same atomic Redis Function call. So
// a URL can never be seen and not queued, even when the node dies between the two, and nothing is
// pushed to the local frontier here: the partition's owner (perhaps this node) reads the URL from
// its inbox (ClusterFeed). The partition of a URL is ClusterPartitionOf(its politeness key, P):
// every node computes it alike.
//
// Thread-safety: InsertRouted may be called from any number of threads (the set is thread-safe);
// the rest is immutable.
#ifndef URLSIEVE_CRAWLER_CLUSTER_CLUSTER_URL_ROUTER_H_
#define URLSIEVE_CRAWLER_CLUSTER_CLUSTER_URL_ROUTER_H_

#include <cstdint>
#include <span>
#include <string_view>

#include "base/status.h"
#include "dedup/bloom/key_hash_value.h"
#include "frontier/frontier_options.h"
#include "url/url_canonicalizer.h"

namespace urlsieve {

class ClusterCoordinator;
class RedisSeenSet;

class ClusterUrlRouter {
 public:
  // `set` (routed, with `partitions` shards) must outlive the router; `frontier` gives the
  // politeness key kind. `coordinator` (may be null; must outlive the router) is told which
  // partitions this node appended to (ClusterCoordinator::Nudge), so that it reads them at once.
  ClusterUrlRouter(RedisSeenSet* set, FrontierOptions frontier, uint32_t partitions,
                   ClusterCoordinator* coordinator = nullptr);

  // The partition of a URL in fetch form (parsed, or as a lease holds it; a URL that does not
  // split is partition 0).
  uint32_t PartitionOf(const CanonicalUrl& url) const;
  uint32_t PartitionOf(std::string_view url) const;
  // The partition of a politeness key (frontier/politeness_key.h).
  uint32_t PartitionOfKey(std::string_view politeness_key) const;

  // Tests and sets keys[i] (the seen stage's key of urls[i], hash hashes[i]) and queues each new
  // URL, found at `depth` on `parent` ("" for seeds), in its partition's inbox; is_new[i] tells
  // which. Errors as RedisSeenSet::InsertRouted: retry a failed batch unchanged (SeenRetry).
  Status InsertRouted(std::span<const CanonicalUrl> urls, std::span<const std::string_view> keys,
                      std::span<const KeyHash> hashes, uint32_t depth, std::string_view parent,
                      std::span<bool> is_new);

  // A sitemap to read, at nesting level `nesting`, named by `parent`: tested and set in the routed
  // seen set under its own key, "sitemap <re-crawl round> <url>" (never a page's: a page key is a
  // URL), and, when new (*fresh), appended to the inbox of its host's partition as a sitemap
  // record (EncodeSitemapClaim). So the owner of its host reads it, once per crawl and re-crawl
  // round, whichever node found it.
  Status InsertSitemap(const CanonicalUrl& url, uint32_t nesting, std::string_view parent,
                       bool* fresh);

 private:
  RedisSeenSet* const set_;
  const FrontierOptions frontier_;
  const uint32_t partitions_;
  ClusterCoordinator* const coordinator_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CLUSTER_CLUSTER_URL_ROUTER_H_
