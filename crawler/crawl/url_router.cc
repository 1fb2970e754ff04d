#include "crawler/crawl/url_router.h"

#include "frontier/frontier.h"

namespace urlsieve {

Status LocalUrlRouter::Route(std::span<const CanonicalUrl> urls, uint32_t depth,
                             std::string_view parent) {
  for (const CanonicalUrl& url : urls) frontier_->Push(url, depth, parent);
  return Status::Ok();
}

void LocalUrlRouter::RouteSitemap(const CanonicalUrl& url, uint32_t nesting,
                                  std::string_view parent) {
  frontier_->PushSitemap(url, nesting, parent);
}

}  // namespace urlsieve
