#include "crawler/cluster/cluster_url_router.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "crawler/cluster/cluster_coordinator.h"
#include "crawler/state/claim_record.h"
#include "dedup/redis_seen_set.h"
#include "dedup/seen_set.h"
#include "frontier/politeness_key.h"
#include "url/url_parts.h"

namespace urlsieve {

ClusterUrlRouter::ClusterUrlRouter(RedisSeenSet* set, FrontierOptions frontier, uint32_t partitions,
                                   ClusterCoordinator* coordinator)
    : set_(set),
      frontier_(std::move(frontier)),
      partitions_(partitions),
      coordinator_(coordinator) {}

uint32_t ClusterUrlRouter::PartitionOf(const CanonicalUrl& url) const {
  return ClusterPartitionOf(PolitenessKey(frontier_, PartsOf(url)), partitions_);
}

uint32_t ClusterUrlRouter::PartitionOf(std::string_view url) const {
  UrlParts parts;
  if (!SplitUrl(url, &parts)) return 0;
  return ClusterPartitionOf(PolitenessKey(frontier_, parts), partitions_);
}

uint32_t ClusterUrlRouter::PartitionOfKey(std::string_view politeness_key) const {
  return ClusterPartitionOf(politeness_key, partitions_);
}

Status ClusterUrlRouter::InsertRouted(std::span<const CanonicalUrl> urls,
                                      std::span<const std::string_view> keys,
                                      std::span<const KeyHash> hashes, uint32_t depth,
                                      std::string_view parent, std::span<bool> is_new) {
  const size_t n = urls.size();
  std::vector<uint32_t> shards(n);
  std::vector<std::string> claims;
  claims.reserve(n);
  std::vector<std::string_view> payloads(n);
  for (size_t i = 0; i < n; ++i) {
    shards[i] = PartitionOf(urls[i]);
    claims.push_back(EncodeClaim(urls[i].key(), depth, parent));
  }
  for (size_t i = 0; i < n; ++i) payloads[i] = claims[i];
  URLSIEVE_RETURN_IF_ERROR(set_->InsertRouted(shards, keys, hashes, payloads, is_new));
  if (coordinator_ != nullptr) {
    std::vector<uint32_t> appended;
    for (size_t i = 0; i < n; ++i) {
      if (is_new[i]) appended.push_back(shards[i]);
    }
    std::sort(appended.begin(), appended.end());
    appended.erase(std::unique(appended.begin(), appended.end()), appended.end());
    if (!appended.empty()) coordinator_->Nudge(appended);
  }
  return Status::Ok();
}

Status ClusterUrlRouter::InsertSitemap(const CanonicalUrl& url, uint32_t nesting,
                                       std::string_view parent, bool* fresh) {
  const uint32_t shard = PartitionOf(url);
  std::string key = "sitemap ";
  key += std::to_string(coordinator_ != nullptr ? coordinator_->recrawl_round() : 0);
  key += ' ';
  key += url.key();
  const std::string_view key_view = key;
  const KeyHash hash = SeenSet::Hash(key);
  const std::string claim = EncodeSitemapClaim(url.key(), nesting, parent);
  const std::string_view payload = claim;
  bool is_new = false;
  URLSIEVE_RETURN_IF_ERROR(set_->InsertRouted(
      std::span<const uint32_t>(&shard, 1), std::span<const std::string_view>(&key_view, 1),
      std::span<const KeyHash>(&hash, 1), std::span<const std::string_view>(&payload, 1),
      std::span<bool>(&is_new, 1)));
  if (is_new && coordinator_ != nullptr) coordinator_->Nudge(std::span<const uint32_t>(&shard, 1));
  *fresh = is_new;
  return Status::Ok();
}

}  // namespace urlsieve
