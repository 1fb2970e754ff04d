#include "tools/site_server/dust_site.h"

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

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

// A non-negative decimal number of at most 6 digits, without leading zeros (so that each number
// has one spelling: the application's pages are the ones its links spell).
bool ParseNumber(std::string_view text, int* out) {
  if (text.empty() || text.size() > 6 || (text.size() > 1 && text[0] == '0')) return false;
  int value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  *out = value;
  return true;
}

// "name=value&..." as (name, value) pairs in request order, values raw (still percent-encoded).
std::vector<std::pair<std::string, std::string>> ParseQuery(const std::string& query) {
  std::vector<std::pair<std::string, std::string>> params;
  size_t at = 0;
  while (at <= query.size() && !query.empty()) {
    size_t end = query.find('&', at);
    if (end == std::string::npos) end = query.size();
    const std::string pair = query.substr(at, end - at);
    const size_t eq = pair.find('=');
    if (!pair.empty()) {
      params.emplace_back(pair.substr(0, eq), eq == std::string::npos ? "" : pair.substr(eq + 1));
    }
    at = end + 1;
  }
  return params;
}

std::string Param(const std::vector<std::pair<std::string, std::string>>& params,
                  std::string_view name) {
  for (const auto& [key, value] : params) {
    if (key == name) return value;
  }
  return "";
}

uint64_t Mix(uint64_t x) {  // splitmix64's finalizer: a reproducible hash of small integers
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The first `count` words of a text.
std::string FirstWords(const std::string& text, int count) {
  size_t at = 0;
  for (int w = 0; w < count && at != std::string::npos; ++w) {
    at = text.find(' ', at == 0 ? 0 : at + 1);
  }
  return at == std::string::npos ? text : text.substr(0, at);
}

// The text cut at word boundaries into `parts` pieces of about the same length.
std::vector<std::string> SplitWords(const std::string& text, int parts) {
  std::vector<std::string> out;
  size_t start = 0;
  for (int p = 1; p < parts; ++p) {
    size_t cut = text.find(' ', text.size() * p / parts);
    if (cut == std::string::npos) break;
    out.push_back(text.substr(start, cut - start));
    start = cut + 1;
  }
  out.push_back(text.substr(start));
  return out;
}

std::string A(const std::string& href, const std::string& text) {
  return "<a href=\"" + HtmlEscape(href) + "\">" + HtmlEscape(text) + "</a>";
}

// The application's layout (dust_site.h, "The application").
constexpr int kSectionSize = 20;  // articles per section
constexpr int kHighlights = 4;    // of them listed on the section's page
constexpr int kRelated = 3;       // related articles linked from an article's text
constexpr int kEventMonths = 24;  // 2023-01 .. 2024-12, one event article in 24 each
constexpr int kEventsPerMonth = 3;
constexpr int kFirstEventMonth = 2023 * 12;  // months count from year 0, January: year * 12 + m
constexpr int kFeatured = 5;
constexpr int kSessionEvery = 10;  // every tenth article's "next" link mints a session
constexpr int kCampaigns = 12;     // utm_campaign values of the related links
constexpr const char* kMonthNames[] = {"January",   "February", "March",    "April",
                                       "May",       "June",     "July",     "August",
                                       "September", "October",  "November", "December"};

std::string ArticlePath(int i) { return "/wiki/Article_" + std::to_string(i); }
std::string SectionPath(int k) { return "/docs/sec" + std::to_string(k) + "/"; }

std::string MonthText(int month) {  // "2023-05"
  std::string mm = std::to_string(month % 12 + 1);
  return std::to_string(month / 12) + "-" + (mm.size() == 1 ? "0" + mm : mm);
}

// "2023-05" -> its month number (year * 12 + month - 1), years 1000 to 9999.
bool ParseMonth(const std::string& text, int* month) {
  int year = 0;
  if (text.size() != 7 || text[4] != '-' || text[5] < '0' || text[5] > '1' || text[6] < '0' ||
      text[6] > '9') {
    return false;
  }
  const int mm = (text[5] - '0') * 10 + (text[6] - '0');
  if (!ParseNumber(std::string_view(text).substr(0, 4), &year) || year < 1000 || mm < 1 ||
      mm > 12) {
    return false;
  }
  *month = year * 12 + mm - 1;
  return true;
}

// A session id as a request may carry one: 1-32 ASCII letters and digits, else none.
std::string ValidSid(const std::string& sid) {
  if (sid.size() > 32) return "";
  for (char c : sid) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) return "";
  }
  return sid;
}

