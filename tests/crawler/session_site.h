// SessionSite: the learned-URL-rule tests' site (docs/features/dust.md): articles /a{i} in a
// chain; each links the next article, the next under a session id (the same bytes, until
// `sid_selects_from`: from that article on, a session id shows another page), and a login form
// for itself (noindex, nofollow; the same visible text for every article).
// Thread-safety: Handle may run on the server's threads while the test calls set_articles.
#ifndef URLSIEVE_TESTS_CRAWLER_SESSION_SITE_H_
#define URLSIEVE_TESTS_CRAWLER_SESSION_SITE_H_

#include <atomic>
#include <cstdlib>
#include <string>

#include "tools/site_server/dust_site.h"
#include "tools/site_server/site.h"

namespace urlsieve::testing {

class SessionSite : public site::Site {
 public:
  SessionSite(int articles, int sid_selects_from)
      : articles_(articles), sid_selects_from_(sid_selects_from) {}
  // The site grows: the last article gets a next one.
  void set_articles(int articles) { articles_ = articles; }

  site::SiteResponse Handle(const site::SiteRequest& request) override {
    const std::string& r = request.resource;
    const size_t q = r.find('?');
    const std::string path = r.substr(0, q);
    const std::string query = q == std::string::npos ? "" : r.substr(q + 1);
    if (path == "/login") {
      return site::HtmlPage(
          "Log in",
          "<form method=post action=/login><input type=hidden name=return value=\"" +
              site::HtmlEscape(query) +
              "\"><p>Log in to comment</p><input name=user><input type=password name=pw></form>",
          "<meta name=robots content=\"noindex,nofollow\">");
    }
    if (path.size() < 3 || path[1] != 'a') return site::PlainStatus(404, "not found");
    const int i = std::atoi(path.c_str() + 2);
    if (i < 0 || i >= articles_ || path != "/a" + std::to_string(i)) {
      return site::PlainStatus(404, "not found");
    }
    if (!query.empty() && i >= sid_selects_from_) {
      return site::HtmlPage("Session " + query,
                            "<p>" + site::DustSite::ArticleText(1000 + i, 120) + "</p>");
    }
    const std::string next = "/a" + std::to_string(i + 1);
    std::string links;
    if (i + 1 < articles_) {
      links = "<a href=\"" + next + "\">next</a> <a href=\"" + next + "?sid=s" + std::to_string(i) +
              "x\">next (session)</a> ";
    }
    links += "<a href=\"/login?return=/a" + std::to_string(i) + "\">log in</a>";
    return site::HtmlPage("Article " + std::to_string(i),
                          "<p>" + site::DustSite::ArticleText(i, 120) + "</p>" + links);
  }

 private:
  std::atomic<int> articles_;
  const int sid_selects_from_;
};

}  // namespace urlsieve::testing

#endif  // URLSIEVE_TESTS_CRAWLER_SESSION_SITE_H_
