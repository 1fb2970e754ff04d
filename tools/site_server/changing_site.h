// ChangingSite: a small site whose pages change between two crawls, for the re-crawl tests
// (tests/crawler/crawl_recrawl_test.cc; docs/features/recrawl.md, "Re-crawl").
//
// One host:
//   /robots.txt        allows everything
//   /                  the index: links /p/0 .. /p/N-1 (ETag; never changes)
//   /p/i               page i, linking the index and the next page; validators by i % 4:
//                        kEtag: ETag only, kLastModified: Last-Modified only, kNone: neither,
//                        kBoth: both (as nginx sends them)
//   /p/i/new-r         a page that appears in round r, linked only from a changed page i
// The test sets the round (SetRound; 0 at the start). From round 1 on:
//   - a page in `changed` has a new body in every round (its version is the round), new
//     validators (ETag "i-v", Last-Modified one day later per version) and one more link, to
//     /p/i/new-r;
//   - a page in `revalidated` keeps its body but sends new validators (a server that regenerates
//     them): a conditional GET gets 200 with an identical payload;
//   - a page in `gone` answers 404.
// Any other page is unchanged: with validators a conditional GET gets 304 (SiteServer,
// conditional.h); without, it answers 200 with the same body.
//
// Thread-safety: thread-safe (the round is atomic; the rest is immutable).
#ifndef URLSIEVE_TOOLS_SITE_SERVER_CHANGING_SITE_H_
#define URLSIEVE_TOOLS_SITE_SERVER_CHANGING_SITE_H_

#include <atomic>
#include <set>
#include <string>

#include "tools/site_server/site.h"

namespace urlsieve::site {

enum class Validators { kEtag, kLastModified, kNone, kBoth };

struct ChangingSiteOptions {
  int pages = 16;
  std::set<int> changed;
  std::set<int> revalidated;
  std::set<int> gone;
};

class ChangingSite : public Site {
 public:
  explicit ChangingSite(ChangingSiteOptions options) : options_(std::move(options)) {}

  SiteResponse Handle(const SiteRequest& request) override;

  void SetRound(int round) { round_.store(round); }
  int round() const { return round_.load(); }
  int pages() const { return options_.pages; }
  const ChangingSiteOptions& options() const { return options_; }

  static Validators ValidatorsOf(int page) { return static_cast<Validators>(page % 4); }
  static std::string PagePath(int page) { return "/p/" + std::to_string(page); }
  // The page that first appears in `round`, linked from changed page `page`.
  static std::string NewPagePath(int page, int round) {
    return PagePath(page) + "/new-" + std::to_string(round);
  }

 private:
  // `site`: the host's name in the pages' titles ("a", "b", ...): each host serves its own
  // content, so the crawl's content-seen test finds no host a copy of another.
  SiteResponse Page(int page, int round, const std::string& site) const;

  const ChangingSiteOptions options_;
  std::atomic<int> round_{0};
};

}  // namespace urlsieve::site

#endif  // URLSIEVE_TOOLS_SITE_SERVER_CHANGING_SITE_H_
