// UrlCanonicalizer: turns the many spellings of one http(s) resource into one key.
//
// The key follows RFC 3986 §6 normalization plus WHATWG host parsing: lowercase scheme and host,
// IDNA (UTS #46) to punycode, IPv4 number forms to dotted decimal, IPv6 compressed, default port
// removed, empty path -> "/", dot segments removed, percent-encoding normalized, '\'' in the query
// percent-encoded as a browser does, fragment dropped. Spellings a browser sends as one request
// share a key.
// Opt-in crawler rules (CanonicalizeOptions) go further. The key is always a valid RFC 3986 URI and
// canonicalizing a key yields the key itself.
//
// The key is what the seen stage stores. A crawl fetches the fetch form: the key made with no
// opt-in rule, an equivalent spelling of the URL found (crawler/crawl/crawler.h).
// Thread-safety: a UrlCanonicalizer is immutable after construction; share it freely.
#ifndef URLSIEVE_URL_URL_CANONICALIZER_H_
#define URLSIEVE_URL_URL_CANONICALIZER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/encoding/text_encoding.h"
#include "base/status.h"

namespace urlsieve {

// The version of the key function itself (not an opt-in rule). A state records the version its
// keys were made with and keeps using it (dedup/seen_filter.cc), so no key changes under a state.
//   1: '\'' kept literal in queries; hosts through libidn2 whole (IDNA2008 checks, then
//      transitional processing)
//   2: '\'' in a query percent-encoded, as a browser sends it; hosts by UTS #46 as browsers do
//      (url/idna_host.h)
inline constexpr int kCurrentKeyVersion = 2;

// The version of the list of known tracking parameters (url/tracking_params.h) that
// strip_tracking_params removes: stored with a state that uses the rule (CanonicalizeRule::
// stored_version). A list is never changed in place; a changed one is a new version.
inline constexpr int kTrackingParamsVersion = 1;

struct CanonicalizeOptions {
  bool sort_query = false;             // order query parameters by name (stable for equal names)
  bool drop_empty_query = false;       // "http://a/p?" -> "http://a/p"
  bool strip_session_ids = false;      // jsessionid, phpsessid, sid, aspsessionid, cfid, cftoken
  bool strip_www = false;              // "www.example.com" -> "example.com"
  bool collapse_slashes = false;       // "/a//b" -> "/a/b"
  bool strip_tracking_params = false;  // utm_*, fbclid, gclid, ... (url/tracking_params.h)
  // With strip_tracking_params: "HOST:NAME", the tracking parameter NAME kept on HOST and the
  // hosts under it (CheckTrackingException says which are well-formed; malformed ones are
  // ignored). Unused without the rule.
  std::vector<std::string> tracking_exceptions;
  size_t max_length = 2083;              // longer input is rejected
  int key_version = kCurrentKeyVersion;  // 1 or 2; set from a state, never by a user
};

// The opt-in rules of CanonicalizeOptions, listed once: the crawl config's [canonicalize] keys,
// the --flags of `urlsieve filter` and `canon`, their help and the stats output come from here
// (docs/features/canonicalization.md, "Canonicalization"). All off by default. (The one option
// that is not a switch, tracking_exceptions, goes with strip_tracking_params: the config key
// canonicalize.tracking_exceptions and the flag --keep-tracking-param.)
struct CanonicalizeRule {
  std::string_view name;  // "sort_query": the TOML key and the Python keyword argument
  std::string_view flag;  // "--sort-query"
  bool CanonicalizeOptions::*member;
  std::string_view help;
  // How a state (EncodeStoredCanonicalize, dedup/seen_set_params.h) and a cluster's settings
  // record the rule. 0: always, as 0 or 1: the first five rules, which every existing state spells
  // out. N > 0: a rule added later, recorded only when on, as N, the version of what it does (its
  // list): a state without it reads as it did in the builds before the rule, a build that predates
  // the rule refuses a state that has it on, and a build refuses a version it does not make.
  int stored_version;
};
inline constexpr CanonicalizeRule kCanonicalizeRules[] = {
    {"sort_query", "--sort-query", &CanonicalizeOptions::sort_query,
     "Sort query parameters by name", 0},
    {"drop_empty_query", "--drop-empty-query", &CanonicalizeOptions::drop_empty_query,
     "Drop an empty '?'", 0},
    {"strip_session_ids", "--strip-session-ids", &CanonicalizeOptions::strip_session_ids,
     "Remove jsessionid, phpsessid, sid, aspsessionid, cfid, cftoken", 0},
    {"strip_www", "--strip-www", &CanonicalizeOptions::strip_www,
     "Remove a leading 'www.' from hosts", 0},
    {"collapse_slashes", "--collapse-slashes", &CanonicalizeOptions::collapse_slashes,
     "Collapse '//' in paths to '/'", 0},
    {"strip_tracking_params", "--strip-tracking-params",
     &CanonicalizeOptions::strip_tracking_params,
     "Remove known tracking query parameters (utm_*, fbclid, gclid, msclkid, ...)",
     kTrackingParamsVersion},
};

// Whether any opt-in rule is on (the key is then more than the browser-equivalence key).
inline bool HasOptInRules(const CanonicalizeOptions& options) {
  for (const CanonicalizeRule& rule : kCanonicalizeRules) {
    if (options.*rule.member) return true;
  }
  return false;
}

// A canonical http(s) URL: the key plus views of its components (all pointing into key()).
class CanonicalUrl {
 public:
  const std::string& key() const { return key_; }
  std::string_view scheme() const { return View(0, scheme_end_); }        // "https"
  std::string_view host() const { return View(host_begin_, host_end_); }  // "[::1]", "a.com"
  uint16_t port() const { return port_; }  // the effective port: 80/443 when none is written
  // "scheme://host[:port]" — the default politeness key and the robots.txt origin.
  std::string_view origin() const { return View(0, path_begin_); }
  std::string_view path() const { return View(path_begin_, query_begin_); }  // "/a/b"
  bool has_query() const { return query_begin_ < key_.size(); }
  std::string_view query() const {  // without the '?'
    return has_query() ? View(query_begin_ + 1, key_.size()) : std::string_view();
  }
  std::string_view path_and_query() const { return View(path_begin_, key_.size()); }

