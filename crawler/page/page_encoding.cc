#include "crawler/page/page_encoding.h"

#include <algorithm>
#include <string>
#include <vector>

#include "base/strings.h"

namespace urlsieve {
namespace {

bool IsHttpWhitespace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// ASCII whitespace as the prescan and the meta content algorithm use it (Infra: TAB, LF, FF,
// CR, SPACE).
bool IsAsciiWhitespace(char c) { return IsHttpWhitespace(c) || c == '\f'; }

bool IsAsciiAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// MIME Sniffing §2 / Fetch: an HTTP token code point.
bool IsTokenChar(char c) {
  if (IsAsciiAlpha(c) || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsTokenChar(c)) return false;
  }
  return true;
}

// HTTP quoted-string token code points: TAB, 0x20-0x7E, 0x80-0xFF.
bool IsQuotedStringText(std::string_view s) {
  for (char c : s) {
    const auto b = static_cast<unsigned char>(c);
    if (b != '\t' && (b < 0x20 || b == 0x7F)) return false;
  }
  return true;
}

// Fetch "collect an HTTP quoted string" with extract-value true; `pos` is at the opening quote.
std::string CollectQuotedString(std::string_view s, size_t* pos) {
  std::string value;
  ++*pos;
  while (*pos < s.size()) {
    const char c = s[*pos];
    ++*pos;
    if (c == '"') break;
    if (c == '\\') {
      if (*pos >= s.size()) {
        value += '\\';
        break;
      }
      value += s[*pos];
      ++*pos;
    } else {
      value += c;
    }
  }
  return value;
}

// The prescan's meta rule: UTF-16 in a <meta> means UTF-8 (the bytes were read as ASCII, so the
// page is not UTF-16) and x-user-defined means windows-1252 (§13.2.3.2, "Processing").
const TextEncoding* MetaEncoding(const TextEncoding* encoding) {
  if (encoding == nullptr) return nullptr;
  if (encoding == &Utf16BeEncoding() || encoding == &Utf16LeEncoding()) return &Utf8Encoding();
  if (encoding == &XUserDefinedEncoding()) return &Windows1252Encoding();
  return encoding;
}

// The state of the prescan over the bytes it reads; running past them ends it (§13.2.3.2: the
// end condition ends every step, and no encoding is found).
class Prescan {
 public:
  explicit Prescan(std::string_view bytes) : b_(bytes) {}

  const TextEncoding* Run();

 private:
  struct Attribute {
    std::string name;
    std::string value;
  };

  bool AtEnd() const { return pos_ >= b_.size(); }
  char At() const { return b_[pos_]; }
  bool LooksAt(std::string_view lower) const {
    return StartsWithIgnoreAsciiCase(b_.substr(pos_), lower);
  }
  // "get an attribute": false when there is none (a '>' or the end of the bytes).
  bool GetAttribute(Attribute* attribute);
  // The steps after "<meta" and a space or '/': the encoding it declares, or nullptr.
  const TextEncoding* Meta();
  // Advances to the first `c` at or after pos_; false at the end.
  bool SkipTo(char c) {
    const size_t found = b_.find(c, pos_);
    pos_ = found == std::string_view::npos ? b_.size() : found;
    return !AtEnd();
  }

