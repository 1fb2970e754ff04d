#include "base/encoding/text_encoding.h"

#include <algorithm>
#include <array>
#include <cstdint>

namespace urlsieve {
namespace {

// The Encoding Standard §4.2 encodings, in its order, by index into kEncodings.
enum EncodingIndex : uint8_t {
  kUtf8,
  kIbm866,
  kIso8859_2,
  kIso8859_3,
  kIso8859_4,
  kIso8859_5,
  kIso8859_6,
  kIso8859_7,
  kIso8859_8,
  kIso8859_8I,
  kIso8859_10,
  kIso8859_13,
  kIso8859_14,
  kIso8859_15,
  kIso8859_16,
  kKoi8R,
  kKoi8U,
  kMacintosh,
  kWindows874,
  kWindows1250,
  kWindows1251,
  kWindows1252,
  kWindows1253,
  kWindows1254,
  kWindows1255,
  kWindows1256,
  kWindows1257,
  kWindows1258,
  kXMacCyrillic,
  kGbk,
  kGb18030,
  kBig5,
  kEucJp,
  kIso2022Jp,
  kShiftJis,
  kEucKr,
  kReplacement,
  kUtf16Be,
  kUtf16Le,
  kXUserDefined,
  kEncodingCount,
};

// Each encoding with the glibc iconv name closest to it (each opens: tests/base/
// text_encoding_test.cc). Where glibc differs from the Encoding Standard:
// - The single-byte encodings are decoded through a 128-entry table built once from glibc
//   (base/encoding/text_decoder.cc), which corrects the bytes glibc maps otherwise: the C1 bytes of
//   the windows-* encodings (glibc refuses 0x81 in windows-1252, the standard gives U+0081),
//   windows-1255 0xCA, KOI8-U 0xAE/0xBE (ў/Ў), macintosh 0xC6/0xF0 (∆, U+F8FF), x-mac-cyrillic
//   0xFF (€). Byte by byte, too: glibc's CP1255 and CP1258 compose a letter and a following
//   combining mark into one character, the standard does not.
// - ISO-8859-8-I decodes as ISO-8859-8 (the "-I" is a display hint).
// - GBK decodes with glibc's GB18030: the standard's GBK decoder is gb18030's (§10.1.1).
// - Big5 is Big5-HKSCS in the standard; EUC-JP is the Microsoft variant (0xA1C1 = U+FF5E, as in
//   the standard's jis0208 index; glibc's EUC-JP has U+301C); Shift_JIS is windows-31j (0x5C and
//   0x7E are ASCII; glibc's SHIFT_JIS has ¥ and ‾); EUC-KR is windows-949 (UHC).
// - ISO-2022-JP: glibc lacks the standard's half-width katakana escape (ESC ( I).
// - A lone 0x80: the standard has an error in Big5 and EUC-JP, glibc U+0080 (kept: a C1 control
//   either way); in gb18030 and Shift_JIS the decoder gives the standard's U+20AC and U+0080.
// - replacement and x-user-defined have no glibc converter: the decoder writes one U+FFFD for
//   any input, and 0x80-0xFF -> U+F780-U+F7FF.
// - UTF-16BE/LE are decoded without iconv (the name is for the query encoder).
constexpr std::array<TextEncoding, kEncodingCount> kEncodings{{
    TextEncoding{"UTF-8", "UTF-8"},
    TextEncoding{"IBM866", "IBM866"},
    TextEncoding{"ISO-8859-2", "ISO-8859-2"},
    TextEncoding{"ISO-8859-3", "ISO-8859-3"},
    TextEncoding{"ISO-8859-4", "ISO-8859-4"},
    TextEncoding{"ISO-8859-5", "ISO-8859-5"},
    TextEncoding{"ISO-8859-6", "ISO-8859-6"},
    TextEncoding{"ISO-8859-7", "ISO-8859-7"},
    TextEncoding{"ISO-8859-8", "ISO-8859-8"},
    TextEncoding{"ISO-8859-8-I", "ISO-8859-8"},
    TextEncoding{"ISO-8859-10", "ISO-8859-10"},
    TextEncoding{"ISO-8859-13", "ISO-8859-13"},
    TextEncoding{"ISO-8859-14", "ISO-8859-14"},
    TextEncoding{"ISO-8859-15", "ISO-8859-15"},
    TextEncoding{"ISO-8859-16", "ISO-8859-16"},
    TextEncoding{"KOI8-R", "KOI8-R"},
    TextEncoding{"KOI8-U", "KOI8-U"},
    TextEncoding{"macintosh", "MACINTOSH"},
    TextEncoding{"windows-874", "CP874"},
    TextEncoding{"windows-1250", "CP1250"},
    TextEncoding{"windows-1251", "CP1251"},
    TextEncoding{"windows-1252", "CP1252"},
    TextEncoding{"windows-1253", "CP1253"},
    TextEncoding{"windows-1254", "CP1254"},
    TextEncoding{"windows-1255", "CP1255"},
    TextEncoding{"windows-1256", "CP1256"},
    TextEncoding{"windows-1257", "CP1257"},
    TextEncoding{"windows-1258", "CP1258"},
    TextEncoding{"x-mac-cyrillic", "MAC-CYRILLIC"},
    TextEncoding{"GBK", "GBK"},
    TextEncoding{"gb18030", "GB18030"},
    TextEncoding{"Big5", "BIG5-HKSCS"},
    TextEncoding{"EUC-JP", "EUC-JP-MS"},
    TextEncoding{"ISO-2022-JP", "ISO-2022-JP"},
    TextEncoding{"Shift_JIS", "CP932"},
    TextEncoding{"EUC-KR", "CP949"},
    TextEncoding{"replacement", ""},
    TextEncoding{"UTF-16BE", "UTF-16BE"},
    TextEncoding{"UTF-16LE", "UTF-16LE"},
    TextEncoding{"x-user-defined", ""},
}};

struct Label {
  std::string_view label;
  EncodingIndex encoding;
};

// Every label of the Encoding Standard's encodings.json, sorted for binary search.
constexpr std::array kLabels{
    Label{"866", kIbm866},
    Label{"ansi_x3.4-1968", kWindows1252},
    Label{"arabic", kIso8859_6},
    Label{"ascii", kWindows1252},
    Label{"asmo-708", kIso8859_6},
    Label{"big5", kBig5},
    Label{"big5-hkscs", kBig5},
    Label{"chinese", kGbk},
    Label{"cn-big5", kBig5},
    Label{"cp1250", kWindows1250},
    Label{"cp1251", kWindows1251},
    Label{"cp1252", kWindows1252},
    Label{"cp1253", kWindows1253},
    Label{"cp1254", kWindows1254},
    Label{"cp1255", kWindows1255},
    Label{"cp1256", kWindows1256},
    Label{"cp1257", kWindows1257},
    Label{"cp1258", kWindows1258},
    Label{"cp819", kWindows1252},
    Label{"cp866", kIbm866},
    Label{"csbig5", kBig5},
    Label{"cseuckr", kEucKr},
    Label{"cseucpkdfmtjapanese", kEucJp},
    Label{"csgb2312", kGbk},
    Label{"csibm866", kIbm866},
    Label{"csiso2022jp", kIso2022Jp},
    Label{"csiso2022kr", kReplacement},
    Label{"csiso58gb231280", kGbk},
    Label{"csiso88596e", kIso8859_6},
    Label{"csiso88596i", kIso8859_6},
    Label{"csiso88598e", kIso8859_8},
    Label{"csiso88598i", kIso8859_8I},
    Label{"csisolatin1", kWindows1252},
    Label{"csisolatin2", kIso8859_2},
    Label{"csisolatin3", kIso8859_3},
    Label{"csisolatin4", kIso8859_4},
    Label{"csisolatin5", kWindows1254},
    Label{"csisolatin6", kIso8859_10},
    Label{"csisolatin9", kIso8859_15},
    Label{"csisolatinarabic", kIso8859_6},
    Label{"csisolatincyrillic", kIso8859_5},
    Label{"csisolatingreek", kIso8859_7},
    Label{"csisolatinhebrew", kIso8859_8},
    Label{"cskoi8r", kKoi8R},
    Label{"csksc56011987", kEucKr},
    Label{"csmacintosh", kMacintosh},
    Label{"csshiftjis", kShiftJis},
    Label{"csunicode", kUtf16Le},
    Label{"cyrillic", kIso8859_5},
    Label{"dos-874", kWindows874},
    Label{"ecma-114", kIso8859_6},
    Label{"ecma-118", kIso8859_7},
    Label{"elot_928", kIso8859_7},
    Label{"euc-jp", kEucJp},
    Label{"euc-kr", kEucKr},
    Label{"gb18030", kGb18030},
    Label{"gb2312", kGbk},
    Label{"gb_2312", kGbk},
    Label{"gb_2312-80", kGbk},
    Label{"gbk", kGbk},
    Label{"greek", kIso8859_7},
    Label{"greek8", kIso8859_7},
    Label{"hebrew", kIso8859_8},
    Label{"hz-gb-2312", kReplacement},
    Label{"ibm819", kWindows1252},
    Label{"ibm866", kIbm866},
    Label{"iso-10646-ucs-2", kUtf16Le},
    Label{"iso-2022-cn", kReplacement},
    Label{"iso-2022-cn-ext", kReplacement},
    Label{"iso-2022-jp", kIso2022Jp},
    Label{"iso-2022-kr", kReplacement},
    Label{"iso-8859-1", kWindows1252},
    Label{"iso-8859-10", kIso8859_10},
    Label{"iso-8859-11", kWindows874},
    Label{"iso-8859-13", kIso8859_13},
    Label{"iso-8859-14", kIso8859_14},
    Label{"iso-8859-15", kIso8859_15},
    Label{"iso-8859-16", kIso8859_16},
    Label{"iso-8859-2", kIso8859_2},
    Label{"iso-8859-3", kIso8859_3},
    Label{"iso-8859-4", kIso8859_4},
    Label{"iso-8859-5", kIso8859_5},
    Label{"iso-8859-6", kIso8859_6},
    Label{"iso-8859-6-e", kIso8859_6},
    Label{"iso-8859-6-i", kIso8859_6},
    Label{"iso-8859-7", kIso8859_7},
    Label{"iso-8859-8", kIso8859_8},
    Label{"iso-8859-8-e", kIso8859_8},
    Label{"iso-8859-8-i", kIso8859_8I},
    Label{"iso-8859-9", kWindows1254},
    Label{"iso-ir-100", kWindows1252},
    Label{"iso-ir-101", kIso8859_2},
    Label{"iso-ir-109", kIso8859_3},
    Label{"iso-ir-110", kIso8859_4},
    Label{"iso-ir-126", kIso8859_7},
    Label{"iso-ir-127", kIso8859_6},
    Label{"iso-ir-138", kIso8859_8},
    Label{"iso-ir-144", kIso8859_5},
    Label{"iso-ir-148", kWindows1254},
    Label{"iso-ir-149", kEucKr},
    Label{"iso-ir-157", kIso8859_10},
    Label{"iso-ir-58", kGbk},
    Label{"iso8859-1", kWindows1252},
    Label{"iso8859-10", kIso8859_10},
    Label{"iso8859-11", kWindows874},
    Label{"iso8859-13", kIso8859_13},
    Label{"iso8859-14", kIso8859_14},
    Label{"iso8859-15", kIso8859_15},
    Label{"iso8859-2", kIso8859_2},
    Label{"iso8859-3", kIso8859_3},
    Label{"iso8859-4", kIso8859_4},
    Label{"iso8859-5", kIso8859_5},
    Label{"iso8859-6", kIso8859_6},
    Label{"iso8859-7", kIso8859_7},
    Label{"iso8859-8", kIso8859_8},
    Label{"iso8859-9", kWindows1254},
    Label{"iso88591", kWindows1252},
    Label{"iso885910", kIso8859_10},
    Label{"iso885911", kWindows874},
    Label{"iso885913", kIso8859_13},
    Label{"iso885914", kIso8859_14},
    Label{"iso885915", kIso8859_15},
    Label{"iso88592", kIso8859_2},
    Label{"iso88593", kIso8859_3},
    Label{"iso88594", kIso8859_4},
    Label{"iso88595", kIso8859_5},
    Label{"iso88596", kIso8859_6},
    Label{"iso88597", kIso8859_7},
    Label{"iso88598", kIso8859_8},
    Label{"iso88599", kWindows1254},
    Label{"iso_8859-1", kWindows1252},
    Label{"iso_8859-15", kIso8859_15},
    Label{"iso_8859-1:1987", kWindows1252},
    Label{"iso_8859-2", kIso8859_2},
    Label{"iso_8859-2:1987", kIso8859_2},
    Label{"iso_8859-3", kIso8859_3},
    Label{"iso_8859-3:1988", kIso8859_3},
    Label{"iso_8859-4", kIso8859_4},
    Label{"iso_8859-4:1988", kIso8859_4},
    Label{"iso_8859-5", kIso8859_5},
    Label{"iso_8859-5:1988", kIso8859_5},
    Label{"iso_8859-6", kIso8859_6},
    Label{"iso_8859-6:1987", kIso8859_6},
    Label{"iso_8859-7", kIso8859_7},
    Label{"iso_8859-7:1987", kIso8859_7},
    Label{"iso_8859-8", kIso8859_8},
    Label{"iso_8859-8:1988", kIso8859_8},
    Label{"iso_8859-9", kWindows1254},
    Label{"iso_8859-9:1989", kWindows1254},
    Label{"koi", kKoi8R},
    Label{"koi8", kKoi8R},
    Label{"koi8-r", kKoi8R},
    Label{"koi8-ru", kKoi8U},
    Label{"koi8-u", kKoi8U},
    Label{"koi8_r", kKoi8R},
    Label{"korean", kEucKr},
    Label{"ks_c_5601-1987", kEucKr},
    Label{"ks_c_5601-1989", kEucKr},
    Label{"ksc5601", kEucKr},
    Label{"ksc_5601", kEucKr},
    Label{"l1", kWindows1252},
    Label{"l2", kIso8859_2},
    Label{"l3", kIso8859_3},
    Label{"l4", kIso8859_4},
    Label{"l5", kWindows1254},
    Label{"l6", kIso8859_10},
    Label{"l9", kIso8859_15},
    Label{"latin1", kWindows1252},
    Label{"latin2", kIso8859_2},
    Label{"latin3", kIso8859_3},
    Label{"latin4", kIso8859_4},
    Label{"latin5", kWindows1254},
    Label{"latin6", kIso8859_10},
    Label{"logical", kIso8859_8I},
    Label{"mac", kMacintosh},
    Label{"macintosh", kMacintosh},
    Label{"ms932", kShiftJis},
    Label{"ms_kanji", kShiftJis},
    Label{"replacement", kReplacement},
    Label{"shift-jis", kShiftJis},
    Label{"shift_jis", kShiftJis},
    Label{"sjis", kShiftJis},
    Label{"sun_eu_greek", kIso8859_7},
    Label{"tis-620", kWindows874},
    Label{"ucs-2", kUtf16Le},
    Label{"unicode", kUtf16Le},
    Label{"unicode-1-1-utf-8", kUtf8},
    Label{"unicode11utf8", kUtf8},
    Label{"unicode20utf8", kUtf8},
    Label{"unicodefeff", kUtf16Le},
    Label{"unicodefffe", kUtf16Be},
    Label{"us-ascii", kWindows1252},
    Label{"utf-16", kUtf16Le},
    Label{"utf-16be", kUtf16Be},
    Label{"utf-16le", kUtf16Le},
    Label{"utf-8", kUtf8},
    Label{"utf8", kUtf8},
    Label{"visual", kIso8859_8},
    Label{"windows-1250", kWindows1250},
    Label{"windows-1251", kWindows1251},
    Label{"windows-1252", kWindows1252},
    Label{"windows-1253", kWindows1253},
    Label{"windows-1254", kWindows1254},
    Label{"windows-1255", kWindows1255},
    Label{"windows-1256", kWindows1256},
    Label{"windows-1257", kWindows1257},
    Label{"windows-1258", kWindows1258},
    Label{"windows-31j", kShiftJis},
    Label{"windows-874", kWindows874},
    Label{"windows-949", kEucKr},
    Label{"x-cp1250", kWindows1250},
    Label{"x-cp1251", kWindows1251},
    Label{"x-cp1252", kWindows1252},
    Label{"x-cp1253", kWindows1253},
    Label{"x-cp1254", kWindows1254},
    Label{"x-cp1255", kWindows1255},
    Label{"x-cp1256", kWindows1256},
    Label{"x-cp1257", kWindows1257},
    Label{"x-cp1258", kWindows1258},
    Label{"x-euc-jp", kEucJp},
    Label{"x-gbk", kGbk},
    Label{"x-mac-cyrillic", kXMacCyrillic},
    Label{"x-mac-roman", kMacintosh},
    Label{"x-mac-ukrainian", kXMacCyrillic},
    Label{"x-sjis", kShiftJis},
    Label{"x-unicode20utf8", kUtf8},
    Label{"x-user-defined", kXUserDefined},
    Label{"x-x-big5", kBig5},
};
static_assert(std::is_sorted(kLabels.begin(), kLabels.end(),
                             [](const Label& a, const Label& b) { return a.label < b.label; }));

constexpr size_t kLongestLabel = 19;  // "cseucpkdfmtjapanese"

bool IsAsciiWhitespace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

}  // namespace

const TextEncoding* EncodingForLabel(std::string_view label) {
  while (!label.empty() && IsAsciiWhitespace(label.front())) label.remove_prefix(1);
  while (!label.empty() && IsAsciiWhitespace(label.back())) label.remove_suffix(1);
  if (label.empty() || label.size() > kLongestLabel) return nullptr;
  char lower[kLongestLabel];
  for (size_t i = 0; i < label.size(); ++i) {
    const char c = label[i];
    lower[i] = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  }
  const std::string_view key(lower, label.size());
  const auto it = std::lower_bound(kLabels.begin(), kLabels.end(), key,
                                   [](const Label& a, std::string_view b) { return a.label < b; });
  if (it == kLabels.end() || it->label != key) return nullptr;
  return &kEncodings[it->encoding];
}

std::span<const TextEncoding> AllEncodings() { return kEncodings; }

const TextEncoding& Utf8Encoding() { return kEncodings[kUtf8]; }
const TextEncoding& Windows1252Encoding() { return kEncodings[kWindows1252]; }
const TextEncoding& Utf16BeEncoding() { return kEncodings[kUtf16Be]; }
const TextEncoding& Utf16LeEncoding() { return kEncodings[kUtf16Le]; }
const TextEncoding& ReplacementEncoding() { return kEncodings[kReplacement]; }
const TextEncoding& XUserDefinedEncoding() { return kEncodings[kXUserDefined]; }

const TextEncoding& OutputEncoding(const TextEncoding& encoding) {
  if (&encoding == &kEncodings[kReplacement] || &encoding == &kEncodings[kUtf16Le] ||
      &encoding == &kEncodings[kUtf16Be]) {
    return kEncodings[kUtf8];
  }
  return encoding;
}

}  // namespace urlsieve