const char kNoRobots[] = "<meta name=\"robots\" content=\"noindex,nofollow\">\n";

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

DustSiteOptions DustSiteOptions::App(int articles) {
  DustSiteOptions options;
  options.pages = articles;
  options.mirror = options.sessions = options.logins = false;
  options.app = options.session_ids = options.tracking = options.sort_view = true;
  options.param_order = options.aliases = options.printable = options.calendar = true;
  options.forms = options.ground_truth = true;
  return options;
}

SiteResponse DustSite::Handle(const SiteRequest& request) {
  const std::string& resource = request.resource;
  const size_t query_at = resource.find('?');
  const std::string path = resource.substr(0, query_at);
  const std::string query = query_at == std::string::npos ? "" : resource.substr(query_at + 1);
  if (options_.ground_truth && path == "/__dust/truth") {
    SiteResponse truth;
    truth.content_type = "application/json";
    truth.body = TruthJson();
    truth.headers.emplace_back("X-Dust-Page", "none");
    return truth;
  }
  Page page = options_.app ? AppRoute(path, query) : Route(path, query);
  if (options_.ground_truth) page.response.headers.emplace_back("X-Dust-Page", page.id);
  return std::move(page.response);
}

DustSite::Page DustSite::Route(const std::string& path, const std::string& query) const {
  if (path == "/robots.txt") return {PlainStatus(404, "none"), "none"};
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
    return {HtmlPage("Index", body), "index"};
  }
  int i = 0;
  if (ParsePage(path, "/docs/page", &i) && i < options_.pages) {
    return {Docs(i), "docs/" + std::to_string(i)};
  }
  if (options_.mirror && ParsePage(path, "/mirror/docs/page", &i) && i < options_.pages) {
    return {Docs(i), "docs/" + std::to_string(i)};
  }
  if (options_.sessions && path.starts_with("/article/") && query.starts_with("sid=")) {
    int article = 0;
    if (ParsePage(path + ".html", "/article/", &article) && article < options_.pages) {
      std::string body = kNav;
      body += "<p>Session " + HtmlEscape(query.substr(4)) + "</p>\n";
      body += "<p>" + ArticleText(article + 1000, options_.words) + "</p>\n";
      return {HtmlPage("Article " + std::to_string(article), body),
              "session-article/" + std::to_string(article)};
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
    return {HtmlPage("Log in", body), "login"};
  }
  if (path == "/style.css" || path == "/copy.css") {
    SiteResponse css;
    css.content_type = "text/css";
    css.body = "body { font-family: serif; margin: 2em; }\nnav { color: #333; }\n";
    return {css, "stylesheet"};
  }
  return {PlainStatus(404, "not found"), "none"};
}

int DustSite::DistinctPages() const {
  const int n = options_.pages;
  if (!options_.app) {
    return 1 + n + (options_.sessions ? n : 0) + (options_.logins ? 1 : 0) + 1;
  }
  const int sections = (n + kSectionSize - 1) / kSectionSize;
  const int months = options_.calendar ? std::min(n, kEventMonths) + 1 : 0;
  return 1 + n + sections + months + (options_.forms ? 2 : 0);
}

std::string DustSite::TruthJson() const {
  const int n = options_.pages;
  std::vector<std::pair<std::string, int>> kinds;
  if (!options_.app) {
    kinds = {{"index", 1}, {"docs", n}};
    if (options_.sessions) kinds.emplace_back("session-article", n);
    if (options_.logins) kinds.emplace_back("login", 1);
    kinds.emplace_back("stylesheet", 1);
  } else {
    kinds = {{"main", 1}, {"article", n}, {"section", (n + kSectionSize - 1) / kSectionSize}};
    if (options_.calendar) kinds.emplace_back("calendar", std::min(n, kEventMonths) + 1);
    if (options_.forms) kinds.emplace_back("form", 2);
  }
  std::string json = "{\"distinct_pages\": " + std::to_string(DistinctPages()) + ", \"by_kind\": {";
  for (size_t k = 0; k < kinds.size(); ++k) {
    json += (k ? ", \"" : "\"") + kinds[k].first + "\": " + std::to_string(kinds[k].second);
  }
  return json + "}}\n";
}

