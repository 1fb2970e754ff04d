// UrlCanonicalizer::Resolve: RFC 3986 §5 reference resolution for http(s), with the WHATWG
// leniencies a browser applies to links and the document-encoding rule for queries (the WHATWG
// URL Standard's query state; docs/features/canonicalization.md, "Queries in the document's
// encoding").
#include <cstdint>
#include <string>
#include <string_view>

#include "base/encoding/text_encoder.h"
#include "base/encoding/text_encoding.h"
#include "url/url_canonicalizer.h"
#include "url/url_chars.h"
#include "url/url_syntax.h"

namespace urlsieve {
namespace {

using url_chars::Is;

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

// Splits the prepared reference `r`, reading its scheme if it has one (http or https, else
// UnsupportedScheme); *https becomes the target's scheme when the reference names another.
Status SplitReference(std::string_view r, bool base_https, Reference* R, bool* https) {
  const size_t scheme_len = SchemeLength(r);
  if (scheme_len == 0) {
    *R = Split(r, r.substr(0, 2) == "//");
    return Status::Ok();
  }
  const std::string_view scheme = r.substr(0, scheme_len);
  const bool ref_https = url_chars::EqualsLower(scheme, "https");
  if (!ref_https && !url_chars::EqualsLower(scheme, "http")) return UnsupportedScheme(scheme);
  const std::string_view rest = r.substr(scheme_len + 1);
  if (ref_https == base_https && rest.substr(0, 2) != "//") {
    // RFC 3986 §5.2.2 and §5.4.2 allow, and WHATWG requires, reading "http:g" against an http
    // base as the relative reference "g" (the backward-compatible, non-strict parser).
    *R = Split(rest, false);
  } else {
    *R = Split(rest, true);
    *https = ref_https;
  }
  return Status::Ok();
}

// RFC 3986 §5.2.2: appends the target's authority and path (from reference R against base B);
// returns the one whose query the target takes.
const Reference* AppendTargetAuthorityAndPath(const Reference& B, const Reference& R,
                                              std::string* out) {
  if (R.has_authority) {
    out->append(R.authority);
    AppendWithoutDotSegments(R.path, out);
    return &R;
  }
  out->append(B.authority);
  if (R.path.empty()) {
    AppendMinimallyEncoded(B.path, url_chars::kQueryLiteral, out);  // '/' is literal here
    return R.has_query ? &R : &B;
  }
  if (R.path[0] == '/') {
    AppendWithoutDotSegments(R.path, out);
  } else {
    // §5.2.3 merge: the base path up to its last '/', or "/" for a base with an empty path.
    thread_local std::string merged;
    const size_t slash = B.path.rfind('/');
    merged.assign(slash == std::string_view::npos ? std::string_view("/")
                                                  : B.path.substr(0, slash + 1));
    merged.append(R.path);
    AppendWithoutDotSegments(merged, out);
  }
  return &R;
}

}  // namespace

Result<std::string> UrlCanonicalizer::Resolve(std::string_view base, std::string_view reference,
                                              const TextEncoding* document_encoding) const {
  const size_t max = options_.max_length;
  if (base.size() > max) return UrlTooLong(base.size(), max);
  if (reference.size() > max) return UrlTooLong(reference.size(), max);
  thread_local std::string base_text, ref_text;
  const std::string_view b = PrepareHttpText(base, &base_text);
  const size_t base_scheme_len = SchemeLength(b);
  if (base_scheme_len == 0) return InvalidUrl("base is not an absolute URL");
  const std::string_view base_scheme = b.substr(0, base_scheme_len);
  const bool base_https = url_chars::EqualsLower(base_scheme, "https");
  if (!base_https && !url_chars::EqualsLower(base_scheme, "http")) {
    return UnsupportedScheme(base_scheme);
  }
  const Reference B = Split(b.substr(base_scheme_len + 1), true);
  if (B.authority.empty()) return InvalidUrl("empty host");

  const std::string_view r = PrepareHttpText(reference, &ref_text);
  Reference R;
  bool https = base_https;
  URLSIEVE_RETURN_IF_ERROR(SplitReference(r, base_https, &R, &https));

  // RFC 3986 §5.2.2, transform references (the scheme is always known here).
  std::string out(https ? "https://" : "http://");
  out.reserve(b.size() + r.size() + 8);
  const Reference* query_from = AppendTargetAuthorityAndPath(B, R, &out);
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
  if (out.size() > max) return UrlTooLong(out.size(), max);
  return out;
}

}  // namespace urlsieve
