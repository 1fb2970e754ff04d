#include "crawler/cluster/cluster_admission.h"

#include <memory>

#include "crawler/cluster/cluster_url_router.h"
#include "crawler/crawl/seen_retry.h"

namespace urlsieve {

void ClusterAdmission::Stop() { retry_->Stop(); }

Result<Admitted> ClusterAdmission::Admit(LinkBatch* batch) {
  const size_t n = batch->urls.size();
  std::unique_ptr<bool[]> is_new(new bool[n]());
  Status inserted = retry_->Run([&] {
    return router_->InsertRouted(batch->urls, batch->keys, batch->hashes, batch->depth,
                                 batch->parent, std::span<bool>(is_new.get(), n));
  });
  Admitted admitted;
  if (!inserted.ok()) {
    if (inserted.code() == StatusCode::kUnavailable && retry_->stopped()) {
      admitted.answered = false;
      admitted.taken = false;
      return admitted;
    }
    return inserted;
  }
  admitted.fresh = static_cast<int>(batch->KeepNew(is_new.get()));
  return admitted;
}

Result<SitemapQueued> ClusterAdmission::AdmitSitemap(const CanonicalUrl& url, uint32_t nesting,
                                                     std::string_view parent) {
  bool fresh = false;
  URLSIEVE_RETURN_IF_ERROR(
      retry_->Run([&] { return router_->InsertSitemap(url, nesting, parent, &fresh); }));
  return fresh ? SitemapQueued::kRouted : SitemapQueued::kBefore;
}

}  // namespace urlsieve