// The application (dust_site.h, "The application").

std::string DustSite::Link(std::string target, const std::string& sid) const {
  if (sid.empty()) return target;
  target += target.find('?') == std::string::npos ? "?sid=" : "&sid=";
  return target + sid;
}

// The navigation of an article's page (article >= 0) or of another page (-1).
std::string DustSite::Nav(int article, const std::string& sid) const {
  std::string nav = "<nav>" + A(Link("/", sid), "Main page");
  if (article >= 0) {
    const int k = article / kSectionSize;
    std::string section = SectionPath(k);
    if (options_.aliases && article % 2 == 1) section += "index.html";
    nav += " | " + A(Link(section, sid), "Section " + std::to_string(k));
  }
  if (options_.calendar) {
    const int month = article >= 0 ? kFirstEventMonth + article % kEventMonths : 2024 * 12 + 5;
    nav += " | " + A(Link("/calendar?month=" + MonthText(month), sid), "Calendar");
  }
  if (options_.forms) {
    const std::string page = article >= 0 ? "Article_" + std::to_string(article) : "Main_Page";
    nav += " | " + A(Link("/index.php?title=Special:UserLogin&returnto=" + page, sid), "Log in");
  }
  return nav + "</nav>\n";
}

// Article i's text, with its related articles linked inline (between its parts).
std::string DustSite::ArticleBody(int i, const std::string& sid) const {
  const int n = options_.pages;
  std::vector<std::string> parts = SplitWords(ArticleText(i, options_.words), kRelated + 1);
  std::string body = "<p>" + HtmlEscape(parts[0]);
  for (int r = 0; r < kRelated && n > 1 && r + 1 < static_cast<int>(parts.size()); ++r) {
    int related = static_cast<int>(Mix(static_cast<uint64_t>(i) * 8 + r) % n);
    if (related == i) related = (related + 1) % n;
    std::string target = ArticlePath(related);
    if (r == 1 && options_.aliases) target = "/index.php?title=Article_" + std::to_string(related);
    if (r == 2 && options_.tracking) {
      target += "?utm_source=newsletter&utm_medium=email&utm_campaign=issue" +
                std::to_string(i % kCampaigns + 1);
    }
    // Appended piece by piece: GCC 12 -O3 reports a false -Wrestrict on " " + std::string.
    body.append(" ").append(A(Link(target, sid), "Article " + std::to_string(related)));
    body.append(" ").append(HtmlEscape(parts[r + 1]));
  }
  return body + "</p>\n";
}

SiteResponse DustSite::MainPage(const std::string& sid) const {
  const int n = options_.pages;
  std::string body = Nav(-1, sid);
  body += "<p>" + HtmlEscape(ArticleText(-1, 60)) + "</p>\n<h2>Featured</h2>\n<ul>\n";
  for (int f = 0; f < kFeatured && f < n; ++f) {
    const int i = static_cast<int>(Mix(1000 + f) % n);
    std::string target = ArticlePath(i);
    if (options_.tracking) target += "?utm_source=homepage&utm_medium=featured";
    body += "<li>" + A(Link(target, sid), "Article " + std::to_string(i)) + "</li>\n";
  }
  body += "</ul>\n<h2>Sections</h2>\n<ul>\n";
  for (int k = 0; k * kSectionSize < n; ++k) {
    body += "<li>" + A(Link(SectionPath(k), sid), "Section " + std::to_string(k)) + "</li>\n";
  }
  return HtmlPage("Main page", body + "</ul>");
}

