#include "url/url_canonicalizer.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "base/encoding/text_encoder.h"
#include "url/idna_host.h"
#include "url/ipv4_host.h"
#include "url/ipv6_host.h"
#include "url/url_chars.h"

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

constexpr std::string_view kSessionIdNames[] = {"jsessionid",   "phpsessid", "sid",
                                                "aspsessionid", "cfid",      "cftoken"};

Status Invalid(std::string reason) { return Status::InvalidArgument(std::move(reason)); }

Status TooLong(size_t size, size_t max) {
  return Invalid("url too long (" + std::to_string(size) + " > " + std::to_string(max) + " bytes)");
}

Status UnsupportedScheme(std::string_view scheme) {
  std::string lower;
  for (char c : scheme.substr(0, 32)) lower += url_chars::ToLower(c);
  return Invalid("unsupported scheme '" + lower + "'");
}

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

// Matches RFC 3986 §3.1 scheme ":" at the start of `s`; returns the scheme length or 0.
size_t SchemeLength(std::string_view s) {
  if (s.empty() || !((s[0] | 0x20) >= 'a' && (s[0] | 0x20) <= 'z')) return 0;
  size_t i = 1;
  while (i < s.size() && Is(s[i], url_chars::kSchemeChar)) ++i;
  return (i < s.size() && s[i] == ':') ? i : 0;
}

bool IsSlash(char c) { return c == '/' || c == '\\'; }  // WHATWG: '\' is '/' in http(s) URLs

// Writes into a std::string through a raw pointer. The caller reserves room for the worst case
// (every input byte becoming "%XX") so the inner loops carry no capacity checks.
class KeyWriter {
 public:
  explicit KeyWriter(std::string* key) : key_(key) {}
  void Reserve(size_t extra) {
    if (pos_ + extra > key_->size()) key_->resize(std::max(pos_ + extra, 2 * key_->size()));
    d_ = key_->data();
  }
  void Put(char c) { d_[pos_++] = c; }
  void Put(std::string_view s) {
    std::memcpy(d_ + pos_, s.data(), s.size());
    pos_ += s.size();
  }

  // The inner loop of the path and the query: copies s[i..] up to the first byte flagged `end`,
  // keeping bytes flagged `literal`, normalizing percent-encoding (RFC 3986 §6.2.2.1-2: a triplet
  // naming an unreserved character is decoded, any other gets uppercase hex, a '%' starting no
  // triplet becomes "%25") and encoding every other byte, UTF-8 included (§2.1, §2.5).
  // Returns the index of the end byte, or s.size(). Works on locals: stores through a char*
  // could alias the members, which would force a reload per byte.
  size_t PutComponent(std::string_view s, size_t i, uint16_t literal, uint16_t end) {
    const char* p = s.data();
    const size_t n = s.size();
    char* d = d_;
    size_t o = pos_;
    while (i < n) {
      const char c = p[i];
      const uint16_t f = url_chars::kTable[static_cast<uint8_t>(c)];
      if (f & literal) {
        d[o++] = c;
        ++i;
        continue;
      }
      if (f & end) break;
      uint8_t byte = static_cast<uint8_t>(c);
      ++i;
      if (c == '%') {
        if (i + 1 < n && Is(p[i], url_chars::kHexDigit) && Is(p[i + 1], url_chars::kHexDigit)) {
          byte =
              static_cast<uint8_t>(url_chars::HexValue(p[i]) * 16 + url_chars::HexValue(p[i + 1]));
          i += 2;
          if (Is(static_cast<char>(byte), url_chars::kUnreserved)) {
            d[o++] = static_cast<char>(byte);
            continue;
          }
        }
      }
      d[o] = '%';
      d[o + 1] = url_chars::kUpperHex[byte >> 4];
      d[o + 2] = url_chars::kUpperHex[byte & 15];
      o += 3;
    }
    pos_ = o;
    return i;
  }

  size_t pos() const { return pos_; }
  void set_pos(size_t p) { pos_ = p; }
  char* data() { return d_; }
  std::string_view View(size_t b, size_t e) const { return std::string_view(d_ + b, e - b); }

