// Scope: decides whether a discovered URL belongs to the crawl, and counts every rejection by
// reason — the crawler's guard against leaving the site and against crawler traps.
//
// Checks, cheapest first: http(s) only; canonical URL length; link depth; repeated path segments
// (a run of segments repeating N times in a row, "/a/b/a/b/a/b", the signature of relative-link
// loops and calendar traps); host (the seed hosts, the seeds' registrable domains from the public
// suffix list, or any); deny patterns; allow patterns. Budgets (pages per host, total pages) are
// counted where pages are counted — the frontier — which records its rejections here with Record()
// so stats.json has one table of rejections.
// Thread-safety: immutable after construction except the counters, which are atomic, and the
// seed hosts a cluster node learns (AddSeed, under a shared_mutex); Check, Record and AddSeed may
// run on any number of threads.
#ifndef URLSIEVE_CRAWLER_CRAWL_SCOPE_H_
#define URLSIEVE_CRAWLER_CRAWL_SCOPE_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "base/status.h"
#include "crawler/config/crawl_config.h"
#include "frontier/politeness_key.h"  // RegistrableDomain: the frontier's politeness keys agree
#include "url/url_canonicalizer.h"

namespace urlsieve {

enum class ScopeReason : uint8_t {
  kAccept = 0,
  kScheme,            // not http or https
  kUrlLength,         // canonical key longer than max_url_length
  kDepth,             // deeper than max_depth
  kRepeatedSegments,  // a trap-like path
  kOffSite,           // host outside the seed hosts / domains
  kDenied,            // matched a deny pattern
  kNotAllowed,        // matched no allow pattern
  kInvalidUrl,        // did not canonicalize (recorded by the crawl loop)
  kCount,
};
// "scope-scheme", "scope-depth", ...: the keys of stats.json "rejections".
std::string_view ScopeReasonName(ScopeReason reason);

struct ScopeDecision {
  ScopeReason reason = ScopeReason::kAccept;
  bool accept() const { return reason == ScopeReason::kAccept; }
  std::string_view name() const { return ScopeReasonName(reason); }
};

struct ScopeOptions {
  ScopeMode mode = ScopeMode::kHost;
  std::vector<std::string> allow;  // ECMAScript regexes, searched in the canonical key
  std::vector<std::string> deny;
  size_t max_url_length = 2048;
  int max_depth = 10;
  int max_repeated_segments = 3;  // 0 = off; otherwise >= 2
  // A node of a crawl cluster: it may start without seeds and learns the seed hosts from the
  // seeds it reads from its inboxes (AddSeed).
  bool seeds_may_come_later = false;

  static ScopeOptions FromConfig(const CrawlConfig& config);
};

class Scope {
 public:
  // Compiles the patterns and collects the seed hosts (or their registrable domains). Errors for
  // an invalid pattern or option; no seeds is valid only with ScopeMode::kAny.
  static Result<std::unique_ptr<Scope>> Create(const ScopeOptions& options,
                                               const std::vector<CanonicalUrl>& seeds);
  ~Scope();

  // A seed found after Create (a cluster node's inbox): its host (or domain) is in scope from now.
  void AddSeed(const CanonicalUrl& seed);
  // The decision for a canonical URL found at `depth` (seeds are 0). Rejections are counted.
  ScopeDecision Check(const CanonicalUrl& url, int depth) const;
  // Counts a rejection decided elsewhere (kInvalidUrl, by the crawl loop). The page budgets are
  // the frontier's own rejections (frontier.h, RejectReason), not counted here.
  void Record(ScopeReason reason, uint64_t count = 1) const;

  // The host rule alone (seed hosts, their domains, or any), not counted: what a sitemap must meet
  // (docs/features/sitemaps.md, "Sitemaps"; the allow / deny patterns and the depth are for pages).
  bool HostInScope(std::string_view host) const;

  uint64_t rejections(ScopeReason reason) const;
  // Non-zero rejection counts by name, for CrawlStatsSnapshot::AddRejections.
  std::vector<std::pair<std::string_view, uint64_t>> Rejections() const;

 private:
  struct Patterns;  // the compiled regexes; <regex> stays out of this header

  explicit Scope(ScopeOptions options);
  ScopeReason Decide(const CanonicalUrl& url, int depth) const;

  const ScopeOptions options_;
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  // kHost: the seed hosts; kDomain: their registrable domains. Guarded by hosts_mu_ (only
  // AddSeed writes after Create).
  mutable std::shared_mutex hosts_mu_;
  std::unordered_set<std::string, StringHash, std::equal_to<>> hosts_;
  std::unique_ptr<Patterns> patterns_;
  mutable std::array<std::atomic<uint64_t>, static_cast<size_t>(ScopeReason::kCount)> counts_{};
};

// True when some run of 1..n path segments repeats `times` (>= 2) times in a row.
bool HasRepeatedSegments(std::string_view path, int times);

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CRAWL_SCOPE_H_