SiteResponse DustSite::Article(int i, const std::string& sid) const {
  std::string body = Nav(i, sid) + ArticleBody(i, sid);
  if (i + 1 < options_.pages) {
    std::string next_sid = sid;
    if (sid.empty() && options_.session_ids && i % kSessionEvery == kSessionEvery - 3) {
      static constexpr char kHex[] = "0123456789abcdef";
      const uint64_t h = Mix(0x5E55'0000ull + i);
      for (int d = 0; d < 8; ++d) next_sid += kHex[(h >> (4 * d)) & 15];
    }
    body +=
        "<p>Next: " + A(Link(ArticlePath(i + 1), next_sid), "Article " + std::to_string(i + 1)) +
        "</p>\n";
  }
  std::string tools;
  if (options_.printable) {
    tools += A(Link("/print" + ArticlePath(i), sid), "Printable version");
  }
  if (options_.forms) {
    const std::string title = "title=Article_" + std::to_string(i);
    const std::string edit = options_.param_order && i % 2 == 1
                                 ? "/index.php?action=edit&" + title
                                 : "/index.php?" + title + "&action=edit";
    tools += (tools.empty() ? "" : " | ") + A(Link(edit, sid), "Edit");
  }
  if (!tools.empty()) body += "<p class=\"tools\">" + tools + "</p>\n";
  return HtmlPage("Article " + std::to_string(i), body);
}

SiteResponse DustSite::Printable(int i, const std::string& sid) const {
  return HtmlPage("Article " + std::to_string(i), ArticleBody(i, sid) + "<p>Retrieved from " +
                                                      A(Link(ArticlePath(i), sid), ArticlePath(i)) +
                                                      "</p>\n");
}

// Section k's highlights in `sort` order ("desc" or ascending) and `view` class ("compact" or
// full); its sort and view links keep the page's parameters (`query`, as the request spelled it).
SiteResponse DustSite::Section(int k, const std::string& sort, const std::string& view,
                               const std::string& query, const std::string& sid) const {
  std::string body = Nav(-1, sid);
  if (options_.sort_view) {
    // The link that sets name=value: with param_order, appended after the page's other
    // parameters in their order; otherwise spelled sort first, then view.
    auto control = [&](const std::string& name, const std::string& value) {
      std::string target;
      if (options_.param_order) {
        for (const auto& [key, v] : ParseQuery(query)) {
          if ((key == "sort" || key == "view") && key != name) target += key + "=" + v + "&";
        }
        target += name + "=" + value;
      } else {
        const std::string s = name == "sort" ? value : Param(ParseQuery(query), "sort");
        const std::string v = name == "view" ? value : Param(ParseQuery(query), "view");
        target = s.empty() ? "" : "sort=" + s;
        if (!v.empty()) target += (target.empty() ? "view=" : "&view=") + v;
      }
      return A(Link(SectionPath(k) + "?" + target, sid), value);
    };
    body += "<p>Sort: " + control("sort", "asc") + " " + control("sort", "desc") +
            " | View: " + control("view", "full") + " " + control("view", "compact") + "</p>\n";
  }
  std::vector<int> items;
  for (int i = k * kSectionSize; i < k * kSectionSize + kHighlights && i < options_.pages; ++i) {
    items.push_back(i);
  }
  if (sort == "desc") std::reverse(items.begin(), items.end());
  body += "<ul class=\"" + std::string(view == "compact" ? "compact" : "full") + "\">\n";
  for (int i : items) {
    body += "<li>" + A(Link(ArticlePath(i), sid), "Article " + std::to_string(i)) + ": " +
            HtmlEscape(FirstWords(ArticleText(i, options_.words), 10)) + "</li>\n";
  }
  body += "</ul>\n";
  if ((k + 1) * kSectionSize < options_.pages) {
    body += "<p>" + A(Link(SectionPath(k + 1), sid), "Next section") + "</p>\n";
  }
  return HtmlPage("Section " + std::to_string(k), body);
}

DustSite::Page DustSite::Calendar(int month, const std::string& sid) const {
  const std::string name = std::string(kMonthNames[month % 12]) + " " + std::to_string(month / 12);
  std::string body = Nav(-1, sid);
  std::string id = "calendar/empty";
  const int event = month - kFirstEventMonth;
  if (event >= 0 && event < kEventMonths && event < options_.pages) {
    id = "calendar/" + MonthText(month);
    body += "<ul>\n";
    for (int e = 0; e < kEventsPerMonth; ++e) {
      const int i = event + e * kEventMonths;
      if (i >= options_.pages) break;
      body += "<li>" + A(Link(ArticlePath(i), sid), "Article " + std::to_string(i)) + ": " +
              HtmlEscape(FirstWords(ArticleText(i, options_.words), 8)) + "</li>\n";
    }
    body += "</ul>\n";
  } else {
    body += "<p>No events in " + name + ".</p>\n";
  }
  body += "<p>";
  if (month > 1000 * 12)
    body += A(Link("/calendar?month=" + MonthText(month - 1), sid), "Previous");
  if (month < 9999 * 12 + 11) {
    body += " " + A(Link("/calendar?month=" + MonthText(month + 1), sid), "Next");
  }
  body += "</p>\n";
  return {HtmlPage("Calendar: " + name, body), id};
}

SiteResponse DustSite::LoginForm(const std::string& returnto, const std::string& sid) const {
  std::string body = Nav(-1, sid);
  body +=
      "<form method=\"post\" action=\"/index.php?title=Special:UserLogin\"><input type=\"hidden\" "
      "name=\"returnto\" value=\"" +
      HtmlEscape(returnto) +
      "\"><label>User name <input name=\"user\"></label> <label>Password <input "
      "type=\"password\" name=\"password\"></label> <button>Log in</button></form>\n"
      "<p>Accounts are free; ask an administrator.</p>\n";
  SiteResponse page = HtmlPage("Log in", body, kNoRobots);
  return page;
}

SiteResponse DustSite::EditForm(int i, const std::string& sid) const {
  std::string body = Nav(-1, sid);
  body += "<p>You must log in to edit Article " + std::to_string(i) +
          ". Accounts are free; ask an administrator.</p>\n<form method=\"post\" "
          "action=\"/index.php?title=Article_" +
          std::to_string(i) +
          "&amp;action=submit\"><textarea name=\"text\" readonly></textarea> <button>Save "
          "page</button></form>\n";
  return HtmlPage("Editing Article " + std::to_string(i), body, kNoRobots);
}

DustSite::Page DustSite::AppRoute(const std::string& path, const std::string& query) const {
  const auto params = ParseQuery(query);
  const std::string sid = ValidSid(Param(params, "sid"));
  const int n = options_.pages;
  int i = 0;
  auto article = [&](std::string_view name, int* out) {
    return name.starts_with("Article_") && ParseNumber(name.substr(8), out) && *out < n;
  };
  if (path == "/") return {MainPage(sid), "main"};
  if (path.starts_with("/wiki/") && article(std::string_view(path).substr(6), &i)) {
    return {Article(i, sid), "article/" + std::to_string(i)};
  }
  if (path.starts_with("/print/wiki/") && article(std::string_view(path).substr(12), &i)) {
    return {Printable(i, sid), "article/" + std::to_string(i)};
  }
  if (path == "/index.php") {
    const std::string title = Param(params, "title");
    const std::string action = Param(params, "action");
    if (title == "Special:UserLogin") {
      return {LoginForm(Param(params, "returnto"), sid), "form/login"};
    }
    if (article(title, &i) && action == "edit") return {EditForm(i, sid), "form/edit"};
    if (article(title, &i) && (action.empty() || action == "view")) {
      return {Article(i, sid), "article/" + std::to_string(i)};
    }
  }
  if (path.starts_with("/docs/sec")) {
    std::string_view rest = std::string_view(path).substr(9);
    const size_t slash = rest.find('/');
    int k = 0;
    if (slash != std::string_view::npos && ParseNumber(rest.substr(0, slash), &k) &&
        k * kSectionSize < n &&
        (rest.substr(slash) == "/" || rest.substr(slash) == "/index.html")) {
      return {Section(k, Param(params, "sort"), Param(params, "view"), query, sid),
              "section/" + std::to_string(k)};
    }
  }
  int month = 0;
  if (path == "/calendar" && ParseMonth(Param(params, "month"), &month)) {
    return Calendar(month, sid);
  }
  return Route(path, query);  // the content-seen test's pages, served but not linked
}

}  // namespace urlsieve::site
