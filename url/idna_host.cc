#include "url/idna_host.h"

#include <idn2.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

namespace urlsieve {
namespace {

// How the checks libidn2 adds to UTS #46 are lifted, one label at a time:
//
// * ASCII labels other than "xn--" ones never reach libidn2. UTS #46 maps their letters to lower
//   case and leaves the rest (UseSTD3ASCIIRules=false); with CheckHyphens=false and
//   VerifyDnsLength=false nothing else applies, so lowercasing them is the whole conversion.
// * CheckHyphens (hyphens in positions 3-4, a leading or trailing hyphen): the label goes to
//   libidn2 again with each hyphen (and each U+FE63/U+FF0D, the only code points UTS #46 maps to
//   '-') replaced by '_', which every other check treats alike (valid with
//   UseSTD3ASCIIRules=false; Bidi_Class ON where '-' is ES, which RFC 5893 accepts and refuses in
//   the same places; Joining_Type U; no composition). Punycode copies basic code points in order
//   and encodes the others by position only, so turning the '_' of the result back into '-' gives
//   the label's own ASCII form. (A label holding '_' of its own as well is refused.)
// * IDNA2008's own code point rules (RFC 5892 DISALLOWED, CONTEXTO without a rule, unassigned):
//   UTS #46 has none of them. libidn2's transitional processing skips them and differs from the
//   non-transitional one only on the four deviation characters, so a label without them is
//   converted transitionally. CheckJoiners is moot there (the joiners are deviation characters).
// * An "xn--" label is decoded (idn2_to_unicode_8z4z, punycode only) and its Unicode form must map
//   to itself: converting it must give the label back (UTS #46 §4.1 validity criteria).

constexpr int kNontransitional = IDN2_NONTRANSITIONAL | IDN2_NFC_INPUT;
constexpr int kTransitional = IDN2_TRANSITIONAL | IDN2_NFC_INPUT;
constexpr size_t kMaxAlabelDepth = 2;  // an A-label validated inside the validation of another

Status IdnError(std::string_view what) {
  return Status::InvalidArgument("invalid international host (" + std::string(what) + ")");
}
Status IdnError(int rc) { return IdnError(idn2_strerror_name(rc)); }

int ToAscii(const std::string& input, int flags, std::string* out) {
  char* result = nullptr;
  const int rc = idn2_to_ascii_8z(input.c_str(), &result, flags);
  if (rc == IDN2_OK) out->assign(result);
  idn2_free(result);
  return rc;
}

bool IsAscii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<uint8_t>(c) < 0x80; });
}

char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }

bool StartsWithAcePrefix(std::string_view label) {  // "xn--", ASCII case-insensitively
  return label.size() >= 4 && Lower(label[0]) == 'x' && Lower(label[1]) == 'n' && label[2] == '-' &&
         label[3] == '-';
}

// UTS #46 §5 IDNA Mapping Table: the characters whose transitional and non-transitional mappings
// differ (status "deviation"): ß, ς, ZWNJ and ZWJ, in UTF-8.
bool HasDeviationCharacter(std::string_view label) {
  for (std::string_view d : {"\xc3\x9f", "\xcf\x82", "\xe2\x80\x8c", "\xe2\x80\x8d"}) {
    if (label.find(d) != std::string_view::npos) return true;
  }
  return false;
}

