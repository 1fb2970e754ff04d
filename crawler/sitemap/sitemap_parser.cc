#include "crawler/sitemap/sitemap_parser.h"

#include <expat.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "base/strings.h"

namespace urlsieve {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// "sm:loc" -> "loc": namespaces are not checked (see the header).
std::string_view LocalName(const XML_Char* name) {
  std::string_view n(name);
  const size_t colon = n.rfind(':');
  return colon == std::string_view::npos ? n : n.substr(colon + 1);
}

bool StartsWithHttp(std::string_view line) {
  return StartsWithIgnoreAsciiCase(line, "http://") || StartsWithIgnoreAsciiCase(line, "https://");
}

// Days from 1970-01-01 to y-m-d (proleptic Gregorian; H. Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

}  // namespace

std::string_view SitemapKindName(SitemapKind kind) {
  switch (kind) {
    case SitemapKind::kIndex:
      return "index";
    case SitemapKind::kUrlset:
      return "urlset";
    case SitemapKind::kText:
      return "text";
    case SitemapKind::kUnknown:
      break;
  }
  return "unknown";
}

std::optional<int64_t> ParseW3cDatetime(std::string_view text) {
  text = Trim(text, kBlanksAndLineEnds);
  size_t pos = 0;
  auto digits = [&](size_t n, int* out) {
    if (pos + n > text.size()) return false;
    int v = 0;
    for (size_t i = 0; i < n; ++i) {
      const char c = text[pos + i];
      if (c < '0' || c > '9') return false;
      v = v * 10 + (c - '0');
    }
    pos += n;
    *out = v;
    return true;
  };
  auto literal = [&](char c) {
    if (pos >= text.size() || text[pos] != c) return false;
    ++pos;
    return true;
  };
  int year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0;
  if (!digits(4, &year)) return std::nullopt;
  if (pos < text.size()) {
    if (!literal('-') || !digits(2, &month)) return std::nullopt;
    if (pos < text.size()) {
      if (!literal('-') || !digits(2, &day)) return std::nullopt;
      if (pos < text.size()) {
        if (!literal('T') || !digits(2, &hour) || !literal(':') || !digits(2, &minute)) {
          return std::nullopt;
        }
        if (pos < text.size() && text[pos] == ':') {
          ++pos;
          if (!digits(2, &second)) return std::nullopt;
          if (pos < text.size() && text[pos] == '.') {
            ++pos;
            const size_t fraction = pos;
            while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') ++pos;
            if (pos == fraction) return std::nullopt;
          }
        }
        // A time needs its zone designator.
        int offset_minutes = 0;
        if (literal('Z')) {
        } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
          const int sign = text[pos] == '-' ? -1 : 1;
          ++pos;
          int zh = 0, zm = 0;
          if (!digits(2, &zh) || !literal(':') || !digits(2, &zm) || zh > 23 || zm > 59) {
            return std::nullopt;
          }
          offset_minutes = sign * (zh * 60 + zm);
        } else {
          return std::nullopt;
        }
        if (pos != text.size()) return std::nullopt;
        if (hour > 23 || minute > 59 || second > 60) return std::nullopt;
        if (month < 1 || month > 12 || day < 1) return std::nullopt;
        static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
        const int max_day = kDays[month - 1] + (month == 2 && IsLeap(year) ? 1 : 0);
        if (day > max_day) return std::nullopt;
        return DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) *
                   86400 +
               hour * 3600 + minute * 60 + std::min(second, 59) - offset_minutes * 60;
      }
    }
  }
  if (month < 1 || month > 12 || day < 1) return std::nullopt;
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const int max_day = kDays[month - 1] + (month == 2 && IsLeap(year) ? 1 : 0);
  if (day > max_day) return std::nullopt;
  return DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86400;
}

// The XML side: expat with its handlers, collecting entries into the parser's result.
class SitemapParser::Xml {
 public:
  explicit Xml(SitemapParser* owner) : owner_(owner), parser_(XML_ParserCreate(nullptr)) {
    XML_SetUserData(parser_, this);
    XML_SetElementHandler(parser_, &Xml::OnStart, &Xml::OnEnd);
    XML_SetCharacterDataHandler(parser_, &Xml::OnText);
    // Any DOCTYPE is refused before its internal subset is read: no entity is ever declared, so
    // none is expanded (billion laughs) or fetched (external entities, which expat never loads
    // without a handler anyway).
    XML_SetStartDoctypeDeclHandler(parser_, &Xml::OnDoctype);
    XML_SetEntityDeclHandler(parser_, &Xml::OnEntityDecl);
  }
  ~Xml() { XML_ParserFree(parser_); }
  Xml(const Xml&) = delete;
  Xml& operator=(const Xml&) = delete;

