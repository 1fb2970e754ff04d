#include "crawler/crawl/local_deployment.h"

#include "crawler/config/crawl_config.h"
#include "crawler/crawl/local_admission.h"
#include "crawler/crawl/local_work_source.h"
#include "crawler/crawl/seen_retry.h"
#include "crawler/crawl/shared_admission.h"
#include "crawler/state/crawl_state.h"
#include "frontier/frontier.h"

namespace urlsieve {

LocalDeployment::LocalDeployment() = default;
LocalDeployment::~LocalDeployment() = default;

Status LocalDeployment::RestorePending(SqliteDb& db, Frontier* frontier) {
  return frontier->Restore(db);
}

Status LocalDeployment::Build(const CrawlParts& parts, const std::vector<CanonicalUrl>&) {
  CrawlState& state = *parts.state;
  if (state.shared_seen_set().empty()) {
    admission_ = std::make_unique<LocalAdmission>(&state.seen_set(), parts.router);
  } else {
    retry_ = SharedSeenSetRetry(parts);
    admission_ = std::make_unique<SharedAdmission>(&state.seen_set(), parts.router, retry_.get(),
                                                   parts.log, state.shared_seen_set());
  }
  work_ = std::make_unique<LocalWorkSource>(parts.frontier, parts.checkpoint, parts.fail,
                                            parts.config->crawl.checkpoint_interval_s == 0);
  return Status::Ok();
}

}  // namespace urlsieve
