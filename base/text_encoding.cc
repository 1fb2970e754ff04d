#include "base/text_encoding.h"

#include <array>

namespace urlsieve {
namespace {

struct Label {
  std::string_view label;
  const TextEncoding* encoding;
};

constexpr TextEncoding kUtf8{"UTF-8", "UTF-8"};
constexpr TextEncoding kWindows1252{"windows-1252", "CP1252"};
constexpr TextEncoding kGbk{"GBK", "GBK"};
constexpr TextEncoding kShiftJis{"Shift_JIS", "SHIFT_JIS"};
constexpr TextEncoding kWindows1251{"windows-1251", "CP1251"};
constexpr TextEncoding kUtf16Le{"UTF-16LE", "UTF-16LE"};
constexpr TextEncoding kUtf16Be{"UTF-16BE", "UTF-16BE"};
constexpr TextEncoding kReplacement{"replacement", ""};

// TODO(charset): the whole table of the Encoding Standard §4.2 (encodings.json). A first few.
constexpr std::array kLabels{
    Label{"utf-8", &kUtf8},          Label{"utf8", &kUtf8},
    Label{"unicode-1-1-utf-8", &kUtf8},
    Label{"windows-1252", &kWindows1252}, Label{"latin1", &kWindows1252},
    Label{"iso-8859-1", &kWindows1252},   Label{"us-ascii", &kWindows1252},
    Label{"gbk", &kGbk},             Label{"gb2312", &kGbk},
    Label{"shift_jis", &kShiftJis},  Label{"sjis", &kShiftJis},
    Label{"windows-1251", &kWindows1251},
    Label{"utf-16le", &kUtf16Le},    Label{"utf-16", &kUtf16Le},
    Label{"utf-16be", &kUtf16Be},
};

bool IsAsciiWhitespace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

bool EqualsIgnoringAsciiCase(std::string_view a, std::string_view lower) {
  if (a.size() != lower.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char c = a[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != lower[i]) return false;
  }
  return true;
}

}  // namespace

const TextEncoding* EncodingForLabel(std::string_view label) {
  while (!label.empty() && IsAsciiWhitespace(label.front())) label.remove_prefix(1);
  while (!label.empty() && IsAsciiWhitespace(label.back())) label.remove_suffix(1);
  for (const Label& entry : kLabels) {
    if (EqualsIgnoringAsciiCase(label, entry.label)) return entry.encoding;
  }
  return nullptr;
}

const TextEncoding& Utf8Encoding() { return kUtf8; }
const TextEncoding& Windows1252Encoding() { return kWindows1252; }

const TextEncoding& OutputEncoding(const TextEncoding& encoding) {
  if (&encoding == &kReplacement || &encoding == &kUtf16Le || &encoding == &kUtf16Be) return kUtf8;
  return encoding;
}

}  // namespace urlsieve