 private:
  friend class UrlCanonicalizer;
  // Unchecked: the offsets are the canonicalizer's, b <= e <= key_.size() (views are taken per
  // link in the crawl's hot loop).
  std::string_view View(size_t b, size_t e) const {
    return std::string_view(key_.data() + b, e - b);
  }

  std::string key_;
  uint32_t scheme_end_ = 0;
  uint32_t host_begin_ = 0;
  uint32_t host_end_ = 0;
  uint32_t path_begin_ = 0;
  uint32_t query_begin_ = 0;  // index of '?', or key_.size() when there is no query
  uint16_t port_ = 0;
};

class UrlCanonicalizer {
 public:
  explicit UrlCanonicalizer(CanonicalizeOptions options = {});

  // Canonicalizes an absolute http(s) URL. Errors (InvalidArgument, with a reason) for other
  // schemes, relative references, bad hosts or ports, invalid UTF-8, and over-long input.
  Result<CanonicalUrl> Canonicalize(std::string_view url) const;

  // The hot path: writes only the key into *key, reusing its capacity.
  Status CanonicalizeTo(std::string_view url, std::string* key) const;

  // Resolves `reference` against the absolute URL `base` (RFC 3986 §5.2, with the browser
  // leniencies for http(s): surrounding whitespace, tab/CR/LF, '\' as '/'). Returns the absolute
  // URL to fetch, without a fragment; it is not canonicalized (pass it to Canonicalize for the
  // key). `document_encoding` is the encoding of the document the reference was found in: as the
  // WHATWG URL Standard's parser does for http(s), non-ASCII in the reference's query is
  // percent-encoded in OutputEncoding(*document_encoding), a character that encoding lacks as
  // "%26%23N%3B"
  // ("&#N;"); the path is always UTF-8, and a query taken from the base is kept as it is
  // (docs/features/canonicalization.md, "Queries in the document's encoding"). nullptr means UTF-8.
  // An encoding glibc's iconv cannot encode to is an error naming it.
  Result<std::string> Resolve(std::string_view base, std::string_view reference,
                              const TextEncoding* document_encoding = nullptr) const;

  const CanonicalizeOptions& options() const { return options_; }

 private:
  CanonicalizeOptions options_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_URL_URL_CANONICALIZER_H_
