#include "crawler/crawl/local_admission.h"

#include <memory>

#include "crawler/crawl/url_router.h"
#include "dedup/state_seen_set.h"

namespace urlsieve {

Result<Admitted> LocalAdmission::Admit(LinkBatch* batch) {
  const size_t n = batch->keys.size();
  std::vector<std::string_view> no_claims(n);  // a local set keeps no claim log
  std::unique_ptr<bool[]> is_new(new bool[n]());
  URLSIEVE_RETURN_IF_ERROR(seen_set_->InsertHashedIfNewClaiming(
      batch->keys, batch->hashes, no_claims, std::span<bool>(is_new.get(), n)));
  Admitted admitted;
  admitted.fresh = static_cast<int>(batch->KeepNew(is_new.get()));
  URLSIEVE_RETURN_IF_ERROR(router_->Route(batch->urls, batch->depth, batch->parent));
  return admitted;
}

Result<SitemapQueued> LocalAdmission::AdmitSitemap(const CanonicalUrl& url, uint32_t nesting,
                                                   std::string_view parent) {
  router_->RouteSitemap(url, nesting, parent);
  return SitemapQueued::kLocally;
}

}  // namespace urlsieve
