#include "url/url_canonicalizer.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "base/encoding/text_encoder.h"
#include "url/idna_host.h"
#include "url/ipv4_host.h"
#include "url/ipv6_host.h"
#include "url/tracking_params.h"
#include "url/url_canonicalize_rules.h"
#include "url/url_chars.h"
#include "url/url_key_writer.h"
#include "url/url_syntax.h"

namespace urlsieve {
namespace {

using url_chars::Is;

// Offsets of the components inside the key (see CanonicalUrl).
struct KeyParts {
  size_t scheme_end = 0;
  size_t host_begin = 0;
  size_t host_end = 0;
  size_t path_begin = 0;
  size_t query_begin = 0;
  uint16_t port = 0;
};

// WHATWG "basic URL parser" input cleanup: strip leading/trailing C0 controls and spaces, remove
// every tab, CR and LF. Copies into *scratch only when something inside has to go.
std::string_view CleanInput(std::string_view in, std::string* scratch, bool* non_ascii) {
  size_t b = 0, e = in.size();
  while (b < e && static_cast<uint8_t>(in[b]) <= 0x20) ++b;
  while (e > b && static_cast<uint8_t>(in[e - 1]) <= 0x20) --e;
  in = in.substr(b, e - b);

  // Eight bytes at a time: any byte >= 0x80, and any byte < 0x20 (a possible tab/CR/LF).
  constexpr uint64_t kHigh = 0x8080808080808080ULL, kSpaces = 0x2020202020202020ULL;
  uint64_t high = 0, low = 0;
  size_t i = 0;
  for (; i + 8 <= in.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, in.data() + i, 8);
    high |= w;
    low |= (w - kSpaces) & ~w;
  }
  for (; i < in.size(); ++i) {
    const uint8_t c = static_cast<uint8_t>(in[i]);
    high |= c;
    low |= c < 0x20 ? 0x80 : 0;
  }
  *non_ascii = (high & kHigh) != 0;
  if ((low & kHigh) == 0) return in;
  scratch->clear();
  for (char c : in) {
    if (c != '\t' && c != '\r' && c != '\n') scratch->push_back(c);
  }
  return *scratch;
}

bool IsSlash(char c) { return c == '/' || c == '\\'; }  // WHATWG: '\' is '/' in http(s) URLs

enum class HostScan { kOk, kPunycode, kNeedsDecoding, kForbidden };

// Lowercases an ASCII host into the writer (which has room for it), checking every byte is
// allowed in a reg-name (RFC 3986 §3.2.2). That rejects the WHATWG forbidden domain code points
// and also the few characters WHATWG lets through but RFC 3986 does not (" ` { }), keeping the
// key a valid URI. Stops at '%' or a non-ASCII byte (kNeedsDecoding), and notes "xn--" labels.
HostScan PutAsciiHost(std::string_view host, KeyWriter* w) {
  char* d = w->data() + w->pos();
  size_t label = 0;
  bool punycode = false;
  for (size_t i = 0; i < host.size(); ++i) {
    const char c = host[i];
    const uint16_t f = url_chars::kTable[static_cast<uint8_t>(c)];
    if (!(f & url_chars::kHostLiteral)) {
      return (c == '%' || static_cast<uint8_t>(c) >= 0x80) ? HostScan::kNeedsDecoding
                                                           : HostScan::kForbidden;
    }
    d[i] = url_chars::kLower[static_cast<uint8_t>(c)];
    if (!(f & url_chars::kLabelMark)) continue;
    if (c == '.') {
      label = i + 1;
    } else if (c == '-' && i == label + 3 && d[label] == 'x' && d[label + 1] == 'n' &&
               d[label + 2] == '-') {
      punycode = true;
    }
  }
  w->set_pos(w->pos() + host.size());
  return punycode ? HostScan::kPunycode : HostScan::kOk;
}

// Writes an ASCII host from a slow path (decoded or IDNA output), which must be all allowed.
Status PutCheckedAsciiHost(std::string_view host, KeyWriter* w, bool* punycode) {
  w->Reserve(host.size());
  const HostScan scan = PutAsciiHost(host, w);
  if (scan == HostScan::kNeedsDecoding || scan == HostScan::kForbidden) {
    return InvalidUrl("forbidden host code point");
  }
  *punycode = scan == HostScan::kPunycode;
  return Status::Ok();
}

// WHATWG "host parser" for a special (http/https) URL, writing the canonical host.
Status PutHost(std::string_view host, const CanonicalizeOptions& options, KeyWriter* w) {
  if (host.front() == '[') {  // host.back() == ']' is guaranteed by the caller
    const std::optional<Ipv6Address> address = ParseIpv6(host.substr(1, host.size() - 2));
    if (!address) return InvalidUrl("invalid IPv6 address");
    w->Reserve(41);
    w->Put('[');
    char buf[40];
    w->Put(std::string_view(buf, FormatIpv6(*address, buf)));
    w->Put(']');
    return Status::Ok();
  }
  const size_t begin = w->pos();
  w->Reserve(host.size());
  HostScan scan = PutAsciiHost(host, w);  // the common case: no copies, no libidn2
  if (scan == HostScan::kForbidden) return InvalidUrl("forbidden host code point");
  bool punycode = scan == HostScan::kPunycode;
  if (scan == HostScan::kNeedsDecoding) {
    w->set_pos(begin);
    thread_local std::string decoded;
    decoded.clear();
    bool ascii = true;
    for (size_t i = 0; i < host.size(); ++i) {
      char c = host[i];
      if (c == '%' && i + 2 < host.size() && Is(host[i + 1], url_chars::kHexDigit) &&
          Is(host[i + 2], url_chars::kHexDigit)) {
        c = static_cast<char>(url_chars::HexValue(host[i + 1]) * 16 +
                              url_chars::HexValue(host[i + 2]));
        i += 2;
      }
      ascii = ascii && static_cast<uint8_t>(c) < 0x80;
      decoded.push_back(c);
    }
    if (ascii) {
      URLSIEVE_RETURN_IF_ERROR(PutCheckedAsciiHost(decoded, w, &punycode));
    } else {
      if (!url_chars::IsValidUtf8(decoded)) return InvalidUrl("invalid UTF-8 in host");
      thread_local std::string ascii_host;
      URLSIEVE_RETURN_IF_ERROR(DomainToAscii(decoded, &ascii_host, options.key_version));
      URLSIEVE_RETURN_IF_ERROR(PutCheckedAsciiHost(ascii_host, w, &punycode));
      punycode = false;  // libidn2's own output needs no second check
    }
  }
  if (punycode) {
    // An "xn--" label must hold valid punycode of a valid IDN (UTS #46 §4.1).
    thread_local std::string ascii_host;
    URLSIEVE_RETURN_IF_ERROR(
        DomainToAscii(w->View(begin, w->pos()), &ascii_host, options.key_version));
    w->set_pos(begin);
    URLSIEVE_RETURN_IF_ERROR(PutCheckedAsciiHost(ascii_host, w, &punycode));
  }
  std::string_view out = w->View(begin, w->pos());
  if (out.empty()) return InvalidUrl("empty host");
  if (EndsInIpv4Number(out)) {
    const std::optional<uint32_t> address = ParseIpv4(out);
    if (!address) return InvalidUrl("invalid IPv4 address");
    w->set_pos(begin);
    w->Reserve(15);
    w->set_pos(begin + FormatIpv4(*address, w->data() + begin));
    return Status::Ok();
  }
  if (options.strip_www) {
    // Every leading "www." goes, so that stripping once more (idempotence) changes nothing.
    size_t skip = 0;
    while (out.size() - skip > 4 && url_chars::EqualsLower(out.substr(skip, 4), "www.")) skip += 4;
    if (skip > 0) {
      std::memmove(w->data() + begin, w->data() + begin + skip, out.size() - skip);
      w->set_pos(w->pos() - skip);
    }
  }
  return Status::Ok();
}

// Writes the path starting at s[*i] (at a slash, or at the end of the hierarchical part),
// normalizing percent-encoding and removing dot segments (RFC 3986 §5.2.4, §6.2.2.3) as it goes.
// Because "%2E" is decoded to '.' before a segment is looked at, "%2e%2E" is a dot segment too,
// as in the WHATWG path state.
void PutPath(std::string_view s, size_t* pos, const CanonicalizeOptions& options, KeyWriter* w) {
  size_t i = *pos;
  const size_t n = s.size();
  const size_t root = w->pos();
  w->Put('/');  // RFC 3986 §6.2.3: an empty path is "/" for http(s)
  if (i < n && IsSlash(s[i])) ++i;
  for (;;) {
    const size_t segment = w->pos();
    i = w->PutComponent(s, i, url_chars::kPathLiteral, url_chars::kSegmentEnd);
    const bool last = !(i < n && IsSlash(s[i]));
    if (options.strip_session_ids) StripPathSessionIds(segment, w);
    const std::string_view text = w->View(segment, w->pos());
    if (text == ".") {
      w->set_pos(segment);
    } else if (text == "..") {
      w->set_pos(segment);
      if (segment - 1 > root) {  // drop the previous segment, keeping its leading '/'
        size_t k = segment - 1;
        while (w->data()[k - 1] != '/') --k;
        w->set_pos(k);
      }
    } else if (!last && !(options.collapse_slashes && text.empty())) {
      w->Put('/');
    }
    if (last) break;
    ++i;
  }
  *pos = i;
}

// RFC 3986 §3.1, §6.2.2.1: the scheme is case-insensitive; only http and https are crawled.
// Reads the scheme at the start of the cleaned URL `s`.
Status ReadScheme(std::string_view s, size_t* scheme_len, bool* https) {
  if (s.size() >= 8 && std::memcmp(s.data(), "https://", 8) == 0) {  // the usual spellings
    *scheme_len = 5;
    *https = true;
  } else if (s.size() >= 7 && std::memcmp(s.data(), "http://", 7) == 0) {
    *scheme_len = 4;
    *https = false;
  } else {
    *scheme_len = SchemeLength(s);
    if (*scheme_len == 0) return InvalidUrl("relative URL without a base");
    const std::string_view scheme = s.substr(0, *scheme_len);
    if (url_chars::EqualsLower(scheme, "http")) {
      *https = false;
    } else if (url_chars::EqualsLower(scheme, "https")) {
      *https = true;
    } else {
      return UnsupportedScheme(scheme);
    }
  }
  return Status::Ok();
}

// The host and port of an authority, as written.
struct Authority {
  std::string_view host;
  bool has_port = false;
  std::string_view port_text;
};

// Reads the authority starting at s[*i] (after the scheme's slashes); *i ends at the path, query
// or fragment that follows it.
Status ReadAuthority(std::string_view s, size_t* pos, Authority* authority) {
  size_t i = *pos;
  const size_t n = s.size();
  // Userinfo (RFC 3986 §3.2.1) is dropped from the key: the same resource fetched with other
  // credentials is still the same URL to a crawler, and keys land in state files and logs where
  // passwords must not. The last '@' ends it, as in the WHATWG authority state.
  size_t host_begin = i, colon = std::string_view::npos;
  for (; i < n; ++i) {
    const uint16_t f = url_chars::kTable[static_cast<uint8_t>(s[i])];
    if (!(f & (url_chars::kSegmentEnd | url_chars::kAuthorityMark))) continue;
    if (f & url_chars::kSegmentEnd) break;
    if (s[i] == '@') {
      host_begin = i + 1;
      colon = std::string_view::npos;
    } else if (colon == std::string_view::npos) {
      colon = i;
    }
  }
  *pos = i;
  std::string_view host = s.substr(host_begin, i - host_begin);
  if (!host.empty() && host[0] == '[') {
    const size_t close = host.find(']');
    if (close == std::string_view::npos) return InvalidUrl("invalid IPv6 address");
    if (close + 1 < host.size()) {
      if (host[close + 1] != ':') return InvalidUrl("invalid IPv6 address");
      authority->has_port = true;
      authority->port_text = host.substr(close + 2);
    }
    host = host.substr(0, close + 1);
  } else if (colon != std::string_view::npos) {
    authority->has_port = true;
    authority->port_text = s.substr(colon + 1, i - colon - 1);
    host = s.substr(host_begin, colon - host_begin);
  }
  if (host.empty()) return InvalidUrl("empty host");
  authority->host = host;
  return Status::Ok();
}

// RFC 3986 §3.2.3, §6.2.3: the port is decimal; the scheme's default port and an empty port
// are removed.
Status ReadPort(const Authority& authority, uint32_t default_port, uint32_t* port) {
  *port = default_port;
  if (authority.has_port && !authority.port_text.empty()) {
    *port = 0;
    for (char c : authority.port_text) {
      if (c < '0' || c > '9') return InvalidUrl("invalid port");
      *port = *port * 10 + static_cast<uint32_t>(c - '0');
      if (*port > 65535) return InvalidUrl("invalid port");
    }
  }
  return Status::Ok();
}

void PutPort(uint32_t port, KeyWriter* w) {
  char digits[5];
  size_t len = 0;
  for (uint32_t p = port; len == 0 || p > 0; p /= 10)
    digits[len++] = static_cast<char>('0' + p % 10);
  w->Put(':');
  while (len > 0) w->Put(digits[--len]);
}

// Writes the query starting at s[*pos] (at its '?'), if any, and applies the opt-in rules;
// *query_begin is the offset of its '?' in the key, or npos when the key has no query. The key's
// host is at [host_begin, host_end).
void PutQuery(std::string_view s, size_t* pos, const CanonicalizeOptions& options,
              size_t host_begin, size_t host_end, KeyWriter* w, size_t* query_begin) {
  size_t i = *pos;
  *query_begin = std::string::npos;
  if (i < s.size() && s[i] == '?') {
    const size_t question = w->pos();
    w->Put('?');
    // WHATWG URL Standard §4.4 query state: a browser percent-encodes the special-query
    // percent-encode set (§1.3), which holds '\'' besides what RFC 3986 already forbids; so "'"
    // and "%27" are one request. The characters a browser leaves literal but RFC 3986 §3.4 forbids
    // (" ` { } | ^ [ ] \") are encoded to keep the key a valid URI: a server reads both spellings
    // alike (§2.1).
    const uint16_t literal =
        options.key_version >= 2 ? url_chars::kSpecialQueryLiteral : url_chars::kQueryLiteral;
    i = w->PutComponent(s, i + 1, literal, url_chars::kQueryEnd);
    if (options.sort_query || options.strip_session_ids || options.strip_tracking_params ||
        options.drop_empty_query) {
      if (!ApplyQueryRules(question + 1, w->View(host_begin, host_end), options, w)) {
        w->set_pos(question);
      }
    }
    if (w->pos() > question) *query_begin = question;
  }
  *pos = i;
}

Status CanonicalizeImpl(std::string_view url, const CanonicalizeOptions& options, std::string* key,
                        KeyParts* parts) {
  if (url.size() > options.max_length) return UrlTooLong(url.size(), options.max_length);
  thread_local std::string cleaned;
  bool non_ascii = false;
  const std::string_view s = CleanInput(url, &cleaned, &non_ascii);
  if (s.empty()) return InvalidUrl("empty url");
  if (non_ascii && !url_chars::IsValidUtf8(s)) return InvalidUrl("invalid UTF-8");
  size_t scheme_len = 0;
  bool https = false;
  URLSIEVE_RETURN_IF_ERROR(ReadScheme(s, &scheme_len, &https));

  // WHATWG "special authority ignore slashes": "http:/a", "http:\\a" and "http:a" all name a.
  size_t i = scheme_len + 1;
  const size_t n = s.size();
  while (i < n && IsSlash(s[i])) ++i;
  Authority authority;
  URLSIEVE_RETURN_IF_ERROR(ReadAuthority(s, &i, &authority));
  const uint32_t default_port = https ? 443 : 80;
  uint32_t port = default_port;
  URLSIEVE_RETURN_IF_ERROR(ReadPort(authority, default_port, &port));

  KeyWriter w(key);
  w.Reserve(3 * n + 16);
  w.Put(https ? std::string_view("https://") : std::string_view("http://"));
  parts->scheme_end = https ? 5 : 4;
  parts->host_begin = w.pos();
  URLSIEVE_RETURN_IF_ERROR(PutHost(authority.host, options, &w));
  parts->host_end = w.pos();
  w.Reserve(6 + 3 * (n - i) + 2);
  if (port != default_port) PutPort(port, &w);
  parts->port = static_cast<uint16_t>(port);
  parts->path_begin = w.pos();
  PutPath(s, &i, options, &w);
  PutQuery(s, &i, options, parts->host_begin, parts->host_end, &w, &parts->query_begin);
  // RFC 3986 §3.5: the fragment never reaches the server, so it is not part of the key.
  key->resize(w.pos());
  if (parts->query_begin == std::string::npos) parts->query_begin = key->size();
  if (key->size() > options.max_length) return UrlTooLong(key->size(), options.max_length);
  return Status::Ok();
}

}  // namespace

UrlCanonicalizer::UrlCanonicalizer(CanonicalizeOptions options) : options_(std::move(options)) {
  // Lowercase, so that a lookup compares bytes; sorted, so that options() says what a state
  // stores.
  options_.tracking_exceptions = NormalizeTrackingExceptions(options_.tracking_exceptions);
}

Status UrlCanonicalizer::CanonicalizeTo(std::string_view url, std::string* key) const {
  KeyParts parts;
  return CanonicalizeImpl(url, options_, key, &parts);
}

Result<CanonicalUrl> UrlCanonicalizer::Canonicalize(std::string_view url) const {
  CanonicalUrl result;
  KeyParts parts;
  URLSIEVE_RETURN_IF_ERROR(CanonicalizeImpl(url, options_, &result.key_, &parts));
  result.scheme_end_ = static_cast<uint32_t>(parts.scheme_end);
  result.host_begin_ = static_cast<uint32_t>(parts.host_begin);
  result.host_end_ = static_cast<uint32_t>(parts.host_end);
  result.path_begin_ = static_cast<uint32_t>(parts.path_begin);
  result.query_begin_ = static_cast<uint32_t>(parts.query_begin);
  result.port_ = parts.port;
  return result;
}

}  // namespace urlsieve
