#include "tools/site_server/dust_site.h"

#include <cstdint>
#include <string_view>

namespace urlsieve::site {
namespace {

constexpr std::string_view kWords[] = {
    "crawler", "archive",  "frontier",  "politeness", "server",  "request", "response", "header",
    "digest",  "record",   "index",     "document",   "anchor",  "parser",  "encoding", "charset",
    "robots",  "sitemap",  "canonical", "fragment",   "query",   "path",    "host",     "origin",
    "bloom",   "filter",   "hash",      "shingle",    "window",  "vector",  "weight",   "bit",
    "river",   "mountain", "forest",    "harbour",    "lantern", "meadow",  "cobalt",   "saffron",
    "quartz",  "granite",  "willow",    "ember",      "glacier", "tundra",  "lagoon",   "prairie"};

// A reproducible word stream (xorshift), different per article.
std::string Words(uint64_t seed, int count) {
  std::string text;
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int w = 0; w < count; ++w) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    if (w > 0) text += (w % 12 == 0) ? ". " : " ";
    text += kWords[x % std::size(kWords)];
  }
  return text + ".";
}

bool ParsePage(std::string_view path, std::string_view prefix, int* i) {
  if (!path.starts_with(prefix) || !path.ends_with(".html")) return false;
  std::string_view number = path.substr(prefix.size(), path.size() - prefix.size() - 5);
  if (number.empty() || number.size() > 6) return false;
  int value = 0;
  for (char c : number) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  *i = value;
  return true;
}

const char kNav[] =
    "<nav><a href=\"/\">Home</a> | <a href=\"/docs/page0.html\">Docs</a></nav>\n"
    "<link rel=\"stylesheet\" href=\"/style.css\">\n";

}  // namespace

std::string DustSite::ArticleText(int i, int words) {
  return Words(static_cast<uint64_t>(i) + 1, words);
}

SiteResponse DustSite::Docs(int i) const {
  std::string body = kNav;
  body += "<p>" + ArticleText(i, options_.words) + "</p>\n";
  // Relative: under an alias they resolve under the alias.
  if (i + 1 < options_.pages) {
    body += "<p><a href=\"page" + std::to_string(i + 1) + ".html\">Next</a></p>\n";
  }
  return HtmlPage("Page " + std::to_string(i), body);
}

SiteResponse DustSite::Handle(const SiteRequest& request) {
  const std::string& resource = request.resource;
  const size_t query_at = resource.find('?');
  const std::string path = resource.substr(0, query_at);
  const std::string query = query_at == std::string::npos ? "" : resource.substr(query_at + 1);
  if (path == "/robots.txt") return PlainStatus(404, "none");
  if (path == "/") {
    std::string body = kNav;
    body += "<ul>\n<li><a href=\"/docs/page0.html\">Docs</a></li>\n";
    if (options_.mirror) body += "<li><a href=\"/mirror/docs/page0.html\">Docs (mirror)</a></li>\n";
    for (int i = 0; i < options_.pages; ++i) {
      if (options_.sessions) {
        for (int sid = 1; sid <= 2; ++sid) {
          body += "<li><a href=\"/article/" + std::to_string(i) + "?sid=" + std::to_string(sid) +
                  "\">Article " + std::to_string(i) + "</a></li>\n";
        }
      }
      if (options_.logins) {
        body += "<li><a href=\"/login?return=/docs/page" + std::to_string(i) +
                ".html\">Log in to edit</a></li>\n";
      }
    }
    body += "<li><a href=\"/style.css\">style</a> <a href=\"/copy.css\">copy</a></li>\n</ul>";
    return HtmlPage("Index", body);
  }
  int i = 0;
  if (ParsePage(path, "/docs/page", &i) && i < options_.pages) return Docs(i);
  if (options_.mirror && ParsePage(path, "/mirror/docs/page", &i) && i < options_.pages) {
    return Docs(i);
  }
  if (options_.sessions && path.starts_with("/article/") && query.starts_with("sid=")) {
    int article = 0;
    if (ParsePage(path + ".html", "/article/", &article) && article < options_.pages) {
      std::string body = kNav;
      body += "<p>Session " + HtmlEscape(query.substr(4)) + "</p>\n";
      body += "<p>" + ArticleText(article + 1000, options_.words) + "</p>\n";
      return HtmlPage("Article " + std::to_string(article), body);
    }
  }
  if (options_.logins && path == "/login" && query.starts_with("return=")) {
    std::string body = kNav;
    body +=
        "<form method=\"post\" action=\"/login\"><input type=\"hidden\" name=\"return\" value=\"" +
        HtmlEscape(query.substr(7)) +
        "\"><label>User name <input name=\"user\"></label> <label>Password <input "
        "type=\"password\" name=\"password\"></label> <button>Log in</button></form>\n"
        "<p>You must log in to edit this page. Accounts are free; ask an administrator.</p>";
    return HtmlPage("Log in", body);
  }
  if (path == "/style.css" || path == "/copy.css") {
    SiteResponse css;
    css.content_type = "text/css";
    css.body = "body { font-family: serif; margin: 2em; }\nnav { color: #333; }\n";
    return css;
  }
  return PlainStatus(404, "not found");
}

}  // namespace urlsieve::site
