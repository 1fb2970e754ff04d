// UrlRouter: the seam between the seen stage and the frontier. The crawler hands it the URLs the
// seen stage found new — one page's links (or the seeds) at a time, parsed — and the router puts
// each in the frontier that owns it.
//
// LocalUrlRouter pushes every URL into the crawl's own frontier. A node of a crawl cluster
// (docs/features/cluster.md, "The crawl cluster") does not use this seam: there the seen test and
// the routing are one atomic step (ClusterUrlRouter, crawler/cluster/cluster_url_router.h: the
// routed seen set appends each URL new to the cluster to its partition's inbox in the same Redis
// Function call), because a URL seen and not yet routed would be lost if the node died between the
// two.
//
// The crawler calls Route while it holds the checkpoint gate (shared), between the seen stage's
// insert and the page's Frontier::Done, so that a checkpoint never sees a URL in the seen set that
// is neither pending nor rejected (docs/architecture.md, "Invariants"). A URL the frontier rejects
// at once (depth, budget, a denied origin) is routed all the same: the frontier records the
// rejection (Frontier::DrainRejections).
//
// Thread-safety: Route may be called from any number of fetcher threads at once; implementations
// synchronise themselves (LocalUrlRouter relies on Frontier::Push, which is thread-safe).
#ifndef URLSIEVE_CRAWLER_CRAWL_URL_ROUTER_H_
#define URLSIEVE_CRAWLER_CRAWL_URL_ROUTER_H_

#include <cstdint>
#include <span>
#include <string_view>

#include "base/status.h"
#include "url/url_canonicalizer.h"

namespace urlsieve {

class Frontier;

class UrlRouter {
 public:
  virtual ~UrlRouter() = default;

  // Hands over `urls` (fetch form, each new to the seen stage), found at `depth` on the page
  // `parent` ("" for seeds). A non-OK Status means some URL may not have reached its frontier: the
  // crawl must stop without checkpointing them as seen.
  virtual Status Route(std::span<const CanonicalUrl> urls, uint32_t depth,
                       std::string_view parent) = 0;
  // A sitemap to read (docs/features/sitemaps.md), at nesting level `nesting`, named by `parent`.
  virtual void RouteSitemap(const CanonicalUrl& url, uint32_t nesting, std::string_view parent) = 0;
};

// Every URL to the local frontier, which must outlive the router.
class LocalUrlRouter final : public UrlRouter {
 public:
  explicit LocalUrlRouter(Frontier* frontier) : frontier_(frontier) {}

  // Always OK: a URL the frontier rejects is a decision it records, not an error.
  Status Route(std::span<const CanonicalUrl> urls, uint32_t depth,
               std::string_view parent) override;
  void RouteSitemap(const CanonicalUrl& url, uint32_t nesting, std::string_view parent) override;

 private:
  Frontier* const frontier_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CRAWL_URL_ROUTER_H_
