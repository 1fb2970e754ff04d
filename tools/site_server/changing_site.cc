#include "tools/site_server/changing_site.h"

#include <charconv>
#include <string_view>

#include "tools/site_server/http_date.h"

namespace urlsieve::site {
namespace {

// Last-Modified of version 0 of every page: 2026-01-01T00:00:00Z; version v is v days later.
constexpr int64_t kFirstModified = 1767225600;

std::string Link(const std::string& href, const std::string& text) {
  return "<li><a href=\"" + HtmlEscape(href) + "\">" + HtmlEscape(text) + "</a></li>\n";
}

// The page number of "/p/<n>" (exactly), or -1.
int PageNumber(std::string_view path) {
  if (!path.starts_with("/p/")) return -1;
  path.remove_prefix(3);
  int n = -1;
  auto [end, ec] = std::from_chars(path.data(), path.data() + path.size(), n);
  return ec == std::errc() && end == path.data() + path.size() ? n : -1;
}

}  // namespace

SiteResponse ChangingSite::Page(int page, int round, const std::string& site) const {
  const bool changes = round >= 1 && options_.changed.count(page) > 0;
  const int version = changes ? round : 0;
  std::string links = Link("/", "Home");
  if (page + 1 < options_.pages) links += Link(PagePath(page + 1), "Next");
  if (changes) links += Link(NewPagePath(page, round), "New in round " + std::to_string(round));
  SiteResponse r = HtmlPage(
      "Page " + std::to_string(page) + " version " + std::to_string(version) + " of site " + site,
      "<ul>\n" + links + "</ul>");
  // A revalidated page's validators change with the round, its body does not.
  const int stamp = round >= 1 && options_.revalidated.count(page) > 0 ? round : version;
  const Validators kind = ValidatorsOf(page);
  if (kind == Validators::kEtag || kind == Validators::kBoth) {
    r.headers.emplace_back("ETag",
                           "\"" + std::to_string(page) + "-" + std::to_string(stamp) + "\"");
  }
  if (kind == Validators::kLastModified || kind == Validators::kBoth) {
    r.headers.emplace_back("Last-Modified", FormatHttpDate(kFirstModified + stamp * 86400LL));
  }
  return r;
}

SiteResponse ChangingSite::Handle(const SiteRequest& request) {
  const std::string path = request.resource.substr(0, request.resource.find('?'));
  const int round = round_.load();
  const std::string site(1, static_cast<char>('a' + request.host % 26));
  if (path == "/robots.txt") {
    SiteResponse r;
    r.content_type = "text/plain; charset=utf-8";
    r.body = "User-agent: *\nDisallow:\n";
    return r;
  }
  if (path == "/") {
    std::string links;
    for (int i = 0; i < options_.pages; ++i)
      links += Link(PagePath(i), "Page " + std::to_string(i));
    SiteResponse r = HtmlPage("Changing site " + site, "<ul>\n" + links + "</ul>");
    r.headers.emplace_back("ETag", "\"index\"");
    return r;
  }
  const int page = PageNumber(path);
  if (page >= 0 && page < options_.pages) {
    if (round >= 1 && options_.gone.count(page) > 0) {
      SiteResponse r = HtmlPage("Gone", "<p>This page was removed.</p>");
      r.status = 404;
      return r;
    }
    return Page(page, round, site);
  }
  // /p/i/new-r exists from round r on, for a changed page i.
  for (int r = 1; r <= round; ++r) {
    for (int i : options_.changed) {
      if (path == NewPagePath(i, r)) {
        return HtmlPage("New page of page " + std::to_string(i) + " of round " + std::to_string(r) +
                            " of site " + site,
                        "<ul>\n" + Link("/", "Home") + "</ul>");
      }
    }
  }
  SiteResponse r = HtmlPage("Not found", "<p>No such page.</p>");
  r.status = 404;
  return r;
}

}  // namespace urlsieve::site
