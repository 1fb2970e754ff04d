#include "crawler/cluster/cluster_url_router.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "crawler/cluster/cluster_coordinator.h"
#include "crawler/state/claim_record.h"
#include "dedup/redis_seen_set.h"
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

}  // namespace urlsieve
