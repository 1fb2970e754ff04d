#include "tools/site_server/map_site.h"

#include <utility>

namespace urlsieve::site {

void MapSite::Set(const std::string& resource, SiteResponse response) {
  std::lock_guard<std::mutex> lock(mu_);
  responses_.insert_or_assign(resource, std::move(response));
}

void MapSite::Set(const std::string& resource, const std::string& content_type, std::string body) {
  SiteResponse response;
  response.content_type = content_type;
  response.body = std::move(body);
  Set(resource, std::move(response));
}

SiteResponse MapSite::Handle(const SiteRequest& request) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = responses_.find(request.resource);
  if (it == responses_.end()) return PlainStatus(404, "not found: " + request.resource);
  return it->second;
}

}  // namespace urlsieve::site
