#include "tools/site_server/encoded_site.h"

#include <fstream>
#include <iterator>

namespace urlsieve::site {

Result<std::unique_ptr<EncodedSite>> EncodedSite::Open(const std::filesystem::path& dir) {
  const std::filesystem::path manifest = dir / "manifest.tsv";
  std::ifstream in(manifest, std::ios::binary);
  if (!in) return Status::IoError(manifest.string() + ": cannot open");
  std::unique_ptr<EncodedSite> site(new EncodedSite());
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string where = manifest.string() + ":" + std::to_string(number);
    const size_t tab1 = line.find('\t');
    const size_t tab2 = tab1 == std::string::npos ? tab1 : line.find('\t', tab1 + 1);
    if (tab2 == std::string::npos || line.find('\t', tab2 + 1) != std::string::npos ||
        line.empty() || line.front() != '/') {
      return Status::InvalidArgument(where + ": expected `/resource<TAB>content type<TAB>file`");
    }
    SiteResponse response;
    response.content_type = line.substr(tab1 + 1, tab2 - tab1 - 1);
    const std::filesystem::path body = dir / line.substr(tab2 + 1);
    std::ifstream body_in(body, std::ios::binary);
    if (!body_in) return Status::IoError(where + ": cannot open " + body.string());
    response.body.assign(std::istreambuf_iterator<char>(body_in), {});
    if (!site->pages_.emplace(line.substr(0, tab1), std::move(response)).second) {
      return Status::InvalidArgument(where + ": resource listed twice");
    }
  }
  if (site->pages_.empty()) return Status::InvalidArgument(manifest.string() + ": no resource");
  return site;
}

SiteResponse EncodedSite::Handle(const SiteRequest& request) {
  const auto it = pages_.find(request.resource);
  if (it == pages_.end()) return PlainStatus(404, "not found: " + request.resource);
  return it->second;
}

}  // namespace urlsieve::site
