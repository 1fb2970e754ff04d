// The Crawler's sitemap members (docs/features/sitemaps.md, "Sitemaps"): the sources (robots.txt
// Sitemap: lines, --sitemap), the at-most-once claim, and the sitemap lease: fetch, parse, queue.
#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "crawler/crawl/admission.h"
#include "crawler/crawl/crawler.h"
#include "crawler/crawl/deployment.h"
#include "crawler/crawl/scope.h"
#include "crawler/crawl/work_source.h"
#include "crawler/fetch/fetcher.h"
#include "crawler/output/warc_writer.h"
#include "crawler/page/page_processor.h"
#include "crawler/sitemap/sitemap_parser.h"
#include "crawler/sitemap/sitemap_store.h"
#include "crawler/state/crawl_state.h"
#include "frontier/frontier.h"
#include "frontier/robots_rules.h"
#include "url/url_canonicalizer.h"

namespace urlsieve {
namespace {

int64_t UnixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The log line of a sitemap fetched (`parse`: null when no sitemap was read).
std::string DescribeSitemap(const std::string& url, const FetchResult& r, const SitemapParse* parse,
                            const SitemapListing& listing, int fresh, const std::string& redirect) {
  std::string line = "sitemap " + url + ": ";
  line += r.ok() ? "HTTP " + std::to_string(r.status) : r.error.message();
  if (parse) {
    line += ", ";
    line += SitemapKindName(parse->kind);
    if (parse->gzip) line += " (gzip)";
    if (parse->kind == SitemapKind::kIndex) {
      line += ", " + std::to_string(listing.children.size()) + " sitemaps";
    } else if (parse->kind != SitemapKind::kUnknown) {
      line += ", " + std::to_string(listing.listed) + " URLs, " + std::to_string(fresh) + " new, " +
              std::to_string(listing.rejected) + " out of scope or invalid";
    }
    if (parse->cut_entries > 0) {
      line += "; cut after " + std::to_string(kSitemapMaxEntries) + " entries (" +
              std::to_string(parse->cut_entries) + " more not read)";
    }
    if (r.body_truncated) {
      line += "; body cut by the fetch at " + std::to_string(kSitemapMaxBytes) + " bytes";
    } else if (parse->cut_bytes) {
      line += "; content cut at " + std::to_string(kSitemapMaxBytes) + " bytes uncompressed";
    }
    if (parse->long_locs > 0) {
      line += "; " + std::to_string(parse->long_locs) + " <loc>s too long dropped";
    }
    if (parse->bad_lastmods > 0) {
      line += "; " + std::to_string(parse->bad_lastmods) + " bad <lastmod>s ignored";
    }
    if (!parse->error.empty()) line += "; " + parse->error;
  } else if (!redirect.empty()) {
    line += ", redirected to " + redirect;
  }
  return line;
}

}  // namespace

bool Crawler::SitemapsEnabled() const { return config_.sitemaps.max_total > 0; }

void Crawler::QueueSitemaps(const std::vector<std::string>& urls, uint32_t nesting,
                            const std::string& parent) {
  if (!SitemapsEnabled()) return;
  for (const std::string& url : urls) {
    if (nesting > static_cast<uint32_t>(config_.sitemaps.max_nesting)) {
      stats_->RecordSitemap("nesting_cut");
      log_.Info("sitemap " + url + " (in " + parent + "): not read, nested deeper than " +
                std::to_string(config_.sitemaps.max_nesting) + " (sitemaps.max_nesting)");
      continue;
    }
    Result<CanonicalUrl> canonical = fetch_form_->Canonicalize(url);
    if (!canonical.ok()) {
      stats_->RecordSitemap("invalid");
      continue;
    }
    // A sitemap on a host outside the crawl's scope is not fetched: robots.txt cannot send the
    // crawl to other hosts. (The allow / deny patterns are for pages: a sitemap need not match.)
    if ((canonical->scheme() != "http" && canonical->scheme() != "https") ||
        !scope_->HostInScope(canonical->host())) {
      stats_->RecordSitemap("out_of_scope");
      continue;
    }
    switch (sitemaps_->Claim(canonical->key(), nesting, parent,
                             static_cast<size_t>(config_.sitemaps.max_total))) {
      case SitemapStore::ClaimResult::kRepeated:
        // An index listing itself, a cycle, a URL named twice: fetched once.
        stats_->RecordSitemap("repeated");
        continue;
      case SitemapStore::ClaimResult::kOverBudget:
        stats_->RecordSitemap("over_budget");
        continue;
      case SitemapStore::ClaimResult::kClaimed:
        break;
    }
    Result<SitemapQueued> queued = admission_->AdmitSitemap(*canonical, nesting, parent);
    if (!queued.ok()) {
      Fail(queued.status());
      return;
    }
    stats_->RecordSitemap(*queued == SitemapQueued::kBefore ? "repeated" : "queued");
    // Another node's to read (or already read): no pending sitemap of this node's checkpoint.
    if (*queued != SitemapQueued::kLocally) {
      sitemaps_->HandedOver(std::string(canonical->key()), UnixNow());
    }
  }
}

Status Crawler::QueueStartSitemaps(const std::vector<SitemapRecord>& roots) {
  if (!SitemapsEnabled() || (config_.sitemaps.urls.empty() && roots.empty())) return Status::Ok();
  std::shared_lock<std::shared_mutex> gate(state_->gate());
  std::vector<std::string> fresh;
  for (const std::string& url : config_.sitemaps.urls) {
    // Continuing a crawl: a --sitemap claimed by an earlier run is not counted as repeated.
    Result<CanonicalUrl> canonical = fetch_form_->Canonicalize(url);
    if (!canonical.ok()) {
      return Status::InvalidArgument("--sitemap " + url + ": " + canonical.status().message());
    }
    if (!sitemaps_->Claimed(canonical->key())) fresh.push_back(url);
  }
  QueueSitemaps(fresh, 0, "");
  // A re-crawl's new pass reads the sitemaps of the earlier ones again, from their roots (those
  // of robots.txt too: the origin may have nothing else due, so its robots.txt is not read).
  for (const SitemapRecord& root : roots) {
    if (!sitemaps_->Claimed(root.url)) QueueSitemaps({root.url}, 0, root.parent);
  }
  RecordRejections();
  return Status::Ok();
}

void Crawler::QueueRobotsSitemaps(std::string_view robots_body, const std::string& robots_url) {
  if (!SitemapsEnabled()) return;
  const RobotsRules rules = RobotsRules::Parse(robots_body);
  const std::vector<std::string>& named = rules.sitemaps();
  if (named.empty()) return;
  // RFC 9309 does not define Sitemap: lines; sitemaps.org asks for absolute URLs. A relative one
  // is resolved against the robots.txt URL, as browsers would.
  std::vector<std::string> urls;
  for (const std::string& url : named) {
    Result<std::string> resolved = fetch_form_->Resolve(robots_url, url);
    urls.push_back(resolved.ok() ? std::move(*resolved) : url);
  }
  stats_->RecordSitemap("from_robots", urls.size());
  QueueSitemaps(urls, 0, robots_url);
}

void Crawler::HandleSitemap(Fetcher& fetcher, const Lease& lease) {
  const auto started = std::chrono::system_clock::now();
  // The protocol's 50 MB bound is on the uncompressed sitemap: the fetch cuts the (decoded) body
  // there, and the parser cuts the inflated content of a gzip body there too.
  FetchResult r = fetcher.FetchSitemap(lease.url, kSitemapMaxBytes);
  SitemapLimits limits;
  limits.max_loc_length = config_.canonicalize.max_length;
  std::optional<SitemapParse> parse;
  std::string redirect;
  if (r.ok() && IsRedirectStatus(r.status) && !r.location.empty()) {
    // A redirected sitemap is the target, at the same nesting level (claimed like any other).
    Result<std::string> target = fetch_form_->Resolve(lease.url, r.location);
    if (target.ok()) redirect = std::move(*target);
  } else if (r.ok() && r.status >= 200 && r.status < 300) {
    parse = ParseSitemap(r.body, limits, r.body_truncated);
  }

  SitemapListing listing;
  if (parse) listing = ListSitemap(&*parse);
  std::vector<std::string>& children = listing.children;
  std::vector<CanonicalUrl>& pages = listing.pages;

  FetchOutcome outcome;
  // A response counts (a body cut at the cap is still a response); no response is retried by the
  // frontier within its budget, with the key's back-off.
  outcome.http_status = r.ok() ? static_cast<int>(r.status) : 0;
  outcome.fetch_time = r.total_time;
  outcome.retry_after = r.retry_after;
  if (!r.ok() && IsPermanent(r.error_kind)) outcome.permanent_failure = RejectReason::kTlsError;
  if (!r.ok()) stats_->RecordError(FetchErrorKindName(r.error_kind));

  int fresh = 0;
  {
    std::shared_lock<std::shared_mutex> gate(state_->gate());
    if (!children.empty()) QueueSitemaps(children, lease.depth + 1, lease.url);
    if (!redirect.empty()) QueueSitemaps({redirect}, lease.depth, lease.url);
    if (!pages.empty()) {
      // docs/features/sitemaps.md, "Sitemaps": like links of the sitemap, at depth 0 (seeds of
      // their own).
      Result<Admitted> admitted = PushNew(&pages, 0, lease.url);
      if (!admitted.ok()) Fail(admitted.status());
      fresh = admitted.ok() ? admitted->fresh : 0;
    }
    for (const auto& [url, lastmod] : listing.lastmods) {
      sitemaps_->PutLastmod(url, lastmod, lease.url);
    }
    // Archived like robots.txt: the response as fetched (a body cut at the cap says so).
    if (warc_ && r.status != 0) ArchiveAsFetched(r, started);
    const DoneDecision decision = frontier_->Done(lease, outcome);
    LogDecision(lease, r, decision);
    if (decision.action != DoneDecision::Action::kRetry) {
      const std::string_view kind = parse ? SitemapKindName(parse->kind) : std::string_view();
      sitemaps_->Done(lease.url, r.ok() ? static_cast<int>(r.status) : 0, kind,
                      parse ? parse->entries.size() : 0, UnixNow());
      work_->SitemapDone(lease.url);
      CountSitemap(parse ? &*parse : nullptr, listing, fresh, !redirect.empty(), r.body_truncated);
    }
    RecordRejections();
  }

  if (log_.enabled(LogLevel::kInfo)) {
    log_.Info(DescribeSitemap(lease.url, r, parse ? &*parse : nullptr, listing, fresh, redirect));
  }
}

void Crawler::CountSitemap(const SitemapParse* parse, const SitemapListing& listing, int fresh,
                           bool redirected, bool body_truncated) {
  if (parse) {
    stats_->RecordSitemap("fetched");
    switch (parse->kind) {
      case SitemapKind::kIndex:
        stats_->RecordSitemap("indexes");
        break;
      case SitemapKind::kUrlset:
        stats_->RecordSitemap("urlsets");
        break;
      case SitemapKind::kText:
        stats_->RecordSitemap("texts");
        break;
      case SitemapKind::kUnknown:
        break;
    }
    if (parse->gzip) stats_->RecordSitemap("gzip");
    if (parse->kind != SitemapKind::kIndex) {
      stats_->RecordSitemap("urls", listing.listed);
      stats_->RecordSitemap("urls_new", static_cast<uint64_t>(fresh));
      stats_->RecordSitemap("urls_rejected", listing.rejected);
    } else {
      stats_->RecordSitemap("children", listing.children.size());
    }
    stats_->RecordSitemap("cut_urls", parse->cut_entries);
    if (parse->cut_bytes || body_truncated) stats_->RecordSitemap("cut_bytes");
    stats_->RecordSitemap("loc_too_long", parse->long_locs);
    stats_->RecordSitemap("lastmod_bad", parse->bad_lastmods);
    if (parse->refused) {
      stats_->RecordSitemap("refused");
    } else if (!parse->error.empty()) {
      stats_->RecordSitemap("malformed");
    }
  } else if (redirected) {
    stats_->RecordSitemap("redirects");
  } else {
    stats_->RecordSitemap("failed");
  }
}

SitemapListing Crawler::ListSitemap(SitemapParse* parse) {
  // A urlset's URLs, parsed once here in fetch form, as links are (QueueLinks).
  SitemapListing listing;
  if (parse->kind == SitemapKind::kIndex) {
    listing.children.reserve(parse->entries.size());
    for (SitemapEntry& entry : parse->entries) listing.children.push_back(std::move(entry.loc));
    return listing;
  }
  listing.pages.reserve(parse->entries.size());
  for (const SitemapEntry& entry : parse->entries) {
    Result<CanonicalUrl> canonical = fetch_form_->Canonicalize(entry.loc);
    if (!canonical.ok()) {
      scope_->Record(ScopeReason::kInvalidUrl);
      ++listing.rejected;
      continue;
    }
    if (!scope_->Check(*canonical, 0).accept()) {
      ++listing.rejected;
      continue;
    }
    // A lastmod in the future is taken as "now": it makes the URL due once, not forever.
    if (entry.lastmod) {
      listing.lastmods.emplace_back(canonical->key(), std::min(*entry.lastmod, UnixNow()));
    }
    listing.pages.push_back(std::move(*canonical));
  }
  listing.listed = listing.pages.size() + listing.rejected;
  return listing;
}

}  // namespace urlsieve