  std::string_view b_;
  size_t pos_ = 0;
};

// §13.2.3.2 "get an attribute", step by step.
bool Prescan::GetAttribute(Attribute* attribute) {
  attribute->name.clear();
  attribute->value.clear();
  // 1. Skip whitespace and '/'.
  while (!AtEnd() && (IsAsciiWhitespace(At()) || At() == '/')) ++pos_;
  // 2. A '>' (or the end): no attribute.
  if (AtEnd() || At() == '>') return false;
  // 4. Attribute name: up to '=' (once it is not empty), whitespace, '/' or '>', lowercased.
  bool at_value = false;
  for (;; ++pos_) {
    if (AtEnd()) return false;
    const char c = At();
    if (c == '=' && !attribute->name.empty()) {
      ++pos_;
      at_value = true;
      break;
    }
    if (IsAsciiWhitespace(c)) break;
    if (c == '/' || c == '>') return true;  // a name without a value
    attribute->name += AsciiLower(c);
  }
  if (!at_value) {
    // 6. Spaces; 7. anything but '=' ends a name without a value; 8. past the '='.
    while (!AtEnd() && IsAsciiWhitespace(At())) ++pos_;
    if (AtEnd()) return false;
    if (At() != '=') return true;
    ++pos_;
  }
  // 9. Value: skip whitespace; 10. a quoted value, or one up to whitespace or '>'; lowercased.
  while (!AtEnd() && IsAsciiWhitespace(At())) ++pos_;
  if (AtEnd()) return false;
  if (At() == '"' || At() == '\'') {
    const char quote = At();
    for (++pos_; !AtEnd(); ++pos_) {
      if (At() == quote) {
        ++pos_;
        return true;
      }
      attribute->value += AsciiLower(At());
    }
    return false;
  }
  if (At() == '>') return true;  // an empty value
  for (; !AtEnd(); ++pos_) {
    if (IsAsciiWhitespace(At()) || At() == '>') return true;
    attribute->value += AsciiLower(At());
  }
  return false;
}

const TextEncoding* Prescan::Meta() {
  // §13.2.3.2, "<meta": the attribute list, got pragma, need pragma and charset.
  std::vector<std::string> names;  // the attribute list: only the first of a name counts
  bool got_pragma = false;
  enum class Need { kNull, kTrue, kFalse } need_pragma = Need::kNull;
  bool charset_set = false;  // charset is no longer null (it may be failure: nullptr)
  const TextEncoding* charset = nullptr;
  Attribute attribute;
  while (GetAttribute(&attribute)) {
    if (std::find(names.begin(), names.end(), attribute.name) != names.end()) continue;
    names.push_back(attribute.name);
    if (attribute.name == "http-equiv") {
      if (attribute.value == "content-type") got_pragma = true;
    } else if (attribute.name == "content") {
      const TextEncoding* found = EncodingFromMetaContent(attribute.value);
      if (found != nullptr && !charset_set) {
        charset = found;
        charset_set = true;
        need_pragma = Need::kTrue;
      }
    } else if (attribute.name == "charset") {
      charset = EncodingForLabel(attribute.value);
      charset_set = true;
      need_pragma = Need::kFalse;
    }
  }
  if (AtEnd()) return nullptr;  // ran out of bytes inside the tag
  // §13.2.3.2 "Processing".
  if (need_pragma == Need::kNull) return nullptr;
  if (need_pragma == Need::kTrue && !got_pragma) return nullptr;
  if (charset == nullptr) return nullptr;
  return MetaEncoding(charset);
}

const TextEncoding* Prescan::Run() {
  // §13.2.3.2 "prescan for UTF-16 XML declarations": "<?x" in UTF-16LE or BE is UTF-16.
  if (b_.substr(0, 6) == std::string_view("<\0?\0x\0", 6)) return &Utf16LeEncoding();
  if (b_.substr(0, 6) == std::string_view("\0<\0?\0x", 6)) return &Utf16BeEncoding();
  for (; pos_ < b_.size(); ++pos_) {
    if (LooksAt("<!--")) {
      // §13.2.3.2 "<!--": the comment ends at the first "-->" whose '>' comes after the "<!--"
      // ("<!-->" is one).
      const size_t end = b_.find("-->", pos_ + 2);
      if (end == std::string_view::npos) return nullptr;
      pos_ = end + 2;
    } else if (LooksAt("<meta") && pos_ + 5 < b_.size() &&
               (IsAsciiWhitespace(b_[pos_ + 5]) || b_[pos_ + 5] == '/')) {
      // §13.2.3.2 "<meta" followed by whitespace or '/'.
      pos_ += 5;
      const TextEncoding* found = Meta();
      if (found != nullptr) return found;
      if (AtEnd()) return nullptr;
      // The next byte after the tag's '>' (or where get-an-attribute stopped).
    } else if (pos_ + 1 < b_.size() && At() == '<' &&
               (IsAsciiAlpha(b_[pos_ + 1]) ||
                (b_[pos_ + 1] == '/' && pos_ + 2 < b_.size() && IsAsciiAlpha(b_[pos_ + 2])))) {
      // §13.2.3.2 "<", optionally "/", then a letter: another start or end tag. Its name is
      // skipped, then its attributes (a '>' inside a quoted value does not end it).
      while (!AtEnd() && !IsAsciiWhitespace(At()) && At() != '>') ++pos_;
      Attribute ignored;
      while (GetAttribute(&ignored)) {
      }
      if (AtEnd()) return nullptr;
    } else if (LooksAt("<!") || LooksAt("</") || LooksAt("<?")) {
      // §13.2.3.2 "<!", "</", "<?": skipped to the first '>' after the '<'.
      ++pos_;
      if (!SkipTo('>')) return nullptr;
    }
  }
  return nullptr;
}

}  // namespace