 private:
  std::string* key_;
  char* d_ = nullptr;
  size_t pos_ = 0;
};

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
    return Invalid("forbidden host code point");
  }
  *punycode = scan == HostScan::kPunycode;
  return Status::Ok();
}

// WHATWG "host parser" for a special (http/https) URL, writing the canonical host.
Status PutHost(std::string_view host, const CanonicalizeOptions& options, KeyWriter* w) {
  if (host.front() == '[') {  // host.back() == ']' is guaranteed by the caller
    const std::optional<Ipv6Address> address = ParseIpv6(host.substr(1, host.size() - 2));
    if (!address) return Invalid("invalid IPv6 address");
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
  if (scan == HostScan::kForbidden) return Invalid("forbidden host code point");
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
      if (!url_chars::IsValidUtf8(decoded)) return Invalid("invalid UTF-8 in host");
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
  if (out.empty()) return Invalid("empty host");
  if (EndsInIpv4Number(out)) {
    const std::optional<uint32_t> address = ParseIpv4(out);
    if (!address) return Invalid("invalid IPv4 address");
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

// Removes ";jsessionid=..." path parameters (up to the next ';' or the segment end) from the
// segment written at [begin, w->pos()).
void StripPathSessionIds(size_t begin, KeyWriter* w) {
  constexpr std::string_view kParam = ";jsessionid=";
  size_t i = begin;
  while (i + kParam.size() <= w->pos()) {
    if (w->data()[i] != ';' || !url_chars::EqualsLower(w->View(i, i + kParam.size()), kParam)) {
      ++i;
      continue;
    }
    size_t end = i + 1;
    while (end < w->pos() && w->data()[end] != ';') ++end;
    std::memmove(w->data() + i, w->data() + end, w->pos() - end);
    w->set_pos(w->pos() - (end - i));
  }
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

bool IsSessionIdParam(std::string_view param) {
  const std::string_view name = param.substr(0, param.find('='));
  for (std::string_view id : kSessionIdNames) {
    if (url_chars::EqualsLower(name, id)) return true;
  }
  return false;
}

// The opt-in query rules on the query written at [begin, w->pos()) (without the '?'). Returns
// false when the '?' should go as well.
bool ApplyQueryRules(size_t begin, const CanonicalizeOptions& options, KeyWriter* w) {
  const size_t end = w->pos();
  if (options.strip_session_ids || options.sort_query) {
    thread_local std::vector<std::string_view> params;
    thread_local std::string joined;
    params.clear();
    const std::string_view query = w->View(begin, end);
    size_t b = 0;
    for (;;) {
      const size_t amp = query.find('&', b);
      params.push_back(query.substr(b, amp == std::string_view::npos ? amp : amp - b));
      if (amp == std::string_view::npos) break;
      b = amp + 1;
    }
    if (options.strip_session_ids) {
      params.erase(std::remove_if(params.begin(), params.end(), IsSessionIdParam), params.end());
      if (params.empty()) return false;  // the query carried nothing but session ids
    }
    if (options.sort_query) {
      // Empty parameters ("a=1&&b=2", a trailing '&') say nothing; once the order is gone, neither
      // does their position.
      params.erase(std::remove(params.begin(), params.end(), std::string_view()), params.end());
      auto name = [](std::string_view param) { return param.substr(0, param.find('=')); };
      auto by_name = [&](std::string_view x, std::string_view y) { return name(x) < name(y); };
      if (params.size() > 32) {
        std::stable_sort(params.begin(), params.end(), by_name);
      } else {  // insertion sort: stable, allocation-free, fastest for a handful of parameters
        for (size_t k = 1; k < params.size(); ++k) {
          const std::string_view param = params[k];
          size_t j = k;
          for (; j > 0 && by_name(param, params[j - 1]); --j) params[j] = params[j - 1];
          params[j] = param;
        }
      }
    }
    joined.clear();
    for (size_t k = 0; k < params.size(); ++k) {
      if (k > 0) joined.push_back('&');
      joined.append(params[k]);
    }
    w->set_pos(begin);
    w->Put(joined);
  }
  return !(options.drop_empty_query && w->pos() == begin);
}

Status CanonicalizeImpl(std::string_view url, const CanonicalizeOptions& options, std::string* key,
                        KeyParts* parts) {
  if (url.size() > options.max_length) return TooLong(url.size(), options.max_length);
  thread_local std::string cleaned;
  bool non_ascii = false;
  const std::string_view s = CleanInput(url, &cleaned, &non_ascii);
  if (s.empty()) return Invalid("empty url");
  if (non_ascii && !url_chars::IsValidUtf8(s)) return Invalid("invalid UTF-8");

  // RFC 3986 §3.1, §6.2.2.1: the scheme is case-insensitive; only http and https are crawled.
  size_t scheme_len;
  bool https;
  if (s.size() >= 8 && std::memcmp(s.data(), "https://", 8) == 0) {  // the usual spellings
    scheme_len = 5;
    https = true;
  } else if (s.size() >= 7 && std::memcmp(s.data(), "http://", 7) == 0) {
    scheme_len = 4;
    https = false;
  } else {
    scheme_len = SchemeLength(s);
    if (scheme_len == 0) return Invalid("relative URL without a base");
    const std::string_view scheme = s.substr(0, scheme_len);
    if (url_chars::EqualsLower(scheme, "http")) {
      https = false;
    } else if (url_chars::EqualsLower(scheme, "https")) {
      https = true;
    } else {
      return UnsupportedScheme(scheme);
    }
  }

  // WHATWG "special authority ignore slashes": "http:/a", "http:\\a" and "http:a" all name a.
  size_t i = scheme_len + 1;
  const size_t n = s.size();
  while (i < n && IsSlash(s[i])) ++i;
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
  std::string_view host = s.substr(host_begin, i - host_begin), port_text;
  bool has_port = false;
  if (!host.empty() && host[0] == '[') {
    const size_t close = host.find(']');
    if (close == std::string_view::npos) return Invalid("invalid IPv6 address");
    if (close + 1 < host.size()) {
      if (host[close + 1] != ':') return Invalid("invalid IPv6 address");
      has_port = true;
      port_text = host.substr(close + 2);
    }
    host = host.substr(0, close + 1);
  } else if (colon != std::string_view::npos) {
    has_port = true;
    port_text = s.substr(colon + 1, i - colon - 1);
    host = s.substr(host_begin, colon - host_begin);
  }
  if (host.empty()) return Invalid("empty host");

  // RFC 3986 §3.2.3, §6.2.3: the port is decimal; the scheme's default port and an empty port
  // are removed.
  const uint32_t default_port = https ? 443 : 80;
  uint32_t port = default_port;
  if (has_port && !port_text.empty()) {
    port = 0;
    for (char c : port_text) {
      if (c < '0' || c > '9') return Invalid("invalid port");
      port = port * 10 + static_cast<uint32_t>(c - '0');
      if (port > 65535) return Invalid("invalid port");
    }
  }

  KeyWriter w(key);
  w.Reserve(3 * n + 16);
  w.Put(https ? std::string_view("https://") : std::string_view("http://"));
  parts->scheme_end = https ? 5 : 4;
  parts->host_begin = w.pos();
  URLSIEVE_RETURN_IF_ERROR(PutHost(host, options, &w));
  parts->host_end = w.pos();
  w.Reserve(6 + 3 * (n - i) + 2);
  if (port != default_port) {
    char digits[5];
    size_t len = 0;
    for (uint32_t p = port; len == 0 || p > 0; p /= 10)
      digits[len++] = static_cast<char>('0' + p % 10);
    w.Put(':');
    while (len > 0) w.Put(digits[--len]);
  }
  parts->port = static_cast<uint16_t>(port);
  parts->path_begin = w.pos();

  PutPath(s, &i, options, &w);

  parts->query_begin = std::string::npos;
  if (i < n && s[i] == '?') {
    const size_t question = w.pos();
    w.Put('?');
    // WHATWG URL Standard §4.4 query state: a browser percent-encodes the special-query
    // percent-encode set (§1.3), which holds '\'' besides what RFC 3986 already forbids; so "'"
    // and "%27" are one request. The characters a browser leaves literal but RFC 3986 §3.4 forbids
    // (" ` { } | ^ [ ] \") are encoded to keep the key a valid URI: a server reads both spellings
    // alike (§2.1).
    const uint16_t literal =
        options.key_version >= 2 ? url_chars::kSpecialQueryLiteral : url_chars::kQueryLiteral;
    i = w.PutComponent(s, i + 1, literal, url_chars::kQueryEnd);
    if (options.sort_query || options.strip_session_ids || options.drop_empty_query) {
      if (!ApplyQueryRules(question + 1, options, &w)) w.set_pos(question);
    }
    if (w.pos() > question) parts->query_begin = question;
  }
  // RFC 3986 §3.5: the fragment never reaches the server, so it is not part of the key.
  key->resize(w.pos());
  if (parts->query_begin == std::string::npos) parts->query_begin = key->size();
  if (key->size() > options.max_length) return TooLong(key->size(), options.max_length);
  return Status::Ok();
}

// ---- Resolve (RFC 3986 §5.2) ----

// One URL or relative reference split as RFC 3986 §5.2.2 needs it.
struct Reference {
  std::string_view scheme;  // empty when the reference has none
  bool has_authority = false;
  std::string_view authority;
  std::string_view path;
  bool has_query = false;
  std::string_view query;
};

// Trims and drops tab/CR/LF like CleanInput, and turns '\' into '/' before the query (WHATWG: in
// http(s) URLs a backslash is a path separator). Copies into *scratch only when needed.
std::string_view PrepareHttpText(std::string_view in, std::string* scratch) {
  size_t b = 0, e = in.size();
  while (b < e && static_cast<uint8_t>(in[b]) <= 0x20) ++b;
  while (e > b && static_cast<uint8_t>(in[e - 1]) <= 0x20) --e;
  in = in.substr(b, e - b);
  bool copy = false;  // one pass, no find_first_of: that is a memchr per byte per character
  for (size_t i = 0, query = in.size(); i < in.size() && !copy; ++i) {
    const char c = in[i];
    if (c == '?' || c == '#') query = i;
    copy = c == '\t' || c == '\r' || c == '\n' || (c == '\\' && i < query);
  }
  if (!copy) return in;
  scratch->clear();
  bool in_hier = true;
  for (char c : in) {
    if (c == '\t' || c == '\r' || c == '\n') continue;
    if (c == '?' || c == '#') in_hier = false;
    scratch->push_back(in_hier && c == '\\' ? '/' : c);
  }
  return *scratch;
}

// Splits what follows "scheme:" (or a whole relative reference). With `authority`, leading
// slashes are skipped and the authority runs to the next '/', '?' or '#' (RFC 3986 §3.2, with the
// WHATWG leniency for any number of slashes in http(s) URLs).
Reference Split(std::string_view s, bool authority) {
  Reference r;
  size_t i = 0;
  const size_t n = s.size();
  if (authority) {
    while (i < n && s[i] == '/') ++i;
    const size_t b = i;
    while (i < n && s[i] != '/' && s[i] != '?' && s[i] != '#') ++i;
    r.has_authority = true;
    r.authority = s.substr(b, i - b);
  }
  const size_t path_begin = i;
  while (i < n && s[i] != '?' && s[i] != '#') ++i;
  r.path = s.substr(path_begin, i - path_begin);
  if (i < n && s[i] == '?') {
    const size_t b = ++i;
    while (i < n && s[i] != '#') ++i;
    r.has_query = true;
    r.query = s.substr(b, i - b);
  }
  return r;  // RFC 3986 §5.2.2: the fragment is never part of the URL to fetch
}

// Appends `text`, percent-encoding only bytes that may not appear literally (RFC 3986 §2.1); an
// existing '%' is kept, so nothing already encoded changes meaning.
void AppendMinimallyEncoded(std::string_view text, uint16_t literal, std::string* out) {
  size_t i = 0;
  for (;;) {
    size_t run = i;
    while (run < text.size() && (Is(text[run], literal) || text[run] == '%')) ++run;
    out->append(text.data() + i, run - i);
    if (run == text.size()) return;
    const auto byte = static_cast<uint8_t>(text[run]);
    const char encoded[3] = {'%', url_chars::kUpperHex[byte >> 4], url_chars::kUpperHex[byte & 15]};
    out->append(encoded, 3);
    i = run + 1;
  }
}

// Percent-encodes what a TextEncoder writes for a query (WHATWG URL Standard §1.3 "percent-encode
// after encoding"): bytes outside `literal` as "%XX", a code point the encoding lacks as
// "%26%23N%3B" (N decimal). A '%' the encoder writes (ISO-2022-JP can) is a byte of the text, so it
// becomes "%25", never the start of a triplet.
class QueryBytesSink final : public TextEncoder::Sink {
 public:
  QueryBytesSink(uint16_t literal, std::string* out) : literal_(literal), out_(out) {}
  void Bytes(std::string_view bytes) override {
    for (char c : bytes) {
      const auto byte = static_cast<uint8_t>(c);
      if (byte < 0x80 && Is(c, literal_)) {
        out_->push_back(c);
      } else {
        const char encoded[3] = {'%', url_chars::kUpperHex[byte >> 4],
                                 url_chars::kUpperHex[byte & 15]};
        out_->append(encoded, 3);
      }
    }
  }
  void Unmappable(char32_t code_point) override {
    out_->append("%26%23");
    out_->append(std::to_string(static_cast<uint32_t>(code_point)));
    out_->append("%3B");
  }

 private:
  uint16_t literal_;
  std::string* out_;
};

bool HasNonAscii(std::string_view text) {
  for (char c : text) {
    if (static_cast<uint8_t>(c) >= 0x80) return true;
  }
  return false;
}

// Appends a reference's query as a browser sends it from a document in `encoding` (an output
// encoding other than UTF-8): ASCII as AppendMinimallyEncoded writes it (so "%XX" stays as
// written), each run of non-ASCII encoded in `encoding` and percent-encoded
// (docs/features/canonicalization.md, "Queries in the document's encoding"). Runs are encoded one
// by one, each ending in the encoder's initial state: for ISO-2022-JP that may put an "ESC ( B"
// earlier than a browser would (before ASCII after a "¥"), bytes that decode to the same text.
Status AppendQueryInEncoding(std::string_view query, uint16_t literal, const TextEncoding& encoding,
                             std::string* out) {
  Result<TextEncoder*> encoder = ThreadEncoder(encoding);
  if (!encoder.ok()) return encoder.status();
  QueryBytesSink sink(literal, out);
  size_t i = 0;
  while (i < query.size()) {
    size_t run = i;
    while (run < query.size() && static_cast<uint8_t>(query[run]) < 0x80) ++run;
    AppendMinimallyEncoded(query.substr(i, run - i), literal, out);
    if (run == query.size()) break;
    i = run;
    while (i < query.size() && static_cast<uint8_t>(query[i]) >= 0x80) ++i;
    URLSIEVE_RETURN_IF_ERROR((*encoder)->Encode(query.substr(run, i - run), &sink));
  }
  return Status::Ok();
}

// RFC 3986 §5.2.4 remove_dot_segments for an absolute path (or an empty one), appended to *out.
void AppendWithoutDotSegments(std::string_view path, std::string* out) {
  if (path.empty()) return;
  const size_t root = out->size();
  out->push_back('/');
  size_t i = path[0] == '/' ? 1 : 0;
  for (;;) {
    const size_t slash = path.find('/', i);
    const bool last = slash == std::string_view::npos;
    const std::string_view segment = path.substr(i, last ? std::string_view::npos : slash - i);
    if (segment == "..") {
      if (out->size() - 1 > root) out->resize(out->rfind('/', out->size() - 2) + 1);
    } else if (segment != ".") {
      AppendMinimallyEncoded(segment, url_chars::kPathLiteral, out);
      if (!last) out->push_back('/');
    }
    if (last) break;
    i = slash + 1;
  }
}

}  // namespace

UrlCanonicalizer::UrlCanonicalizer(CanonicalizeOptions options) : options_(options) {}

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

Result<std::string> UrlCanonicalizer::Resolve(std::string_view base, std::string_view reference,
                                              const TextEncoding* document_encoding) const {
  const size_t max = options_.max_length;
  if (base.size() > max) return TooLong(base.size(), max);
  if (reference.size() > max) return TooLong(reference.size(), max);
  thread_local std::string base_text, ref_text;
  const std::string_view b = PrepareHttpText(base, &base_text);
  const size_t base_scheme_len = SchemeLength(b);
  if (base_scheme_len == 0) return Invalid("base is not an absolute URL");
  const std::string_view base_scheme = b.substr(0, base_scheme_len);
  const bool base_https = url_chars::EqualsLower(base_scheme, "https");
  if (!base_https && !url_chars::EqualsLower(base_scheme, "http")) {
    return UnsupportedScheme(base_scheme);
  }
  const Reference B = Split(b.substr(base_scheme_len + 1), true);
  if (B.authority.empty()) return Invalid("empty host");

  const std::string_view r = PrepareHttpText(reference, &ref_text);
  Reference R;
  bool https = base_https;
  const size_t scheme_len = SchemeLength(r);
  if (scheme_len > 0) {
    const std::string_view scheme = r.substr(0, scheme_len);
    const bool ref_https = url_chars::EqualsLower(scheme, "https");
    if (!ref_https && !url_chars::EqualsLower(scheme, "http")) return UnsupportedScheme(scheme);
    const std::string_view rest = r.substr(scheme_len + 1);
    if (ref_https == base_https && rest.substr(0, 2) != "//") {
      // RFC 3986 §5.2.2 and §5.4.2 allow, and WHATWG requires, reading "http:g" against an http
      // base as the relative reference "g" (the backward-compatible, non-strict parser).
      R = Split(rest, false);
    } else {
      R = Split(rest, true);
      https = ref_https;
    }
  } else {
    R = Split(r, r.substr(0, 2) == "//");
  }

  // RFC 3986 §5.2.2, transform references (the scheme is always known here).
  std::string out(https ? "https://" : "http://");
  out.reserve(b.size() + r.size() + 8);
  const Reference* query_from = &R;
  if (R.has_authority) {
    out.append(R.authority);
    AppendWithoutDotSegments(R.path, &out);
  } else {
    out.append(B.authority);
    if (R.path.empty()) {
      AppendMinimallyEncoded(B.path, url_chars::kQueryLiteral, &out);  // '/' is literal here
      if (!R.has_query) query_from = &B;
    } else if (R.path[0] == '/') {
      AppendWithoutDotSegments(R.path, &out);
    } else {
      // §5.2.3 merge: the base path up to its last '/', or "/" for a base with an empty path.
      thread_local std::string merged;
      const size_t slash = B.path.rfind('/');
      merged.assign(slash == std::string_view::npos ? std::string_view("/")
                                                    : B.path.substr(0, slash + 1));
      merged.append(R.path);
      AppendWithoutDotSegments(merged, &out);
    }
  }
  if (query_from->has_query) {
    out.push_back('?');
    // The query as a browser sends it (see CanonicalizeImpl): '\'' encoded, from key version 2.
    const uint16_t literal =
        options_.key_version >= 2 ? url_chars::kSpecialQueryLiteral : url_chars::kQueryLiteral;
    // WHATWG URL Standard §4.4, query state: the reference's query is encoded in the document's
    // output encoding (Encoding Standard §4.3); a query taken from the base is already a URL's.
    const TextEncoding* query_encoding =
        document_encoding != nullptr ? &OutputEncoding(*document_encoding) : nullptr;
    if (query_from == &R && query_encoding != nullptr &&
        query_encoding->name != Utf8Encoding().name && HasNonAscii(R.query)) {
      URLSIEVE_RETURN_IF_ERROR(AppendQueryInEncoding(R.query, literal, *query_encoding, &out));
    } else {
      AppendMinimallyEncoded(query_from->query, literal, &out);
    }
  }
  if (out.size() > max) return TooLong(out.size(), max);
  return out;
}

}  // namespace urlsieve
