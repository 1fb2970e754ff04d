// StaticSite: serves a directory as one host — the bundled demo site (tools/demo_site/).
//
// "/dir/" serves dir/index.html; the content type comes from the file extension. A file is sent
// with an ETag (a hash of its content) and a Last-Modified (its mtime), so SiteServer answers
// conditional GETs on it with 304 while it is unchanged. A `_redirects`
// file at the root lists redirects, one per line: `<from path> <to location> [status]` (status
// 301 by default; '#' starts a comment). Paths escaping the root ("..") and unknown files get a 404
// page (404.html of the root when present).
//
// Thread-safety: thread-safe (files are read on every request; the redirect table is immutable).
#ifndef URLSIEVE_TOOLS_SITE_SERVER_STATIC_SITE_H_
#define URLSIEVE_TOOLS_SITE_SERVER_STATIC_SITE_H_

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "base/status.h"
#include "tools/site_server/site.h"

namespace urlsieve::site {

class StaticSite : public Site {
 public:
  // Fails when root is not a directory or _redirects is malformed.
  static Result<std::unique_ptr<StaticSite>> Open(const std::filesystem::path& root);

  SiteResponse Handle(const SiteRequest& request) override;

 private:
  explicit StaticSite(std::filesystem::path root) : root_(std::move(root)) {}

  const std::filesystem::path root_;
  std::map<std::string, std::pair<int, std::string>> redirects_;  // from → (status, location)
};

}  // namespace urlsieve::site

#endif  // URLSIEVE_TOOLS_SITE_SERVER_STATIC_SITE_H_
