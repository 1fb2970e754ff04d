#include "crawler/output/page_record.h"

#include <ctime>

namespace urlsieve {

nlohmann::json ToJson(const PageRecord& r) {
  auto or_null = [](const std::string& s) -> nlohmann::json {
    return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
  };
  nlohmann::json j = {
      {"url", r.url},
      {"final_url", r.final_url.empty() ? r.url : r.final_url},
      {"status", r.status},
      {"content_type", or_null(r.content_type)},
      {"bytes", r.bytes},
      {"depth", r.depth},
      {"parent", or_null(r.parent)},
      {"fetch_ms", r.fetch_ms},
      {"time", FormatUtc(r.time, /*with_millis=*/true)},
      {"links_found", r.links_found},
      {"links_new", r.links_new},
      {"error", r.error ? nlohmann::json(*r.error) : nlohmann::json(nullptr)},
  };
  if (r.noindex) j["noindex"] = true;
  if (r.canonical) j["canonical"] = *r.canonical;
  if (!r.encoding.empty()) j["encoding"] = r.encoding;
  if (!r.duplicate_of.empty()) j["duplicate_of"] = r.duplicate_of;
  if (!r.near_duplicate_of.empty()) {
    j["near_duplicate_of"] = r.near_duplicate_of;
    j["distance"] = r.distance;
  }
  if (!r.body.empty()) j["body"] = r.body;
  if (!r.dust_check.empty()) j["dust_check"] = r.dust_check;
  if (r.refetch) {
    j["refetch"] = *r.refetch;
    if (r.status == 304) j["not_modified"] = true;
  }
  return j;
}

std::string FormatUtc(std::chrono::system_clock::time_point t, bool with_millis) {
  using namespace std::chrono;
  auto ms = duration_cast<milliseconds>(t.time_since_epoch()).count();
  auto secs = ms / 1000;
  auto frac = ms % 1000;
  if (frac < 0) {
    frac += 1000;
    secs -= 1;
  }
  std::time_t tt = static_cast<std::time_t>(secs);
  std::tm tm;
  gmtime_r(&tt, &tm);
  char buf[40];
  size_t n = std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  if (with_millis) {
    std::snprintf(buf + n, sizeof(buf) - n, ".%03dZ", static_cast<int>(frac));
  } else {
    std::snprintf(buf + n, sizeof(buf) - n, "Z");
  }
  return buf;
}

}  // namespace urlsieve
