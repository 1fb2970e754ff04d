#include "tools/site_server/conditional.h"

#include <strings.h>

#include "base/strings.h"
#include "tools/site_server/http_date.h"

namespace urlsieve::site {
namespace {

// The opaque-tag of an entity-tag (`"x"` of `W/"x"` or `"x"`), or "" when it is not one.
std::string_view OpaqueTag(std::string_view tag) {
  tag = Trim(tag);
  if (tag.starts_with("W/")) tag.remove_prefix(2);
  if (tag.size() < 2 || tag.front() != '"' || tag.back() != '"') return {};
  return tag;
}

// Whether the If-None-Match list `condition` names `etag` (weak comparison) or is "*".
bool EtagListMatches(std::string_view condition, std::string_view etag) {
  if (Trim(condition) == "*") return true;
  const std::string_view current = OpaqueTag(etag);
  if (current.empty()) return false;
  while (true) {
    // An opaque-tag holds no '"' inside, so a comma between two quotes is a list separator.
    const size_t comma = condition.find(',');
    if (OpaqueTag(condition.substr(0, comma)) == current) return true;
    if (comma == std::string_view::npos) return false;
    condition.remove_prefix(comma + 1);
  }
}

}  // namespace

std::optional<std::string> HeaderOf(const SiteResponse& response, std::string_view name) {
  for (const auto& [key, value] : response.headers) {
    if (key.size() == name.size() && strncasecmp(key.data(), name.data(), name.size()) == 0) {
      return value;
    }
  }
  return std::nullopt;
}

bool NotModified(std::string_view method, const Preconditions& preconditions,
                 const SiteResponse& response) {
  if (method != "GET" && method != "HEAD") return false;
  if (response.status < 200 || response.status > 299) return false;
  if (preconditions.if_none_match.has_value()) {
    const std::optional<std::string> etag = HeaderOf(response, "ETag");
    return EtagListMatches(*preconditions.if_none_match, etag.value_or(""));
  }
  if (preconditions.if_modified_since.has_value()) {
    const std::optional<int64_t> since = ParseHttpDate(Trim(*preconditions.if_modified_since));
    const std::optional<std::string> last_modified = HeaderOf(response, "Last-Modified");
    if (!since.has_value() || !last_modified.has_value()) return false;
    const std::optional<int64_t> modified = ParseHttpDate(*last_modified);
    return modified.has_value() && *modified <= *since;
  }
  return false;
}

SiteResponse NotModifiedResponse(const SiteResponse& full) {
  SiteResponse r;
  r.status = 304;
  r.content_type.clear();
  // §8.6: a 304's Content-Length, if any, is the one the 200 would have had (the HTTP library
  // would otherwise announce 0).
  r.headers.emplace_back("Content-Length", std::to_string(full.body.size()));
  const std::optional<std::string> etag = HeaderOf(full, "ETag");
  if (etag.has_value()) {
    r.headers.emplace_back("ETag", *etag);
  } else if (auto last_modified = HeaderOf(full, "Last-Modified"); last_modified.has_value()) {
    r.headers.emplace_back("Last-Modified", *last_modified);
  }
  return r;
}

}  // namespace urlsieve::site
