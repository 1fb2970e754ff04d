// ClusterAdmission: the Admission of a node of a crawl cluster (admission.h; docs/features/
// cluster.md). The routed seen set tests and sets each key in its partition's shard and appends
// each URL new to the cluster to its partition's inbox in one atomic step (ClusterUrlRouter); the
// partition's owner, perhaps this node, reads it from there (ClusterWorkSource). The step is
// retried unchanged while Redis does not answer (SeenRetry): a batch never answered was applied
// whole or not at all, and what it applied is in the inboxes. A stop while Redis does not answer
// leaves the links not taken: the page is not recorded and its inbox entry stays pending, for the
// partition's next owner.
//
// The inboxes are durable in Redis, not in the local checkpoint: NeedsGate() is false.
//
// Thread-safety: Admit from any number of threads (the router and SeenRetry are thread-safe).
#ifndef URLSIEVE_CRAWLER_CLUSTER_CLUSTER_ADMISSION_H_
#define URLSIEVE_CRAWLER_CLUSTER_CLUSTER_ADMISSION_H_

#include "crawler/crawl/admission.h"

namespace urlsieve {

class ClusterUrlRouter;
class SeenRetry;

class ClusterAdmission final : public Admission {
 public:
  // Both must outlive the admission.
  ClusterAdmission(ClusterUrlRouter* router, SeenRetry* retry) : router_(router), retry_(retry) {}

  Result<Admitted> Admit(LinkBatch* batch) override;
  // Through the routed seen set too (ClusterUrlRouter::InsertSitemap): once per crawl and round.
  Result<SitemapQueued> AdmitSitemap(const CanonicalUrl& url, uint32_t nesting,
                                     std::string_view parent) override;
  bool NeedsGate() const override { return false; }
  void Stop() override;

 private:
  ClusterUrlRouter* const router_;
  SeenRetry* const retry_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CLUSTER_CLUSTER_ADMISSION_H_