  bool ok() const { return parser_ != nullptr; }

  // Returns false once parsing stopped (an error or a refusal, recorded in the result).
  bool Parse(std::string_view bytes, bool final) {
    if (stopped_) return false;
    // expat takes an int length: feed large inputs in pieces.
    do {
      const size_t n = std::min<size_t>(bytes.size(), 1 << 20);
      const bool last = final && n == bytes.size();
      if (XML_Parse(parser_, bytes.data(), static_cast<int>(n), last ? XML_TRUE : XML_FALSE) !=
          XML_STATUS_OK) {
        Stop();
        return false;
      }
      bytes.remove_prefix(n);
    } while (!bytes.empty());
    return true;
  }

 private:
  void Refuse(std::string why) {
    if (owner_->result_.error.empty()) {
      owner_->result_.error = std::move(why);
      owner_->result_.refused = true;
    }
    refusing_ = true;
    XML_StopParser(parser_, XML_FALSE);
  }

  // After XML_Parse failed: a refusal is already recorded; anything else is malformed XML.
  void Stop() {
    stopped_ = true;
    if (refusing_) return;
    char where[96];
    std::snprintf(where, sizeof(where), "malformed XML at line %lu, column %lu: ",
                  static_cast<unsigned long>(XML_GetCurrentLineNumber(parser_)),
                  static_cast<unsigned long>(XML_GetCurrentColumnNumber(parser_)));
    if (owner_->result_.error.empty()) {
      owner_->result_.error = where;
      owner_->result_.error += XML_ErrorString(XML_GetErrorCode(parser_));
    }
  }

  static void OnDoctype(void* self, const XML_Char* name, const XML_Char*, const XML_Char*, int) {
    static_cast<Xml*>(self)->Refuse(std::string("a DOCTYPE (<!DOCTYPE ") + name +
                                    ">): refused, entities are never expanded");
  }
  static void OnEntityDecl(void* self, const XML_Char* name, int, const XML_Char*, int,
                           const XML_Char*, const XML_Char*, const XML_Char*, const XML_Char*) {
    static_cast<Xml*>(self)->Refuse(std::string("an entity declaration (") + name + "): refused");
  }

  static void OnStart(void* data, const XML_Char* name, const XML_Char**) {
    auto* self = static_cast<Xml*>(data);
    const std::string_view local = LocalName(name);
    const SitemapLimits& limits = self->owner_->limits_;
    if (self->stack_.size() >= limits.max_element_depth) {
      self->Refuse("elements nested deeper than " + std::to_string(limits.max_element_depth));
      return;
    }
    SitemapParse& result = self->owner_->result_;
    const size_t depth = self->stack_.size();  // of the new element's parent
    if (depth == 0) {
      if (local == "urlset") {
        result.kind = SitemapKind::kUrlset;
      } else if (local == "sitemapindex") {
        result.kind = SitemapKind::kIndex;
      } else {
        self->Refuse("the root element <" + std::string(name) +
                     "> is neither <urlset> nor <sitemapindex>");
        return;
      }
    } else if (depth == 1) {
      const std::string_view entry = result.kind == SitemapKind::kIndex ? "sitemap" : "url";
      self->in_entry_ = local == entry;
      self->loc_.clear();
      self->lastmod_.clear();
      self->has_loc_ = false;
      self->loc_too_long_ = false;
    } else if (depth == 2 && self->in_entry_) {
      if (local == "loc") {
        self->field_ = Field::kLoc;
        self->has_loc_ = true;
        self->loc_.clear();
        self->loc_too_long_ = false;
      } else if (local == "lastmod") {
        self->field_ = Field::kLastmod;
        self->lastmod_.clear();
      }
    }
    self->stack_.emplace_back(local);
  }

  static void OnEnd(void* data, const XML_Char*) {
    auto* self = static_cast<Xml*>(data);
    if (self->stack_.empty()) return;
    self->stack_.pop_back();
    const size_t depth = self->stack_.size();
    if (depth == 2) self->field_ = Field::kNone;
    if (depth == 1 && self->in_entry_) {
      self->in_entry_ = false;
      SitemapParse& result = self->owner_->result_;
      if (self->loc_too_long_) {
        ++result.long_locs;
        return;
      }
      const std::string_view loc = Trim(self->loc_, kBlanksAndLineEnds);
      if (loc.empty()) return;
      std::optional<int64_t> lastmod;
      if (!Trim(self->lastmod_, kBlanksAndLineEnds).empty()) {
        lastmod = ParseW3cDatetime(self->lastmod_);
        if (!lastmod) ++result.bad_lastmods;
      }
      self->owner_->AddEntry(std::string(loc), lastmod);
    }
  }