std::string_view EncodingSourceName(EncodingSource source) {
  switch (source) {
    case EncodingSource::kBom:
      return "bom";
    case EncodingSource::kHttp:
      return "http";
    case EncodingSource::kMeta:
      return "meta";
    case EncodingSource::kDefault:
      return "default";
  }
  return "default";
}

const TextEncoding* SniffBom(std::string_view bytes, size_t* bom_length) {
  if (bytes.substr(0, 3) == "\xEF\xBB\xBF") {
    *bom_length = 3;
    return &Utf8Encoding();
  }
  if (bytes.substr(0, 2) == "\xFE\xFF") {
    *bom_length = 2;
    return &Utf16BeEncoding();
  }
  if (bytes.substr(0, 2) == "\xFF\xFE") {
    *bom_length = 2;
    return &Utf16LeEncoding();
  }
  *bom_length = 0;
  return nullptr;
}

std::optional<std::string> ContentTypeCharset(std::string_view content_type) {
  // MIME Sniffing §4.4 "parse a MIME type", keeping only the charset parameter.
  while (!content_type.empty() && IsHttpWhitespace(content_type.front())) {
    content_type.remove_prefix(1);
  }
  while (!content_type.empty() && IsHttpWhitespace(content_type.back())) {
    content_type.remove_suffix(1);
  }
  const size_t slash = content_type.find('/');
  if (slash == std::string_view::npos || !IsToken(content_type.substr(0, slash))) {
    return std::nullopt;
  }
  size_t pos = content_type.find(';', slash + 1);
  std::string_view subtype = content_type.substr(slash + 1, pos - (slash + 1));
  while (!subtype.empty() && IsHttpWhitespace(subtype.back())) subtype.remove_suffix(1);
  if (!IsToken(subtype)) return std::nullopt;
  while (pos < content_type.size()) {
    ++pos;  // past ';'
    while (pos < content_type.size() && IsHttpWhitespace(content_type[pos])) ++pos;
    const size_t name_end = content_type.find_first_of(";=", pos);
    const std::string_view name = content_type.substr(pos, name_end - pos);
    pos = name_end;
    if (pos >= content_type.size()) break;
    if (content_type[pos] == ';') continue;
    ++pos;  // past '='
    std::string value;
    if (pos < content_type.size() && content_type[pos] == '"') {
      value = CollectQuotedString(content_type, &pos);
      pos = content_type.find(';', pos);  // the rest up to the next ';' is ignored
      if (pos == std::string_view::npos) pos = content_type.size();
    } else {
      const size_t value_start = pos;
      pos = content_type.find(';', pos);
      if (pos == std::string_view::npos) pos = content_type.size();
      std::string_view raw = content_type.substr(value_start, pos - value_start);
      while (!raw.empty() && IsHttpWhitespace(raw.back())) raw.remove_suffix(1);
      if (raw.empty()) continue;
      value = raw;
    }
    if (!IsToken(name) || !IsQuotedStringText(value)) continue;
    // The first charset parameter is the one (a later one is ignored).
    if (EqualsIgnoreAsciiCase(name, "charset")) return value;
  }
  return std::nullopt;
}

const TextEncoding* EncodingFromMetaContent(std::string_view s) {
  size_t pos = 0;
  for (;;) {
    // Loop: the first "charset" (ASCII case-insensitive) at or after pos.
    size_t found = std::string_view::npos;
    for (size_t i = pos; i + 7 <= s.size(); ++i) {
      if (StartsWithIgnoreAsciiCase(s.substr(i), "charset")) {
        found = i;
        break;
      }
    }
    if (found == std::string_view::npos) return nullptr;
    pos = found + 7;
    while (pos < s.size() && IsAsciiWhitespace(s[pos])) ++pos;
    if (pos >= s.size() || s[pos] != '=') continue;  // back to Loop from here
    ++pos;
    while (pos < s.size() && IsAsciiWhitespace(s[pos])) ++pos;
    if (pos >= s.size()) return nullptr;
    if (s[pos] == '"' || s[pos] == '\'') {
      const size_t close = s.find(s[pos], pos + 1);
      if (close == std::string_view::npos) return nullptr;  // an unmatched quote
      return EncodingForLabel(s.substr(pos + 1, close - pos - 1));
    }
    size_t end = pos;
    while (end < s.size() && !IsAsciiWhitespace(s[end]) && s[end] != ';') ++end;
    return EncodingForLabel(s.substr(pos, end - pos));
  }
}

