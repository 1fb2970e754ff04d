// SharedAdmission: the Admission of a crawl whose seen set is shared in Redis with other crawls
// (admission.h; docs/features/redis-seen-set.md). The new URLs go to the local frontier, as in a
// local crawl, but the set outlives a crash of this crawl while the frontier returns to its
// checkpoint, so:
//   - each key is inserted with its claim (claim_record.h: the URL, depth and parent), which
//     CrawlState reads back on --resume for the keys told new after the last checkpoint;
//   - while the set does not answer, the batch is asked again, unchanged, with back-off
//   (SeenRetry),
//     holding the gate;
//   - a batch never answered (a stop during an outage), or answered after the set stopped
//     replaying answers (kSeenReplayWindow), is queued whole: the set may have applied part of it,
//     so routing it whole loses none of its URLs (some may be fetched twice). Each key is routed so
//     once per crawl: the pages that finish at a stop share links.
//
// Thread-safety: Admit from any number of threads; `unanswered_mu_` guards the keys routed
// without an answer; the seen set, router and SeenRetry are thread-safe.
#ifndef URLSIEVE_CRAWLER_CRAWL_SHARED_ADMISSION_H_
#define URLSIEVE_CRAWLER_CRAWL_SHARED_ADMISSION_H_

#include <mutex>
#include <string>
#include <unordered_set>

#include "crawler/crawl/admission.h"

namespace urlsieve {

class Logger;
class SeenRetry;
class StateSeenSet;
class UrlRouter;

class SharedAdmission final : public Admission {
 public:
  // Every part must outlive the admission. `what` names the set in messages (CrawlState::
  // shared_seen_set()).
  SharedAdmission(StateSeenSet* seen_set, UrlRouter* router, SeenRetry* retry, Logger* log,
                  std::string what);

  Result<Admitted> Admit(LinkBatch* batch) override;
  // To the local frontier; a sitemap is claimed once by the crawl's own SitemapStore.
  Result<SitemapQueued> AdmitSitemap(const CanonicalUrl& url, uint32_t nesting,
                                     std::string_view parent) override;
  void Stop() override;

 private:
  // Routes the keys of a batch the set did not answer in time that were not routed so before.
  Result<Admitted> RouteUnanswered(LinkBatch* batch, const Status& inserted, bool too_late);

  StateSeenSet* const seen_set_;
  UrlRouter* const router_;
  SeenRetry* const retry_;
  Logger* const log_;
  const std::string what_;
  std::mutex unanswered_mu_;
  std::unordered_set<std::string> unanswered_keys_;  // guarded by unanswered_mu_
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CRAWL_SHARED_ADMISSION_H_