  static void OnText(void* data, const XML_Char* text, int length) {
    auto* self = static_cast<Xml*>(data);
    const std::string_view piece(text, static_cast<size_t>(length));
    if (self->field_ == Field::kLoc) {
      if (self->loc_too_long_) return;
      // White space around the URL does not count against its length.
      const size_t max = self->owner_->limits_.max_loc_length;
      self->loc_.append(piece);
      if (self->loc_.size() > max && Trim(self->loc_, kBlanksAndLineEnds).size() > max) {
        // Leading white space may still be trimmed; only a long URL is dropped.
        self->loc_too_long_ = true;
        self->loc_.clear();
      }
    } else if (self->field_ == Field::kLastmod) {
      if (self->lastmod_.size() < 128) self->lastmod_.append(piece.substr(0, 128));
    }
  }

  enum class Field : uint8_t { kNone, kLoc, kLastmod };
  SitemapParser* owner_;
  XML_Parser parser_;
  std::vector<std::string> stack_;  // local names of the open elements
  bool in_entry_ = false;
  Field field_ = Field::kNone;
  std::string loc_;
  std::string lastmod_;
  bool has_loc_ = false;
  bool loc_too_long_ = false;
  bool refusing_ = false;
  bool stopped_ = false;
};

SitemapParser::SitemapParser(const SitemapLimits& limits) : limits_(limits) {}

SitemapParser::~SitemapParser() = default;

void SitemapParser::AddEntry(std::string loc, std::optional<int64_t> lastmod) {
  if (result_.entries.size() >= limits_.max_entries) {
    ++result_.cut_entries;
    return;
  }
  result_.entries.push_back({std::move(loc), lastmod});
}

bool SitemapParser::Feed(std::string_view bytes) {
  if (mode_ == Mode::kDone) return false;
  bool cut = false;
  const uint64_t room = limits_.max_bytes - result_.bytes;
  if (bytes.size() > room) {
    bytes = bytes.substr(0, room);
    cut = true;
  }
  result_.bytes += bytes.size();
  if (mode_ == Mode::kSniffing) {
    // Skip a UTF-8 BOM and white space; the first other byte decides.
    while (!bytes.empty()) {
      const auto c = static_cast<unsigned char>(bytes.front());
      const bool bom_byte = pending_.size() < 3 &&
                            c == static_cast<unsigned char>("\xEF\xBB\xBF"[pending_.size()]) &&
                            pending_.find_first_not_of("\xEF\xBB\xBF") == std::string::npos;
      if (bom_byte) {
        pending_.push_back(static_cast<char>(c));
      } else if (IsSpace(static_cast<char>(c))) {
        pending_ = "   ";  // past any BOM
      } else {
        break;
      }
      bytes.remove_prefix(1);
    }
    if (!bytes.empty()) {
      if (bytes.front() == '<') {
        mode_ = Mode::kXml;
        xml_ = std::make_unique<Xml>(this);
        if (!xml_->ok()) {
          result_.error = "cannot create an XML parser";
          mode_ = Mode::kDone;
          return false;
        }
      } else {
        mode_ = Mode::kText;
        result_.kind = SitemapKind::kText;
      }
    }
  }
  bool more = true;
  if (mode_ == Mode::kXml) {
    more = xml_->Parse(bytes, false);
  } else if (mode_ == Mode::kText) {
    more = FeedText(bytes);
  }
  if (!more || cut) {
    if (cut) result_.cut_bytes = true;
    if (mode_ == Mode::kText && more && !line_.empty()) {
      // A line cut at max_bytes may be a URL cut short: dropped.
      line_.clear();
    }
    mode_ = Mode::kDone;
    return false;
  }
  return true;
}

bool SitemapParser::FeedText(std::string_view bytes) {
  while (!bytes.empty()) {
    const size_t newline = bytes.find('\n');
    const std::string_view piece = bytes.substr(0, newline);
    if (!line_too_long_) {
      // Kept up to one byte past the limit (and a '\r'): enough to know the line is too long.
      const size_t keep = limits_.max_loc_length + 2;
      line_.append(piece.substr(0, keep - line_.size()));
      if (line_.size() > limits_.max_loc_length + 1) line_too_long_ = true;
    }
    if (newline == std::string_view::npos) break;
    EndTextLine();
    if (mode_ == Mode::kDone) return false;
    bytes.remove_prefix(newline + 1);
  }
  return true;
}

