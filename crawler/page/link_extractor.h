// LinkExtractor: the links of one HTML page, resolved to absolute URLs, with the page's robots
// directives — everything between a fetched body and the scope check.
//
// Parses with gumbo (the HTML5 tree construction algorithm, so it sees what a browser sees) after
// GuardHtml has bounded nesting and attributes (see html_guard.h), and walks the tree with an
// explicit stack. Extracted: <a>/<area> href, <frame>/<iframe> src, <link href> with rel
// alternate/next/prev, <meta http-equiv=refresh> targets. Recorded: the document base (the first
// <base href>, HTML §4.2.3 / RFC 3986 §5.1.1), noindex and nofollow from <meta name=robots>
// (none = both), rel=canonical; on request (Options::collect_text), the visible text. Every
// reference that is not kept is counted by reason (non-http(s) scheme, same-document,
// unresolvable, nofollow, too long, too many), never silently lost.
// The html given is UTF-8: the crawler decodes each page from its own encoding first
// (crawler/page/page_decoder.h; docs/features/encodings.md, "Character encodings"), since gumbo
// reads UTF-8 only (it would replace the non-ASCII bytes of a GBK or Latin-1 page with U+FFFD). The
// document's encoding comes along, for the queries of the links.
// Thread-safety: immutable after construction; Extract may run on many threads at once.
#ifndef URLSIEVE_CRAWLER_PAGE_LINK_EXTRACTOR_H_
#define URLSIEVE_CRAWLER_PAGE_LINK_EXTRACTOR_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "crawler/page/html_guard.h"
#include "url/url_canonicalizer.h"

namespace urlsieve {

// Where a link was found.
enum class LinkSource : uint8_t { kA, kArea, kFrame, kIframe, kLink, kMetaRefresh };
std::string_view LinkSourceName(LinkSource source);  // "a", "area", ..., "meta-refresh"

// rel tokens that matter to a crawler (HTML §4.6.7; rel is a case-insensitive token set).
enum LinkRel : uint8_t {
  kRelNofollow = 1 << 0,
  kRelAlternate = 1 << 1,
  kRelNext = 1 << 2,
  kRelPrev = 1 << 3,
  kRelCanonical = 1 << 4,
  kRelStylesheet = 1 << 5,
};

// Why a reference was not returned as a link.
enum class LinkDropReason : uint8_t {
  kJavascript,  // javascript: URLs
  kMailto,
  kData,
  kTel,
  kOtherScheme,   // ftp:, file:, about:, ...
  kSameDocument,  // "" or "#fragment": RFC 3986 §4.4
  kUnresolvable,  // Resolve() refused it
  kNofollow,      // rel=nofollow or meta robots nofollow, when obeyed
  kTooLong,       // longer than the canonicalizer's max_length
  kTooMany,       // past Options::max_links on one page
  kTooDeep,       // an <a> nested absurdly deep in SVG/MathML, removed by GuardHtml
  kCount,
};
std::string_view LinkDropReasonName(LinkDropReason reason);  // "link-javascript", ...

struct ExtractedLink {
  std::string url;  // absolute, resolved against the document base, no fragment
  LinkSource source;
  uint8_t rel;    // LinkRel bits of the element's rel attribute
  bool nofollow;  // rel=nofollow, or the page's meta robots says nofollow
};

struct PageLinks {
  std::vector<ExtractedLink> links;      // kept links in document order (duplicates possible)
  std::string base;                      // the document base URL the links were resolved against
  std::optional<std::string> canonical;  // <link rel=canonical href>, resolved (first one)
  bool noindex = false;                  // <meta name=robots content=noindex|none>
  bool nofollow = false;                 // <meta name=robots content=nofollow|none>
  bool guarded = false;  // GuardHtml flattened hostile markup before parsing (no link is lost)
  std::array<uint32_t, static_cast<size_t>(LinkDropReason::kCount)> dropped{};
  // The page's visible text when Options::collect_text is set (else empty): what SimHash
  // fingerprints (dedup/content/simhash.h; docs/features/content-seen.md, "Fingerprints").
  std::string text;

  uint32_t dropped_count(LinkDropReason r) const { return dropped[static_cast<size_t>(r)]; }
  // Non-zero drop counts by name, for CrawlStats.
  std::vector<std::pair<std::string_view, uint64_t>> DroppedCounts() const;
};

class LinkExtractor {
 public:
  struct Options {
    bool obey_nofollow = true;  // false: keep nofollow links (flagged) instead of dropping them
    size_t max_links = 10'000;  // per page; the rest are counted as kTooMany
    HtmlGuardLimits guard;      // keeps hostile markup from making the parse quadratic
    // Also collect the visible text into PageLinks::text, in the same walk of the same parse:
    // the text nodes (entities decoded, <title> included) outside <script>, <style>, <template>,
    // <noscript>, <iframe>, <noembed> and <noframes>, one space between text nodes and for every
    // run of ASCII whitespace or U+00A0, none leading or trailing (docs/features/content-seen.md,
    // "Fingerprints").
    bool collect_text = false;
  };

  // `canonicalizer` resolves references; it must outlive the extractor.
  LinkExtractor(const UrlCanonicalizer* canonicalizer, Options options);

  // `html` is the body as UTF-8 (any bytes are safe: gumbo replaces invalid sequences);
  // `page_url` is the absolute URL it was fetched from (after redirects).
  // `encoding` is the document's encoding (the body itself is already UTF-8: the caller decoded
  // it, crawler/page/page_decoder.h); references are resolved with it (UrlCanonicalizer::Resolve),
  // so their queries are sent as a browser sends them. nullptr means UTF-8.
  PageLinks Extract(std::string_view html, std::string_view page_url,
                    const TextEncoding* encoding = nullptr) const;

  const Options& options() const { return options_; }

 private:
  const UrlCanonicalizer* canonicalizer_;
  Options options_;
};

// The URL part of a <meta http-equiv=refresh> content attribute ("5; url='x'" -> "x"), following
// the HTML "shared declarative refresh steps" leniently (the delay may be missing); nullopt when
// there is none (a plain reload).
std::optional<std::string_view> ParseMetaRefresh(std::string_view content);

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_PAGE_LINK_EXTRACTOR_H_
