#include "crawler/crawl/deployment.h"

#include "base/logger.h"
#include "crawler/crawl/seen_retry.h"
#include "crawler/state/crawl_state.h"

namespace urlsieve {

std::unique_ptr<SeenRetry> SharedSeenSetRetry(const CrawlParts& parts) {
  SeenRetryOptions retry;
  retry.what = parts.state->shared_seen_set();
  Logger* log = parts.log;
  return std::make_unique<SeenRetry>(retry,
                                     [log](const std::string& message) { log->Info(message); });
}

const std::string& Deployment::node_id() const {
  static const std::string kNone;
  return kNone;
}

}  // namespace urlsieve
