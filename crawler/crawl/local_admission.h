// LocalAdmission: the Admission of a crawl with its own seen set (admission.h). Each batch is
// one test-and-set on the seen set (StateSeenSet::InsertHashedIfNewClaiming, with no claims); the
// new URLs go to the local frontier (UrlRouter).
//
// Thread-safety: as the seen set and the router, both thread-safe; no state of its own.
#ifndef URLSIEVE_CRAWLER_CRAWL_LOCAL_ADMISSION_H_
#define URLSIEVE_CRAWLER_CRAWL_LOCAL_ADMISSION_H_

#include "crawler/crawl/admission.h"

namespace urlsieve {

class StateSeenSet;
class UrlRouter;

class LocalAdmission final : public Admission {
 public:
  // Both must outlive the admission.
  LocalAdmission(StateSeenSet* seen_set, UrlRouter* router)
      : seen_set_(seen_set), router_(router) {}

  Result<Admitted> Admit(LinkBatch* batch) override;
  // To the local frontier; a sitemap is claimed once by the crawl's own SitemapStore.
  Result<SitemapQueued> AdmitSitemap(const CanonicalUrl& url, uint32_t nesting,
                                     std::string_view parent) override;

 private:
  StateSeenSet* const seen_set_;
  UrlRouter* const router_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CRAWL_LOCAL_ADMISSION_H_