void SitemapParser::EndTextLine() {
  const std::string_view line = Trim(line_, kBlanksAndLineEnds);
  const bool too_long = line_too_long_ || line.size() > limits_.max_loc_length;
  if (!line.empty() || too_long) {
    if (first_line_ && !too_long && !StartsWithHttp(line)) {
      std::string shown(line.substr(0, 80));
      for (char& c : shown) {
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
      }
      result_.error =
          "neither XML nor a text sitemap: its first line is no http(s) URL (\"" + shown + "\")";
      result_.refused = true;
      result_.kind = SitemapKind::kUnknown;
      mode_ = Mode::kDone;
    } else if (too_long) {
      ++result_.long_locs;
    } else {
      AddEntry(std::string(line), std::nullopt);
    }
    first_line_ = false;
  }
  line_.clear();
  line_too_long_ = false;
}

void SitemapParser::Cut() {
  if (mode_ != Mode::kDone) {
    result_.cut_bytes = true;
    line_.clear();  // a text line cut short may be a URL cut short: dropped
    mode_ = Mode::kDone;
  }
}

SitemapParse SitemapParser::Finish() {
  if (mode_ == Mode::kXml) {
    xml_->Parse({}, true);
  } else if (mode_ == Mode::kText) {
    EndTextLine();
  } else if (mode_ == Mode::kSniffing) {
    result_.error = "empty";
  }
  mode_ = Mode::kDone;
  if (result_.kind == SitemapKind::kUnknown && result_.error.empty()) {
    result_.error = "no root element";
  }
  return std::move(result_);
}

SitemapParse ParseSitemap(std::string_view body, const SitemapLimits& limits, bool truncated) {
  SitemapParser parser(limits);
  const bool gzip = body.size() >= 2 && static_cast<unsigned char>(body[0]) == 0x1f &&
                    static_cast<unsigned char>(body[1]) == 0x8b;
  if (!gzip) {
    parser.Feed(body);
    if (truncated) parser.Cut();
    return parser.Finish();
  }
  std::string gzip_error;
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
    gzip_error = "gzip: cannot start inflating";
  } else {
    // Inflated in pieces straight into the parser: the whole uncompressed sitemap is never held,
    // and a gzip bomb stops at max_bytes (the parser refuses more).
    std::string out(64 * 1024, '\0');
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body.data()));
    size_t left = body.size();
    bool more = true;
    while (more) {
      if (zs.avail_in == 0) {
        const auto n = static_cast<uInt>(std::min<size_t>(left, 1 << 30));
        zs.avail_in = n;
        left -= n;
      }
      zs.next_out = reinterpret_cast<Bytef*>(out.data());
      zs.avail_out = static_cast<uInt>(out.size());
      const int ret = inflate(&zs, Z_NO_FLUSH);
      const size_t produced = out.size() - zs.avail_out;
      if (produced > 0 && !parser.Feed(std::string_view(out.data(), produced))) break;
      if (ret == Z_STREAM_END) {
        // Concatenated gzip members (RFC 1952 §2.2) follow one another.
        if (zs.avail_in == 0 && left == 0) break;
        if (inflateReset(&zs) != Z_OK) {
          gzip_error = "gzip: cannot read the next member";
          break;
        }
      } else if (ret == Z_BUF_ERROR) {
        // No progress possible: with all the input given, the stream ends early.
        if (zs.avail_in > 0 || left == 0) {
          gzip_error = "gzip: the stream ends early (truncated)";
          more = false;
        }
      } else if (ret != Z_OK) {
        gzip_error = std::string("gzip: ") + (zs.msg != nullptr ? zs.msg : "corrupt stream");
        more = false;
      }
    }
    inflateEnd(&zs);
  }
  if (truncated) {
    parser.Cut();
    // A compressed body cut by the fetch ends early, as expected.
    if (gzip_error.find("ends early") != std::string::npos) gzip_error.clear();
  }
  SitemapParse parse = parser.Finish();
  parse.gzip = true;
  if (!gzip_error.empty() && !parse.cut_bytes) {
    // The gzip error explains whatever the parser then found (an XML cut short).
    parse.error = gzip_error;
    parse.refused = false;
  }
  return parse;
}

}  // namespace urlsieve
