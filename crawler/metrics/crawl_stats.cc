#include "crawler/metrics/crawl_stats.h"

#include <cstdio>
#include <fstream>

namespace urlsieve {

void CrawlStatsSnapshot::AddRejections(
    const std::vector<std::pair<std::string_view, uint64_t>>& counts) {
  for (const auto& [reason, n] : counts) {
    if (n == 0) continue;
    auto it = rejections.find(reason);
    if (it == rejections.end()) it = rejections.emplace(std::string(reason), 0).first;
    it->second += n;
  }
}

std::map<std::string, uint64_t> CrawlStatsSnapshot::PagesByStatusClass() const {
  std::map<std::string, uint64_t> classes;
  for (const auto& [code, n] : status) classes[StatusClassName(code)] += n;
  return classes;
}

std::string StatusClassName(int status) {
  if (status == 0) return "none";
  if (status < 100 || status > 599) return "other";
  std::string name(1, static_cast<char>('0' + status / 100));
  name += "xx";
  return name;
}

nlohmann::json CrawlStatsSnapshot::ToJson() const {
  nlohmann::json status_json = nlohmann::json::object();
  for (const auto& [code, n] : status) status_json[std::to_string(code)] = n;
  nlohmann::json refetches_json = {{"not_modified", 0}, {"unchanged", 0}, {"changed", 0}};
  for (const auto& [result, n] : refetches) refetches_json[result] = n;
  nlohmann::json duplicates_json = {{"exact", 0}, {"near", 0}, {"unknown", 0}};
  for (const auto& [kind, n] : duplicates) duplicates_json[kind] = n;
  return {
      {"pages", pages},
      {"bytes", bytes},
      {"links_found", links_found},
      {"links_new", links_new},
      {"duration_s", duration_s},
      {"pages_per_s", pages_per_s()},
      {"bytes_per_s", duration_s > 0 ? bytes / duration_s : 0},
      {"status", std::move(status_json)},
      {"errors", errors},
      {"rejections", rejections},
      {"sessions", sessions},
      {"session", {{"pages", session_pages}, {"duration_s", session_duration_s}}},
      {"refetches", std::move(refetches_json)},
      {"encodings", encodings},
      {"sitemaps", sitemaps},
      {"duplicates", std::move(duplicates_json)},
  };
}

std::string CrawlStatsSnapshot::SummaryTable() const {
  std::string out;
  char line[160];
  auto row = [&](const std::string& name, const std::string& value) {
    std::snprintf(line, sizeof(line), "  %-28s %14s\n", name.c_str(), value.c_str());
    out += line;
  };
  auto num = [](double v, const char* fmt) {
    char b[48];
    std::snprintf(b, sizeof(b), fmt, v);
    return std::string(b);
  };
  out += "crawl summary\n";
  row("pages", std::to_string(pages));
  row("bytes", std::to_string(bytes));
  row("duration (s)", num(duration_s, "%.1f"));
  if (sessions > 1) row("sessions", std::to_string(sessions));
  row("pages/s", num(pages_per_s(), "%.1f"));
  row("links found / new", std::to_string(links_found) + " / " + std::to_string(links_new));
  for (const auto& [code, n] : status) row("status " + std::to_string(code), std::to_string(n));
  for (const auto& [kind, n] : errors) row("error " + kind, std::to_string(n));
  for (const auto& [reason, n] : rejections) row("rejected " + reason, std::to_string(n));
  for (const auto& [result, n] : refetches) row("re-fetched, " + result, std::to_string(n));
  for (const auto& [name, n] : encodings) row("encoding " + name, std::to_string(n));
  for (const auto& [counter, n] : sitemaps) row("sitemap " + counter, std::to_string(n));
  for (const auto& [kind, n] : duplicates) row("duplicates, " + kind, std::to_string(n));
  return out;
}

CrawlStats::CrawlStats(const Clock* clock) : clock_(clock), start_(clock->Now()) {
  earlier_.sessions = 0;
}

void CrawlStats::Resume(const CrawlStatsSnapshot& earlier) {
  std::lock_guard<std::mutex> lock(mu_);
  totals_ = earlier;
  earlier_ = earlier;
}

void CrawlStats::RecordPage(const PageRecord& r) {
  std::string kind;
  if (r.error) kind = r.error->substr(0, r.error->find(':'));
  std::lock_guard<std::mutex> lock(mu_);
  ++totals_.pages;
  totals_.bytes += r.bytes;
  totals_.links_found += static_cast<uint64_t>(r.links_found);
  totals_.links_new += static_cast<uint64_t>(r.links_new);
  ++totals_.status[r.status];
  if (r.error) ++totals_.errors[kind.empty() ? "error" : kind];
  if (r.refetch) ++totals_.refetches[*r.refetch];
  if (!r.encoding.empty()) ++totals_.encodings[r.encoding];
  if (!r.duplicate_of.empty()) ++totals_.duplicates["exact"];
  if (!r.near_duplicate_of.empty()) ++totals_.duplicates["near"];
  totals_.bytes_by_status_class[StatusClassName(r.status)] += r.bytes;
}

void CrawlStats::RecordSeen(uint64_t asked, uint64_t fresh) {
  std::lock_guard<std::mutex> lock(mu_);
  totals_.seen_inserts += asked;
  totals_.seen_new += fresh;
}

void CrawlStats::RecordContentUnknown() {
  std::lock_guard<std::mutex> lock(mu_);
  ++totals_.duplicates["unknown"];
}

void CrawlStats::RecordSitemap(std::string_view counter, uint64_t count) {
  std::lock_guard<std::mutex> lock(mu_);
  totals_.sitemaps[std::string(counter)] += count;
}

void CrawlStats::RecordError(std::string_view kind) {
  std::lock_guard<std::mutex> lock(mu_);
  ++totals_.errors[std::string(kind)];
}

void CrawlStats::RecordRejection(std::string_view reason, uint64_t count) {
  std::lock_guard<std::mutex> lock(mu_);
  totals_.AddRejections({{reason, count}});
}

CrawlStatsSnapshot CrawlStats::Snapshot() const {
  CrawlStatsSnapshot s;
  double earlier_duration_s = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    s = totals_;
    s.sessions = earlier_.sessions + 1;
    s.session_pages = totals_.pages - earlier_.pages;
    earlier_duration_s = earlier_.duration_s;
  }
  s.session_duration_s = std::chrono::duration<double>(clock_->Now() - start_).count();
  s.duration_s = earlier_duration_s + s.session_duration_s;
  return s;
}

Status WriteJsonFile(const std::string& path, const nlohmann::json& json) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Status::IoError("cannot create " + tmp);
    out << json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    out.flush();
    if (!out) return Status::IoError("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return Status::IoError("cannot rename " + tmp + " to " + path);
  }
  return Status::Ok();
}

}  // namespace urlsieve