const TextEncoding* PrescanForEncoding(std::string_view bytes) {
  // §13.2.3.2: a prescan that runs out of bytes (or reaches its end condition) without an answer
  // returns "get an XML encoding" applied to the same bytes.
  const TextEncoding* found = Prescan(bytes).Run();
  return found != nullptr ? found : XmlDeclarationEncoding(bytes);
}

bool IsXmlMediaType(std::string_view content_type) {
  std::string media;
  for (char c : content_type.substr(0, content_type.find(';'))) {
    if (!IsHttpWhitespace(c)) media += AsciiLower(c);
  }
  return media == "application/xhtml+xml" || media == "application/xml" || media == "text/xml" ||
         (media.size() > 4 && media.compare(media.size() - 4, 4, "+xml") == 0);
}

const TextEncoding* XmlDeclarationEncoding(std::string_view bytes) {
  // §13.2.3.2 "get an XML encoding".
  if (bytes.substr(0, 5) != "<?xml") return nullptr;
  const size_t declaration_end = bytes.find('>');
  if (declaration_end == std::string_view::npos) return nullptr;
  // The spec searches on from here without a bound; the declaration's '>' bounds it here, so
  // that an "encoding" in the text after it is not taken for the declaration's.
  const std::string_view decl = bytes.substr(0, declaration_end);
  size_t pos = decl.find("encoding");
  if (pos == std::string_view::npos) return nullptr;
  pos += 8;
  auto skip_spaces_and_controls = [&] {
    while (pos < decl.size() && static_cast<unsigned char>(decl[pos]) <= 0x20) ++pos;
  };
  skip_spaces_and_controls();
  if (pos >= decl.size() || decl[pos] != '=') return nullptr;
  ++pos;
  skip_spaces_and_controls();
  if (pos >= decl.size() || (decl[pos] != '"' && decl[pos] != '\'')) return nullptr;
  const size_t close = decl.find(decl[pos], pos + 1);
  if (close == std::string_view::npos) return nullptr;
  const std::string_view label = decl.substr(pos + 1, close - pos - 1);
  for (char c : label) {
    if (static_cast<unsigned char>(c) <= 0x20) return nullptr;
  }
  const TextEncoding* encoding = EncodingForLabel(label);
  if (encoding == &Utf16BeEncoding() || encoding == &Utf16LeEncoding()) return &Utf8Encoding();
  return encoding;
}

PageEncoding SniffPageEncoding(std::string_view body, std::string_view content_type,
                               const TextEncoding& default_encoding) {
  PageEncoding result;
  // §13.2.3.1 step 1: a BOM (Encoding Standard "BOM sniff") decides with certainty.
  if (const TextEncoding* bom = SniffBom(body, &result.bom_length)) {
    result.encoding = bom;
    result.source = EncodingSource::kBom;
    return result;
  }
  // Step 3: the transport layer's encoding (the Content-Type charset), when it is supported.
  if (std::optional<std::string> label = ContentTypeCharset(content_type)) {
    if (const TextEncoding* http = EncodingForLabel(*label)) {
      result.encoding = http;
      result.source = EncodingSource::kHttp;
      return result;
    }
  }
  // An XML document (application/xhtml+xml) is read as an XML parser reads it (XML 1.0 §4.3.3,
  // Appendix F): its XML declaration's encoding (read as the HTML prescan reads it), else UTF-8;
  // no <meta> prescan, no default.
  if (IsXmlMediaType(content_type)) {
    result.encoding = XmlDeclarationEncoding(body.substr(0, kPrescanBytes));
    result.source = result.encoding != nullptr ? EncodingSource::kMeta : EncodingSource::kDefault;
    if (result.encoding == nullptr) result.encoding = &Utf8Encoding();
    return result;
  }
  // Step 5: the prescan of the first 1024 bytes.
  if (const TextEncoding* meta = PrescanForEncoding(body.substr(0, kPrescanBytes))) {
    result.encoding = meta;
    result.source = EncodingSource::kMeta;
    return result;
  }
  // Step 9: the implementation-defined (here, configured) default.
  result.encoding = &default_encoding;
  result.source = EncodingSource::kDefault;
  return result;
}

}  // namespace urlsieve