// Replaces '-', U+FE63 and U+FF0D by `marker` into *out; returns how many were replaced.
size_t MarkHyphens(std::string_view label, char marker, std::string* out) {
  out->clear();
  size_t replaced = 0;
  for (size_t i = 0; i < label.size(); ++i) {
    const std::string_view rest = label.substr(i);
    if (rest[0] == '-') {
      ++replaced;
      out->push_back(marker);
    } else if (rest.substr(0, 3) == "\xef\xb9\xa3" || rest.substr(0, 3) == "\xef\xbc\x8d") {
      ++replaced;
      out->push_back(marker);
      i += 2;
    } else {
      out->push_back(rest[0]);
    }
  }
  return replaced;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

Status CheckAlabel(const std::string& alabel, size_t depth);

// libidn2's conversion of one label without IDNA2008's own code point rules: where they refuse
// it, transitional processing, if that is the same mapping for this label.
int ToAsciiWithoutIdna2008Rules(const std::string& input, std::string_view label,
                                std::string* out) {
  int rc = ToAscii(input, kNontransitional, out);
  if ((rc == IDN2_DISALLOWED || rc == IDN2_CONTEXTO_NO_RULE || rc == IDN2_UNASSIGNED) &&
      !HasDeviationCharacter(label)) {
    rc = ToAscii(input, kTransitional, out);
  }
  return rc;
}

// Turns each `marker` of the converted labels in *out back into '-'.
Status RestoreHyphens(char marker, std::string* out, size_t depth) {
  size_t begin = 0;
  for (;;) {
    const size_t end = std::min(out->find('.', begin), out->size());
    const bool was_alabel = StartsWithAcePrefix(std::string_view(*out).substr(begin, end - begin));
    std::replace(out->begin() + static_cast<std::ptrdiff_t>(begin),
                 out->begin() + static_cast<std::ptrdiff_t>(end), marker, '-');
    // A label that spells "xn--" only now was never seen by libidn2 as an A-label.
    if (!was_alabel && StartsWithAcePrefix(std::string_view(*out).substr(begin, end - begin))) {
      URLSIEVE_RETURN_IF_ERROR(CheckAlabel(out->substr(begin, end - begin), depth + 1));
    }
    if (end == out->size()) return Status::Ok();
    begin = end + 1;
  }
}

// UTS #46 processing of one label that is not plain ASCII (or the Unicode form of an "xn--"
// label) into *out: lowercase ASCII, possibly several labels when the mapping yields a '.'.
Status ConvertLabel(std::string_view label, std::string* out, size_t depth) {
  const int rc = ToAsciiWithoutIdna2008Rules(std::string(label), label, out);
  if (rc == IDN2_OK) return Status::Ok();
  if (rc != IDN2_2HYPHEN && rc != IDN2_HYPHEN_STARTEND) return IdnError(rc);
  // CheckHyphens=false: the hyphens become '_', the one ASCII symbol libidn2's punycode decoder
  // takes besides '-' (so the one its A-label round trip lets through).
  std::string marked;
  const size_t hyphens = MarkHyphens(label, '_', &marked);
  if (hyphens == 0) return IdnError(rc);
  const int marked_rc = ToAsciiWithoutIdna2008Rules(marked, label, out);
  if (marked_rc != IDN2_OK) return IdnError(marked_rc);
  // Every '_' must be one of ours, or the ones to turn back would be unknown.
  if (static_cast<size_t>(std::count(out->begin(), out->end(), '_')) == hyphens) {
    return RestoreHyphens('_', out, depth);
  }
  return IdnError(rc);
}

// UTS #46 §4 step 4.1 for a lowercase label starting with "xn--": it must decode, hold some
// non-ASCII code point, not itself start with "xn--" (§4.1 criterion 4 with CheckHyphens=false),
// and meet the validity criteria, i.e. convert back to itself.
Status CheckAlabel(const std::string& alabel, size_t depth) {
  if (depth > kMaxAlabelDepth) return IdnError("nested xn-- label");
  uint32_t* decoded = nullptr;
  const int rc = idn2_to_unicode_8z4z(alabel.c_str(), &decoded, 0);
  if (rc != IDN2_OK) {
    idn2_free(decoded);
    return IdnError(rc);
  }
  std::string unicode;
  bool ascii = true;
  for (const uint32_t* p = decoded; *p != 0; ++p) {
    ascii = ascii && *p < 0x80;
    if (*p > 0x10FFFF || (*p >= 0xD800 && *p <= 0xDFFF)) {
      idn2_free(decoded);
      return IdnError("IDN2_PUNYCODE_BAD_INPUT");
    }
    AppendUtf8(*p, &unicode);
  }
  idn2_free(decoded);
  if (ascii) return IdnError("xn-- label of ASCII text");
  if (StartsWithAcePrefix(unicode)) return IdnError("nested xn-- label");
  std::string converted;
  URLSIEVE_RETURN_IF_ERROR(ConvertLabel(unicode, &converted, depth));
  if (converted != alabel) return IdnError(IDN2_ALABEL_ROUNDTRIP_FAILED);
  return Status::Ok();
}

// UTS #46 §4 step 3 splits on U+002E after mapping; U+3002, U+FF0E and U+FF61 are the code points
// the mapping turns into a lone '.', so splitting on them first changes nothing.
size_t LabelSeparatorLength(std::string_view s) {
  if (s[0] == '.') return 1;
  for (std::string_view dot : {"\xe3\x80\x82", "\xef\xbc\x8e", "\xef\xbd\xa1"}) {
    if (s.substr(0, 3) == dot) return 3;
  }
  return 0;
}

Status ConvertDomain(std::string_view domain, std::string* out) {
  out->clear();
  size_t begin = 0;
  for (size_t i = 0;; ++i) {
    const size_t separator = i < domain.size() ? LabelSeparatorLength(domain.substr(i)) : 1;
    if (separator == 0) continue;
    const std::string_view label = domain.substr(begin, i - begin);
    if (IsAscii(label)) {
      std::string lower(label);
      for (char& c : lower) c = Lower(c);
      if (StartsWithAcePrefix(lower)) URLSIEVE_RETURN_IF_ERROR(CheckAlabel(lower, 0));
      out->append(lower);
    } else {
      std::string converted;
      URLSIEVE_RETURN_IF_ERROR(ConvertLabel(label, &converted, 0));
      out->append(converted);
    }
    if (i >= domain.size()) break;
    out->push_back('.');
    i += separator - 1;
    begin = i + 1;
  }
  return Status::Ok();
}

// Key version 1: libidn2 on the whole domain, non-transitional, else transitional.
Status ConvertDomainV1(const std::string& domain, std::string* out) {
  int rc = ToAscii(domain, kNontransitional, out);
  if (rc != IDN2_OK) rc = ToAscii(domain, kTransitional, out);
  return rc == IDN2_OK ? Status::Ok() : IdnError(rc);
}

}  // namespace

