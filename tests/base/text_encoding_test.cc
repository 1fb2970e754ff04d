// The Encoding Standard's labels (§4.2) and the glibc converters behind them.
#include "base/encoding/text_encoding.h"

#include <gtest/gtest.h>
#include <iconv.h>

#include <set>
#include <string>

namespace urlsieve {
namespace {

std::string NameOf(std::string_view label) {
  const TextEncoding* encoding = EncodingForLabel(label);
  return encoding == nullptr ? "(none)" : std::string(encoding->name);
}

TEST(TextEncodingTest, LabelsMapAsTheEncodingStandardSays) {
  EXPECT_EQ(NameOf("gb2312"), "GBK");
  EXPECT_EQ(NameOf("GB2312"), "GBK");
  EXPECT_EQ(NameOf("x-gbk"), "GBK");
  EXPECT_EQ(NameOf("gb18030"), "gb18030");
  EXPECT_EQ(NameOf("latin1"), "windows-1252");
  EXPECT_EQ(NameOf("iso-8859-1"), "windows-1252");
  EXPECT_EQ(NameOf("US-ASCII"), "windows-1252");
  EXPECT_EQ(NameOf("iso-8859-9"), "windows-1254");
  EXPECT_EQ(NameOf("tis-620"), "windows-874");
  EXPECT_EQ(NameOf(" Shift_JIS "), "Shift_JIS");
  EXPECT_EQ(NameOf("\t\n\f\rx-sjis\n"), "Shift_JIS");
  EXPECT_EQ(NameOf("windows-31j"), "Shift_JIS");
  EXPECT_EQ(NameOf("cseucpkdfmtjapanese"), "EUC-JP");
  EXPECT_EQ(NameOf("ks_c_5601-1987"), "EUC-KR");
  EXPECT_EQ(NameOf("big5-hkscs"), "Big5");
  EXPECT_EQ(NameOf("koi8-ru"), "KOI8-U");
  EXPECT_EQ(NameOf("x-mac-ukrainian"), "x-mac-cyrillic");
  EXPECT_EQ(NameOf("logical"), "ISO-8859-8-I");
  EXPECT_EQ(NameOf("utf-16"), "UTF-16LE");
  EXPECT_EQ(NameOf("unicodefffe"), "UTF-16BE");
  EXPECT_EQ(NameOf("unicode11utf8"), "UTF-8");
  EXPECT_EQ(NameOf("iso-2022-kr"), "replacement");
  EXPECT_EQ(NameOf("hz-gb-2312"), "replacement");
  EXPECT_EQ(NameOf("x-user-defined"), "x-user-defined");
}

TEST(TextEncodingTest, UnknownLabelsAreNull) {
  EXPECT_EQ(EncodingForLabel("unknown"), nullptr);
  EXPECT_EQ(EncodingForLabel(""), nullptr);
  EXPECT_EQ(EncodingForLabel("   "), nullptr);
  EXPECT_EQ(EncodingForLabel("utf-8 x"), nullptr);  // inner whitespace is not trimmed
  EXPECT_EQ(EncodingForLabel("utf\xC2\xA0"
                             "8"),
            nullptr);                             // only ASCII whitespace counts
  EXPECT_EQ(EncodingForLabel("utf-7"), nullptr);  // not in the standard
  EXPECT_EQ(EncodingForLabel("iso-8859-11x"), nullptr);
  EXPECT_EQ(EncodingForLabel(std::string(1000, 'a')), nullptr);
  EXPECT_EQ(EncodingForLabel(std::string_view("utf-8\0", 6)), nullptr);
}

TEST(TextEncodingTest, TheFortyEncodingsAreEachNamedByTheirOwnName) {
  const std::span<const TextEncoding> all = AllEncodings();
  EXPECT_EQ(all.size(), 40u);
  std::set<std::string_view> names;
  for (const TextEncoding& encoding : all) {
    EXPECT_TRUE(names.insert(encoding.name).second) << encoding.name;
    EXPECT_EQ(EncodingForLabel(encoding.name), &encoding) << encoding.name;
  }
  EXPECT_EQ(&Utf8Encoding(), EncodingForLabel("utf-8"));
  EXPECT_EQ(&Windows1252Encoding(), EncodingForLabel("windows-1252"));
  EXPECT_EQ(&Utf16BeEncoding(), EncodingForLabel("utf-16be"));
  EXPECT_EQ(&Utf16LeEncoding(), EncodingForLabel("utf-16le"));
  EXPECT_EQ(&ReplacementEncoding(), EncodingForLabel("replacement"));
  EXPECT_EQ(&XUserDefinedEncoding(), EncodingForLabel("x-user-defined"));
}

// Every glibc name in the table opens on this system (the decoder's converters and tables).
TEST(TextEncodingTest, EveryIconvNameOpens) {
  for (const TextEncoding& encoding : AllEncodings()) {
    if (encoding.iconv_name.empty()) {
      EXPECT_TRUE(encoding.name == "replacement" || encoding.name == "x-user-defined")
          << encoding.name;
      continue;
    }
    const std::string name(encoding.iconv_name);
    iconv_t cd = iconv_open("UTF-8", name.c_str());
    EXPECT_NE(cd, reinterpret_cast<iconv_t>(-1)) << encoding.name << " -> " << name;
    if (cd != reinterpret_cast<iconv_t>(-1)) iconv_close(cd);
  }
}

TEST(TextEncodingTest, OutputEncodingIsUtf8ForUtf16AndReplacement) {
  EXPECT_EQ(&OutputEncoding(Utf16LeEncoding()), &Utf8Encoding());
  EXPECT_EQ(&OutputEncoding(Utf16BeEncoding()), &Utf8Encoding());
  EXPECT_EQ(&OutputEncoding(ReplacementEncoding()), &Utf8Encoding());
  EXPECT_EQ(&OutputEncoding(*EncodingForLabel("gbk")), EncodingForLabel("gbk"));
  EXPECT_EQ(&OutputEncoding(Windows1252Encoding()), &Windows1252Encoding());
}

}  // namespace
}  // namespace urlsieve
