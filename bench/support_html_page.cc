#include "bench/support_html_page.h"

#include <random>

namespace urlsieve::bench {

std::string GenerateHtmlPage(uint64_t seed, size_t bytes, int links) {
  std::mt19937_64 rng(seed);
  auto word = [&rng] {
    static const char* kWords[] = {"lorem", "ipsum", "dolor", "sit",    "amet",    "crawler",
                                   "index", "page",  "news",  "about",  "archive", "product",
                                   "the",   "of",    "and",   "search", "content", "article"};
    return std::string(kWords[rng() % (sizeof(kWords) / sizeof(kWords[0]))]);
  };
  // '/' + s, not "/" + s: GCC 12 at -O3 warns -Wrestrict wrongly on a 1-char literal + string&&.
  auto href = [&](int i) {
    switch (i % 8) {
      case 0:
        return '/' + word() + "/" + word() + "-" + std::to_string(rng() % 10000) + ".html";
      case 1:
        return word() + "/" + std::to_string(i) + "?page=" + std::to_string(rng() % 50);
      case 2:
        return "https://www." + word() + ".example.org/" + word() + "/";
      case 3:
        return "../" + word() + ".html#section-" + std::to_string(i);
      case 4:
        return "/tag/" + word() + "?sort=new&amp;ref=" + word();
      case 5:
        return "//cdn.example.net/" + word() + "/" + std::to_string(i);
      case 6:
        return '/' + word() + "/" + word() + "/" + word() + "/";
      default:
        return "article-" + std::to_string(rng() % 100000);
    }
  };
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<title>Generated page</title><meta name=\"viewport\" content=\"width=device-width\">"
      "<meta name=\"description\" content=\"A generated page for benchmarks\">"
      "<link rel=\"stylesheet\" href=\"/static/site.css\">"
      "<link rel=\"canonical\" href=\"/canonical/page\">"
      "<link rel=\"alternate\" hreflang=\"fr\" href=\"/fr/page\">"
      "<script>window.dataLayer = window.dataLayer || []; function "
      "gtag(){dataLayer.push(arguments);}"
      " if (a < b && c > d) { gtag('js', new Date()); }</script>"
      "<style>body{font-family:sans-serif} .nav li{display:inline-block;margin:0 4px}</style>"
      "</head>\n<body><header><nav class=\"nav\"><ul>";
  int emitted = 0;
  const int nav = links / 5;
  for (; emitted < nav; ++emitted) {
    html += "<li class=\"nav-item\"><a href=\"" + href(emitted) + "\">" + word() + "</a></li>";
  }
  html += "</ul></nav></header>\n<main><article>";
  const size_t footer_reserve = 2000;
  const int body_links = links - nav - 10;
  // Paragraph text fills the page; links are spread evenly through it.
  size_t text_budget =
      bytes > html.size() + footer_reserve ? bytes - html.size() - footer_reserve : 0;
  size_t per_link = body_links > 0 ? text_budget / static_cast<size_t>(body_links) : text_budget;
  for (int i = 0; i < body_links; ++i) {
    if (i % 6 == 0) html += i == 0 ? "<p>" : "</p>\n<p class=\"para\">";
    size_t target = html.size() + per_link;
    while (html.size() + 60 < target) {
      html += word();
      html += rng() % 9 == 0 ? ". " : " ";
      if (rng() % 40 == 0) html += "<em>" + word() + "</em> ";
    }
    const char* rel = i % 17 == 0 ? " rel=\"nofollow\"" : "";
    html += "<a href=\"" + href(i) + "\"" + rel + " title=\"" + word() + "\">" + word() + " " +
            word() + "</a> ";
  }
  html += "</p><table class=\"data\"><tr><th>a</th><th>b</th></tr>";
  for (int r = 0; r < 5; ++r) {
    html += "<tr><td>" + word() + "</td><td><a href=\"/row/" + std::to_string(r) + "\">" + word() +
            "</a></td></tr>";
  }
  html += "</table></article></main>\n<footer><ul>";
  for (int i = 0; i < 4; ++i)
    html += "<li><a href=\"/footer/" + word() + "\">" + word() + "</a></li>";
  html +=
      "<li><a href=\"mailto:info@example.com\">mail</a></li></ul>"
      "<p>&copy; 2026 Example &amp; Co.</p></footer></body></html>\n";
  return html;
}

}  // namespace urlsieve::bench