Status DomainToAscii(std::string_view domain, std::string* out, int key_version) {
  // libidn2 reads a NUL-terminated string, so an embedded NUL would silently cut the host short.
  if (domain.find('\0') != std::string_view::npos) {
    return Status::InvalidArgument("forbidden host code point");
  }
  // libidn2 costs microseconds per name (NFC, mapping tables, punycode), 50x the rest of a
  // canonicalization, while a crawl sees the same hosts over and over. A small direct-mapped
  // per-thread cache of recent results keeps that cost off the hot path.
  struct Entry {
    std::string domain;
    int key_version = 0;
    std::string ascii;
    Status status;
    bool filled = false;
  };
  constexpr size_t kEntries = 1024;
  thread_local std::vector<Entry> cache(kEntries);
  Entry& entry = cache[(std::hash<std::string_view>()(domain) + key_version) % kEntries];
  if (!entry.filled || entry.key_version != key_version || entry.domain != domain) {
    entry.filled = true;
    entry.key_version = key_version;
    entry.domain.assign(domain);
    entry.status = Status::InvalidArgument("");
    if (key_version == 1) entry.status = ConvertDomainV1(entry.domain, &entry.ascii);
    if (!entry.status.ok()) entry.status = ConvertDomain(entry.domain, &entry.ascii);
  }
  if (!entry.status.ok()) return entry.status;
  out->assign(entry.ascii);
  return Status::Ok();
}

}  // namespace urlsieve
