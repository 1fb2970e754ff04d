#include "crawler/crawl/deployment.h"

#include "base/logger.h"
#include "crawler/crawl/seen_retry.h"
#include "crawler/state/crawl_state.h"
#include "dedup/content/redis_content_seen_set.h"
#include "redis/redis_address.h"

namespace urlsieve {

std::unique_ptr<SeenRetry> SharedSeenSetRetry(const CrawlParts& parts) {
  SeenRetryOptions retry;
  retry.what = parts.state->shared_seen_set();
  Logger* log = parts.log;
  return std::make_unique<SeenRetry>(retry,
                                     [log](const std::string& message) { log->Info(message); });
}

Result<std::unique_ptr<ContentSeenSet>> OpenSharedContentSet(const std::string& url,
                                                             const std::string& name,
                                                             const ContentSeenOptions& options) {
  Result<RedisAddress> address = RedisAddress::Parse(url);
  if (!address.ok()) return address.status();
  RedisContentSeenSetOptions shared;
  shared.address = *address;
  shared.name = name;
  shared.max_distance = options.max_distance;
  shared.near = options.near;
  Result<std::unique_ptr<RedisContentSeenSet>> set = RedisContentSeenSet::Open(shared);
  if (!set.ok()) return set.status();
  return std::unique_ptr<ContentSeenSet>(std::move(*set));
}

const std::string& Deployment::node_id() const {
  static const std::string kNone;
  return kNone;
}

}  // namespace urlsieve
