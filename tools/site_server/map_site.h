// MapSite: a Site of fixed responses, one per resource ("/robots.txt", "/sitemap.xml?x=1"), set by
// the test once the server's origins are known; any other resource is a 404. For sites whose
// pages name the server's own origin (sitemaps list absolute URLs).
//
// Thread-safety: Set and Handle may be called concurrently (one mutex).
#ifndef URLSIEVE_TOOLS_SITE_SERVER_MAP_SITE_H_
#define URLSIEVE_TOOLS_SITE_SERVER_MAP_SITE_H_

#include <map>
#include <mutex>
#include <string>

#include "tools/site_server/site.h"

namespace urlsieve::site {

class MapSite : public Site {
 public:
  void Set(const std::string& resource, SiteResponse response);
  // Shorthand: a 200 with this content type and body.
  void Set(const std::string& resource, const std::string& content_type, std::string body);
  SiteResponse Handle(const SiteRequest& request) override;

 private:
  std::mutex mu_;
  std::map<std::string, SiteResponse> responses_;  // guarded by mu_
};

}  // namespace urlsieve::site

#endif  // URLSIEVE_TOOLS_SITE_SERVER_MAP_SITE_H_
