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
//
// The application (DustSiteOptions::app, off by default; urlsieve-demo-site --dust N
// --dust-kinds all): a wiki of `pages` articles whose links spell the same pages many ways, the
// DUST a learner of URL rules must find (bench/dust.sh). / becomes its main page; the kinds above
// are still served but no longer linked (--dust-kinds turns them off). Its distinct pages (1 +
// pages + pages/20 sections + 25 calendar months + 2 forms: 1288 for 1200 articles):
//   /                         main page: the sections, 5 featured articles, the calendar
//   /wiki/Article_{i}         article i: its text with 3 related articles linked inline, the
//                             next article, its section, and as the flags below say its
//                             event's month, its printable version and its forms
//   /docs/sec{k}/             section k (articles 20k..20k+19): its first 4 articles, so that most
//                             articles are found through other articles, each page bringing new
//                             articles and new spellings of known ones interleaved (as a crawl of
//                             a real wiki finds them)
//   /calendar?month=YYYY-MM   the events of a month (months 2023-01..2024-12, 3 articles each)
// The kinds, each a flag (the server understands every spelling whatever the flags; a flag decides
// whether the pages link it):
//   session_ids   the "next" link of every tenth article mints ?sid={8 hex digits}; a page
//                 reached with a sid carries it on every internal link, so each sid reaches a copy
//                 of the whole site (near duplicates at distance 0: only links differ)
//   tracking      utm_source/utm_medium/utm_campaign on featured and some related links, with
//                 several values (exact duplicates: ignored by the server)
//   sort_view     ?sort=asc|desc and ?view=full|compact on the section lists: the same 4 items in
//                 the other order or in another class, the links keeping the page's other
//                 parameter (so all 9 combinations are linked: near duplicates)
//   param_order   the sort and view links append their parameter after the page's (so both
//                 ?sort=desc&view=compact and ?view=compact&sort=desc are linked), and every other
//                 edit link spells action before title
//   aliases       /index.php?title=Article_{i} for /wiki/Article_{i}, /docs/sec{k}/index.html for
//                 /docs/sec{k}/ (exact duplicates)
//   printable     /print/wiki/Article_{i}: the article without navigation, with a "Retrieved
//                 from" line (near duplicates)
//   calendar      each month links the previous and the next one, years 1000 to 9999: an endless
//                 chain. The 24 months with events are distinct pages; every other month shows
//                 nothing but its name, and the ground truth counts all of them as one page (its
//                 content is its events: none), so a crawl's fetches in the trap are duplicate
//                 fetches. No URL rule can tell the empty months from the others by their URL: a
//                 learner that generalizes "month does not matter" from the empty ones loses the
//                 24 real ones (what bench/dust.sh counts as distinct pages never fetched)
//   forms         /index.php?title=Special:UserLogin&returnto={page} and
//                 /index.php?title=Article_{i}&action=edit, answering <meta name="robots"
//                 content="noindex,nofollow">; each differs from its kind's others only in the
//                 article's name, so each kind is one page (near duplicates)
// Ground truth (ground_truth): every response carries X-Dust-Page: {id}, the distinct page it is,
// the same for every spelling ("article/{i}", "section/{k}", "calendar/2023-05",
// "calendar/empty", "form/login", "form/edit", "main"; in the layout above "index", "docs/{i}",
// "session-article/{i}", "login", "stylesheet"), "none" for a 404; /__dust/truth answers JSON
// {"distinct_pages": N, "by_kind": {...}}: the ids reachable from / with these options.
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
  // The application and its kinds (header comment): all off by default.
  bool app = false;           // the wiki layout, with `pages` articles
  bool session_ids = false;   // ?sid= minted on some links, kept on every link after
  bool tracking = false;      // utm_* on some links
  bool sort_view = false;     // ?sort= and ?view= on the section lists
  bool param_order = false;   // the same parameters in two orders
  bool aliases = false;       // /index.php?title=..., /docs/sec{k}/index.html
  bool printable = false;     // /print/wiki/...
  bool calendar = false;      // /calendar?month=..., endless
  bool forms = false;         // login and edit forms, noindex,nofollow
  bool ground_truth = false;  // X-Dust-Page on every response, /__dust/truth

  // The application with every kind and the ground truth, the content-seen kinds off.
  static DustSiteOptions App(int articles);
};

class DustSite : public Site {
 public:
  explicit DustSite(DustSiteOptions options) : options_(options) {}
  SiteResponse Handle(const SiteRequest& request) override;

  // The article text of page i (its words, deterministic).
  static std::string ArticleText(int i, int words);

  // What /__dust/truth says: the number of distinct pages reachable from /.
  int DistinctPages() const;

 private:
  struct Page {
    SiteResponse response;
    std::string id;  // X-Dust-Page
  };
  Page Route(const std::string& path, const std::string& query) const;
  Page AppRoute(const std::string& path, const std::string& query) const;
  SiteResponse Docs(int i) const;
  // The application's pages; sid is the session the page was reached with ("" for none).
  std::string Link(std::string target, const std::string& sid) const;
  std::string Nav(int article, const std::string& sid) const;
  std::string ArticleBody(int i, const std::string& sid) const;
  SiteResponse MainPage(const std::string& sid) const;
  SiteResponse Article(int i, const std::string& sid) const;
  SiteResponse Printable(int i, const std::string& sid) const;
  SiteResponse Section(int k, const std::string& sort, const std::string& view,
                       const std::string& query, const std::string& sid) const;
  Page Calendar(int month, const std::string& sid) const;
  SiteResponse LoginForm(const std::string& returnto, const std::string& sid) const;
  SiteResponse EditForm(int i, const std::string& sid) const;
  std::string TruthJson() const;
  const DustSiteOptions options_;
};

}  // namespace urlsieve::site

#endif  // URLSIEVE_TOOLS_SITE_SERVER_DUST_SITE_H_
