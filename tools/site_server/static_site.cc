#include "tools/site_server/static_site.h"

#include <sys/stat.h>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string_view>

#include "tools/site_server/http_date.h"

namespace urlsieve::site {
namespace {

// A strong ETag of the content (FNV-1a 64 and the size), stable across server restarts.
std::string ContentEtag(const std::string& body) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : body) hash = (hash ^ c) * 1099511628211ull;
  char out[48];
  std::snprintf(out, sizeof(out), "\"%016llx-%zx\"", static_cast<unsigned long long>(hash),
                body.size());
  return out;
}

std::string ContentTypeFor(const std::filesystem::path& file) {
  static const std::map<std::string, std::string> kTypes = {
      {".html", "text/html; charset=utf-8"},
      {".htm", "text/html; charset=utf-8"},
      {".css", "text/css"},
      {".js", "text/javascript"},
      {".txt", "text/plain; charset=utf-8"},
      {".xml", "application/xml"},
      {".json", "application/json"},
      {".png", "image/png"},
      {".jpg", "image/jpeg"},
      {".svg", "image/svg+xml"},
      {".pdf", "application/pdf"},
  };
  auto it = kTypes.find(file.extension().string());
  return it == kTypes.end() ? "application/octet-stream" : it->second;
}

bool ReadFile(const std::filesystem::path& file, std::string* out) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return false;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  *out = std::move(buffer).str();
  return true;
}

}  // namespace

Result<std::unique_ptr<StaticSite>> StaticSite::Open(const std::filesystem::path& root) {
  std::error_code ec;
  if (!std::filesystem::is_directory(root, ec)) {
    return Status::InvalidArgument(root.string() + ": not a directory");
  }
  std::unique_ptr<StaticSite> site(new StaticSite(std::filesystem::canonical(root, ec)));
  std::ifstream in(root / "_redirects");
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    line = line.substr(0, line.find('#'));
    std::istringstream fields(line);
    std::string from, to, code = "301";
    if (!(fields >> from)) continue;  // blank or comment
    fields >> to >> code;
    int status = 0;
    std::from_chars(code.data(), code.data() + code.size(), status);
    if (to.empty() || status < 300 || status > 399 || from.front() != '/') {
      return Status::InvalidArgument("_redirects:" + std::to_string(number) +
                                     ": expected `/from to [3xx]`");
    }
    site->redirects_[from] = {status, to};
  }
  return site;
}

SiteResponse StaticSite::Handle(const SiteRequest& request) {
  const std::string path = request.resource.substr(0, request.resource.find('?'));
  if (auto it = redirects_.find(path); it != redirects_.end()) {
    return Redirect(it->second.first, it->second.second);
  }
  std::filesystem::path file = root_;
  bool escapes = path.empty() || path.front() != '/';
  for (const auto& part : std::filesystem::path(path).relative_path()) {
    escapes = escapes || part == "..";
    file /= part;
  }
  if (!path.empty() && path.back() == '/') file /= "index.html";
  SiteResponse r;
  std::error_code ec;
  if (!escapes && std::filesystem::is_regular_file(file, ec) && ReadFile(file, &r.body)) {
    r.content_type = ContentTypeFor(file);
    // Validators as web servers send them (so conditional GETs get 304: conditional.h).
    r.headers.emplace_back("ETag", ContentEtag(r.body));
    struct stat info {};
    if (::stat(file.c_str(), &info) == 0) {
      r.headers.emplace_back("Last-Modified", FormatHttpDate(info.st_mtime));
    }
    return r;
  }
  if (!escapes && std::filesystem::is_directory(file, ec)) return Redirect(301, path + "/");
  if (!ReadFile(root_ / "404.html", &r.body)) r = HtmlPage("Not found", "<p>No such page.</p>");
  r.status = 404;
  r.content_type = "text/html; charset=utf-8";
  return r;
}

}  // namespace urlsieve::site
