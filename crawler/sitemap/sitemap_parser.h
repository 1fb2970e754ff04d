// SitemapParser: reads one sitemap (sitemaps.org protocol 0.9) — a <sitemapindex> (its
// <sitemap><loc>s are child sitemaps), a <urlset> (its <url><loc>s, with <lastmod>) or a plain text
// file of URLs, one per line — streaming, with every limit of the protocol and of a hostile input
// enforced and reported rather than crashed or hung on (docs/features/sitemaps.md, "Sitemaps").
//
// Bytes are fed as they come (Feed), then Finish() returns what was read. The first byte that is
// not a BOM or white space decides: "<" is XML, parsed by expat; anything else is a text sitemap,
// whose first line must be an http(s) URL. A body that starts with the gzip magic (1f 8b: a
// .xml.gz served as application/x-gzip, not decoded by Content-Encoding) is inflated first, with
// the inflated bytes bounded like any others (a gzip bomb stops at max_bytes): ParseSitemap does
// both for a whole body.
//
// Hostile input: any DOCTYPE is refused (no entity is ever declared, so none is expanded: no
// "billion laughs", no external entity); element nesting deeper than max_element_depth is refused;
// a root element other than <urlset> / <sitemapindex> is refused; a <loc> longer than
// max_loc_length is dropped and counted; entries past max_entries are counted, not kept; content
// past max_bytes (uncompressed) is not read; malformed XML stops the parse where it is, keeping
// the entries before it, with the error (and its line) recorded; a bad <lastmod> (not a W3C
// datetime) is ignored and counted. Namespaces are not checked (sitemaps in the wild omit or vary
// them): elements are matched by local name, a <loc> only as the child of <url> or <sitemap>.
//
// Thread-safety: none; one parser per sitemap.
#ifndef URLSIEVE_CRAWLER_SITEMAP_SITEMAP_PARSER_H_
#define URLSIEVE_CRAWLER_SITEMAP_SITEMAP_PARSER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace urlsieve {

// sitemaps.org: "no more than 50,000 URLs and must be no larger than 50MB (52,428,800 bytes)"
// uncompressed, for a urlset and for an index alike.
inline constexpr size_t kSitemapMaxEntries = 50'000;
inline constexpr uint64_t kSitemapMaxBytes = 52'428'800;

struct SitemapLimits {
  size_t max_entries = kSitemapMaxEntries;
  uint64_t max_bytes = kSitemapMaxBytes;  // uncompressed
  size_t max_loc_length = 2083;           // the canonicalizer's max_length
  uint32_t max_element_depth = 16;        // a sitemap needs 3; extensions (image, video) a few more
};

enum class SitemapKind : uint8_t {
  kUnknown,  // nothing decided (empty, refused before the root, not XML nor text)
  kIndex,    // <sitemapindex>: the entries are sitemaps
  kUrlset,   // <urlset>: the entries are pages
  kText,     // a text file of URLs: pages
};
std::string_view SitemapKindName(SitemapKind kind);  // "index", "urlset", "text", "unknown"

struct SitemapEntry {
  std::string loc;                 // as written (entities decoded, white space trimmed)
  std::optional<int64_t> lastmod;  // unix seconds (UTC), when a valid <lastmod> was given
};

struct SitemapParse {
  SitemapKind kind = SitemapKind::kUnknown;
  std::vector<SitemapEntry> entries;  // at most max_entries
  uint64_t bytes = 0;                 // uncompressed bytes read (at most max_bytes)
  bool gzip = false;                  // the body was gzip (magic bytes) and was inflated
  uint64_t cut_entries = 0;           // entries past max_entries, not kept
  bool cut_bytes = false;             // content past max_bytes was not read
  uint64_t long_locs = 0;             // <loc>s (or lines) longer than max_loc_length, dropped
  uint64_t bad_lastmods = 0;          // <lastmod>s that are not a W3C datetime, ignored
  // Why reading stopped early ("" = it did not): refused input (a DOCTYPE, nesting too deep, a
  // root element that is no sitemap, neither XML nor text) or an error (malformed XML at a line,
  // a corrupt gzip stream). The entries before it are kept.
  std::string error;
  bool refused = false;  // error is a refusal (hostile or not a sitemap), not a malformed body
};

class SitemapParser {
 public:
  explicit SitemapParser(const SitemapLimits& limits);
  ~SitemapParser();
  SitemapParser(const SitemapParser&) = delete;
  SitemapParser& operator=(const SitemapParser&) = delete;

  // Feeds the next bytes of the (uncompressed) sitemap. Returns false once nothing more will be
  // read (an error, a refusal, or max_bytes reached): the caller may stop feeding.
  bool Feed(std::string_view bytes);
  // The input was cut before its end (a fetch stopped at its cap): what was fed is all there
  // is, and an unfinished document is not an error (cut_bytes is set). Then call Finish.
  void Cut();
  // Ends the input and returns what was read. Call once.
  SitemapParse Finish();

 private:
  class Xml;
  bool FeedText(std::string_view bytes);
  void EndTextLine();
  void AddEntry(std::string loc, std::optional<int64_t> lastmod);

  const SitemapLimits limits_;
  SitemapParse result_;
  enum class Mode : uint8_t { kSniffing, kXml, kText, kDone } mode_ = Mode::kSniffing;
  std::string pending_;  // sniffing: bytes seen so far (BOM, white space)
  std::unique_ptr<Xml> xml_;
  std::string line_;  // text: the current line (at most max_loc_length + 1 bytes)
  bool line_too_long_ = false;
  bool first_line_ = true;
  friend class Xml;
};

// Parses a whole body: inflates it first when it starts with the gzip magic (output bounded by
// limits.max_bytes), then feeds it to a SitemapParser. `truncated`: the body was cut before its
// end (Cut()), so a gzip stream or a document that ends early is no error.
SitemapParse ParseSitemap(std::string_view body, const SitemapLimits& limits,
                          bool truncated = false);

// A W3C datetime (https://www.w3.org/TR/NOTE-datetime, as sitemaps.org's <lastmod> takes it):
// YYYY, YYYY-MM, YYYY-MM-DD, or YYYY-MM-DDThh:mm[:ss[.s+]]TZD with TZD "Z" or "+hh:mm"/"-hh:mm";
// as unix seconds (UTC). nullopt when it is none of these or out of range.
std::optional<int64_t> ParseW3cDatetime(std::string_view text);

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_SITEMAP_SITEMAP_PARSER_H_
