#include "base/encoding/text_encoder.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "base/encoding/text_encoding.h"

namespace urlsieve {
namespace {

// Encodings the stub label table may not list yet; TextEncoder only needs the iconv name.
constexpr TextEncoding kIso2022Jp{"ISO-2022-JP", "ISO-2022-JP"};
constexpr TextEncoding kGb18030{"gb18030", "GB18030"};

std::string Html(const TextEncoding& encoding, std::string_view utf8) {
  Result<std::unique_ptr<TextEncoder>> encoder = TextEncoder::Open(encoding);
  if (!encoder.ok()) return "error: " + encoder.status().message();
  std::string out;
  const Status status = (*encoder)->EncodeHtml(utf8, &out);
  return status.ok() ? out : "error: " + status.message();
}

const TextEncoding& Label(std::string_view label) {
  const TextEncoding* encoding = EncodingForLabel(label);
  EXPECT_NE(encoding, nullptr) << label;
  return encoding != nullptr ? *encoding : Utf8Encoding();
}

TEST(TextEncoderTest, EncodesMappedCharacters) {
  EXPECT_EQ(Html(Label("gbk"), "q=中文"), "q=\xD6\xD0\xCE\xC4");
  EXPECT_EQ(Html(Label("shift_jis"), "≡ソ"), "\x81\xDF\x83\x5C");
  EXPECT_EQ(Html(Label("windows-1251"), "Привет"), "\xCF\xF0\xE8\xE2\xE5\xF2");
  EXPECT_EQ(Html(Label("windows-1252"), "é€"), "\xE9\x80");
  EXPECT_EQ(Html(Utf8Encoding(), "é"), "\xC3\xA9");
  EXPECT_EQ(Html(Label("gbk"), ""), "");
}

// Big5's encoder writes no HKSCS lead byte (0x81-0xA0) and has the euro sign at 0xA3E1
// (Encoding Standard §12.1.2), which its decoder (Big5-HKSCS) also reads back.
TEST(TextEncoderTest, Big5WritesNoHkscsLeadBytes) {
  EXPECT_EQ(Html(Label("big5"), "€中ü"), "\xA3\xE1\xA4\xA4&#252;");
}

// The Encoding Standard's html error mode: "&#N;", N decimal, for each code point not encoded.
TEST(TextEncoderTest, HtmlErrorModeWritesDecimalReferences) {
  EXPECT_EQ(Html(Label("windows-1251"), "a中b"), "a&#20013;b");
  EXPECT_EQ(Html(Label("shift_jis"), "‽"), "&#8253;");
  EXPECT_EQ(Html(Label("windows-1252"), "😀x"), "&#128512;x");
  EXPECT_EQ(Html(Label("gbk"), "中‽文"), "\xD6\xD0&#8253;\xCE\xC4");
}

TEST(TextEncoderTest, InvalidUtf8IsReplacementCharacter) {
  // One U+FFFD per maximal invalid subpart (Encoding Standard §8.1.1): "\xE4\xB8" is one.
  EXPECT_EQ(Html(Label("gbk"),
                 "a\xE4\xB8"
                 "b\xFF\xC0\x80"),
            "a&#65533;b&#65533;&#65533;&#65533;");
  EXPECT_EQ(Html(Label("gbk"), "\xED\xA0\x80"), "&#65533;&#65533;&#65533;");  // a surrogate
  EXPECT_EQ(Html(Label("gbk"), "end\xE4"), "end&#65533;");                    // cut short
  // GB18030 has U+FFFD: it is encoded, not referenced.
  EXPECT_EQ(Html(kGb18030, "\xFF"), "\x84\x31\xA4\x37");
}

// A stateful encoding ends in its initial state, and is in it before each "&#N;".
TEST(TextEncoderTest, Iso2022JpReturnsToAsciiBeforeReferences) {
  // URL Standard §1.3's example: "¥" is "ESC ( J \ ESC ( B".
  EXPECT_EQ(Html(kIso2022Jp, "¥"), "\x1B(J\\\x1B(B");
  EXPECT_EQ(Html(kIso2022Jp, "中‽中"), "\x1B$BCf\x1B(B&#8253;\x1B$BCf\x1B(B");
  EXPECT_EQ(Html(kIso2022Jp, "ab"), "ab");
}

// x-user-defined (an HTTP charset may name it): glibc lacks it, the encoder is arithmetic.
TEST(TextEncoderTest, XUserDefinedByHand) {
  const TextEncoding x_user_defined{"x-user-defined", ""};
  // U+F780 -> 0x80, U+F7FF -> 0xFF; anything else non-ASCII is a reference.
  EXPECT_EQ(Html(x_user_defined, "a\uF780\uF7FFb"),
            "a\x80\xFF"
            "b");
  EXPECT_EQ(Html(x_user_defined, "é\uF7A0中"), "&#233;\xA0&#20013;");
  EXPECT_EQ(Html(x_user_defined, "\xFF"), "&#65533;");
}

// Output larger than the encoder's 1 KiB buffer, and an encoder used again after an error.
TEST(TextEncoderTest, LongInputAndReuse) {
  std::string input, expected;
  for (int i = 0; i < 3000; ++i) {
    input += "中‽";
    expected += "\xD6\xD0&#8253;";
  }
  Result<std::unique_ptr<TextEncoder>> encoder = TextEncoder::Open(Label("gbk"));
  ASSERT_TRUE(encoder.ok());
  std::string out;
  ASSERT_TRUE((*encoder)->EncodeHtml(input, &out).ok());
  EXPECT_EQ(out, expected);
  out.clear();
  ASSERT_TRUE((*encoder)->EncodeHtml("文", &out).ok());
  EXPECT_EQ(out, "\xCE\xC4");
}

TEST(TextEncoderTest, ErrorsNameTheEncoding) {
  const TextEncoding bogus{"x-bogus", "X-NO-SUCH-CHARSET"};
  Result<std::unique_ptr<TextEncoder>> encoder = TextEncoder::Open(bogus);
  ASSERT_FALSE(encoder.ok());
  EXPECT_NE(encoder.status().message().find("x-bogus"), std::string::npos)
      << encoder.status().message();
  const TextEncoding replacement{"replacement", ""};
  EXPECT_FALSE(TextEncoder::Open(replacement).ok());
}

TEST(TextEncoderTest, ThreadEncoderIsOnePerThreadAndEncoding) {
  const TextEncoding& gbk = Label("gbk");
  Result<TextEncoder*> first = ThreadEncoder(gbk);
  ASSERT_TRUE(first.ok());
  Result<TextEncoder*> again = ThreadEncoder(gbk);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*first, *again);
  Result<TextEncoder*> sjis = ThreadEncoder(Label("shift_jis"));
  ASSERT_TRUE(sjis.ok());
  EXPECT_NE(*first, *sjis);
  EXPECT_EQ((*sjis)->name(), "Shift_JIS");
  TextEncoder* other = nullptr;
  std::thread([&] {
    Result<TextEncoder*> r = ThreadEncoder(gbk);
    if (r.ok()) other = *r;
  }).join();
  EXPECT_NE(other, nullptr);
  EXPECT_NE(other, *first);
  EXPECT_FALSE(ThreadEncoder(TextEncoding{"x-bogus", "X-NO-SUCH-CHARSET"}).ok());
}

}  // namespace
}  // namespace urlsieve
