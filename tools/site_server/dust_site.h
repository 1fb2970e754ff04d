// DustSite: a small web application's duplicates, for the content-seen tests and benchmark
// (docs/features/content-seen.md, "In the crawl"): "different URLs with similar text" (DUST,
// Bar-Yossef, Keidar and Schonfeld, WWW 2007) of the kinds found crawling real applications.
//   /                         the index: links to each kind below
//   /docs/page{i}.html        `pages` articles of ~300 words, each linking the next relatively
//   /mirror/docs/...          the same bytes under another directory (an alias): its relative
//                             links resolve under /mirror/ too, so following them grows a copy of
//                             the whole tree — exact duplicates
//   /article/{i}?sid={s}      article i with a session token in its text (sid 1 and 2 linked from
//                             the index): near duplicates at a small distance
//   /login?return=/docs/page{i}.html   one login form per article, differing only in a hidden
//                             input: near duplicates at distance 0 (same visible text)
//   /style.css, /copy.css     one stylesheet under two names: an exact duplicate that is not HTML
// Everything else is a 404. Deterministic: the same request always gets the same bytes.
// Thread-safety: Handle is const over immutable options; call from any thread.
#ifndef URLSIEVE_TOOLS_SITE_SERVER_DUST_SITE_H_
#define URLSIEVE_TOOLS_SITE_SERVER_DUST_SITE_H_

#include <string>

#include "tools/site_server/site.h"

namespace urlsieve::site {

struct DustSiteOptions {
  int pages = 8;         // /docs/page0.html .. page{pages-1}.html
  int words = 300;       // per article
  bool mirror = true;    // serve /mirror/docs/ and link it from the index
  bool sessions = true;  // /article/{i}?sid=1 and 2
  bool logins = true;    // /login?return=...
};

class DustSite : public Site {
 public:
  explicit DustSite(DustSiteOptions options) : options_(options) {}
  SiteResponse Handle(const SiteRequest& request) override;

  // The article text of page i (its words, deterministic).
  static std::string ArticleText(int i, int words);

 private:
  SiteResponse Docs(int i) const;
  const DustSiteOptions options_;
};

}  // namespace urlsieve::site

#endif  // URLSIEVE_TOOLS_SITE_SERVER_DUST_SITE_H_
