// DecodeToUtf8 against expectations computed by Python's codecs (testdata/decode_cases.tsv, written
// by testdata/make_decode_cases.py), and its bounds: bad input, cut-off input, huge input.
#include "base/encoding/text_decoder.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace urlsieve {
namespace {

struct DecodeCase {
  std::string kind;
  std::string label;
  std::string input;
  std::string expected;
  std::string note;
};

std::string FromHex(const std::string& hex) {
  std::string bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  return bytes;
}

std::vector<DecodeCase> ReadCases(const std::string& kind) {
  std::ifstream in(std::string(URLSIEVE_SOURCE_DIR) + "/tests/base/testdata/decode_cases.tsv");
  std::vector<DecodeCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields;
    std::stringstream row(line);
    std::string field;
    while (std::getline(row, field, '\t')) fields.push_back(field);
    if (fields.size() == 4) fields.emplace_back();
    if (fields.size() != 5 || fields[0] != kind) continue;
    cases.push_back({fields[0], fields[1], FromHex(fields[2]), FromHex(fields[3]), fields[4]});
  }
  return cases;
}

size_t CountReplacements(std::string_view utf8) {
  size_t n = 0;
  for (size_t at = utf8.find("\xEF\xBF\xBD"); at != std::string_view::npos;
       at = utf8.find("\xEF\xBF\xBD", at + 3)) {
    ++n;
  }
  return n;
}

std::string Decode(std::string_view bytes, std::string_view label, DecodeLimits limits = {}) {
  const TextEncoding* encoding = EncodingForLabel(label);
  if (encoding == nullptr) return "(unknown label)";
  Result<DecodedText> decoded = DecodeToUtf8(bytes, *encoding, limits);
  if (!decoded.ok()) return decoded.status().ToString();
  return decoded->utf8;
}

TEST(TextDecoderTest, DecodesAsPythonsCodecsDo) {
  const std::vector<DecodeCase> cases = ReadCases("decode");
  ASSERT_GE(cases.size(), 50u) << "tests/base/testdata/decode_cases.tsv is missing or short";
  for (const DecodeCase& c : cases) {
    const TextEncoding* encoding = EncodingForLabel(c.label);
    ASSERT_NE(encoding, nullptr) << c.label;
    Result<DecodedText> decoded = DecodeToUtf8(c.input, *encoding);
    ASSERT_TRUE(decoded.ok()) << c.label << ": " << decoded.status().ToString();
    EXPECT_EQ(decoded->utf8, c.expected) << c.label << " (" << c.note << ")";
    EXPECT_EQ(decoded->replacements, CountReplacements(c.expected)) << c.label << " " << c.note;
    EXPECT_FALSE(decoded->truncated);
  }
}

TEST(TextDecoderTest, EveryEncodingDecodesEmptyInputToNothing) {
  for (const TextEncoding& encoding : AllEncodings()) {
    Result<DecodedText> decoded = DecodeToUtf8("", encoding);
    ASSERT_TRUE(decoded.ok()) << encoding.name << ": " << decoded.status().ToString();
    EXPECT_EQ(decoded->utf8, "") << encoding.name;
    EXPECT_EQ(decoded->replacements, 0u) << encoding.name;
  }
}

TEST(TextDecoderTest, ReplacementIsOneReplacementCharacterForAnyInput) {
  EXPECT_EQ(Decode("<html>anything at all", "iso-2022-kr"), "\xEF\xBF\xBD");
  EXPECT_EQ(Decode("x", "replacement"), "\xEF\xBF\xBD");
}

// Random bytes in every encoding: valid UTF-8 out, at most three bytes per byte in, every time.
TEST(TextDecoderTest, AnyBytesGiveValidBoundedUtf8InEveryEncoding) {
  std::mt19937 random(15);
  for (int round = 0; round < 20; ++round) {
    std::string bytes(1 + random() % 3000, '\0');
    for (char& c : bytes) c = static_cast<char>(random());
    if (round % 2 == 0) {
      for (char& c : bytes) c = static_cast<char>(c | 0x80);  // all high bytes: lead bytes
    }
    for (const TextEncoding& encoding : AllEncodings()) {
      Result<DecodedText> decoded = DecodeToUtf8(bytes, encoding);
      ASSERT_TRUE(decoded.ok()) << encoding.name << ": " << decoded.status().ToString();
      EXPECT_EQ(ValidUtf8Prefix(decoded->utf8), decoded->utf8.size()) << encoding.name;
      EXPECT_LE(decoded->utf8.size(), 3 * bytes.size()) << encoding.name;
      EXPECT_FALSE(decoded->truncated);
    }
  }
}

// iconv is fed the input a window at a time: a character cut by a window's end is whole in the
// next window, not a replacement.
TEST(TextDecoderTest, ACharacterAcrossAnIconvWindowIsDecodedWhole) {
  const std::string zhong_gbk = "\xD6\xD0";  // 中 in GBK
  std::string gbk = zhong_gbk + "a";         // pairs from offset 3: one straddles 64 KiB
  std::string utf8 = "中a";
  for (int i = 0; i < 40'000; ++i) {
    gbk += zhong_gbk;
    utf8 += "中";
  }
  Result<DecodedText> decoded = DecodeToUtf8(gbk, *EncodingForLabel("gbk"), DecodeLimits());
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->replacements, 0u);
  EXPECT_FALSE(decoded->truncated);
  EXPECT_TRUE(decoded->utf8 == utf8) << decoded->utf8.size() << " bytes, not " << utf8.size();
}

TEST(TextDecoderTest, HugeOutputStopsAtTheLimitOnACharacterBoundary) {
  const std::string invalid(4 << 20, '\xFF');  // each byte one U+FFFD (3 bytes) in these
  for (std::string_view label : {"gbk", "utf-8", "shift_jis", "windows-1253", "utf-16le"}) {
    DecodeLimits limits;
    limits.max_output_bytes = (1 << 20) + 1;  // not a multiple of 3
    Result<DecodedText> decoded = DecodeToUtf8(invalid, *EncodingForLabel(label), limits);
    ASSERT_TRUE(decoded.ok()) << label;
    EXPECT_TRUE(decoded->truncated) << label;
    EXPECT_LE(decoded->utf8.size(), limits.max_output_bytes) << label;
    EXPECT_GE(decoded->utf8.size(), limits.max_output_bytes - 3) << label;
    EXPECT_EQ(ValidUtf8Prefix(decoded->utf8), decoded->utf8.size()) << label;
  }
  // Valid text is cut the same way, in every kind of decoder: a valid UTF-8 run, an ASCII run,
  // a single-byte table, glibc.
  for (std::string_view label : {"utf-8", "windows-1252", "koi8-r", "gbk"}) {
    DecodeLimits limits;
    limits.max_output_bytes = 100'001;
    const std::string ascii(200'000, 'a');
    Result<DecodedText> decoded = DecodeToUtf8(ascii, *EncodingForLabel(label), limits);
    ASSERT_TRUE(decoded.ok()) << label;
    EXPECT_TRUE(decoded->truncated) << label;
    EXPECT_EQ(decoded->utf8, std::string(100'001, 'a')) << label;
  }
  DecodeLimits five;
  five.max_output_bytes = 5;
  Result<DecodedText> utf8 = DecodeToUtf8("中文中文", Utf8Encoding(), five);
  ASSERT_TRUE(utf8.ok());
  EXPECT_EQ(utf8->utf8, "中");
  EXPECT_TRUE(utf8->truncated);
  DecodeLimits limits;
  limits.max_output_bytes = 10;
  Result<DecodedText> cut =
      DecodeToUtf8("\xD6\xD0\xCE\xC4\xD6\xD0\xCE\xC4", *EncodingForLabel("gbk"),
                   limits);  // 中文中文: 12 bytes of UTF-8
  ASSERT_TRUE(cut.ok());
  EXPECT_EQ(cut->utf8, "中文中");
  EXPECT_TRUE(cut->truncated);
}

TEST(TextDecoderTest, DecodesToItselfOnlyWhenDecodingChangesNothing) {
  const TextEncoding& utf8 = Utf8Encoding();
  EXPECT_TRUE(DecodesToItself("<p>plain</p>", utf8));
  EXPECT_TRUE(DecodesToItself("中文", utf8));
  EXPECT_FALSE(DecodesToItself("a\xFF", utf8));
  EXPECT_TRUE(DecodesToItself("<p>plain</p>", Windows1252Encoding()));
  EXPECT_FALSE(DecodesToItself("caf\xE9", Windows1252Encoding()));
  EXPECT_TRUE(DecodesToItself("<p>plain</p>", *EncodingForLabel("gbk")));
  EXPECT_FALSE(DecodesToItself("<p>plain</p>", *EncodingForLabel("iso-2022-jp")));
  EXPECT_FALSE(DecodesToItself("<p>plain</p>", Utf16LeEncoding()));
  EXPECT_FALSE(DecodesToItself("<p>plain</p>", ReplacementEncoding()));
  EXPECT_TRUE(DecodesToItself("", ReplacementEncoding()));
}

TEST(TextDecoderTest, ValidUtf8PrefixStopsAtTheFirstBadSequence) {
  EXPECT_EQ(ValidUtf8Prefix(""), 0u);
  EXPECT_EQ(ValidUtf8Prefix("abcdefghijklmnopqrstuvwxyz"), 26u);
  EXPECT_EQ(ValidUtf8Prefix("abcdefghij\x80"), 10u);
  EXPECT_EQ(ValidUtf8Prefix("中文\xE4\xB8"), 6u);       // cut off
  EXPECT_EQ(ValidUtf8Prefix("a\xC0\xAF"), 1u);          // overlong
  EXPECT_EQ(ValidUtf8Prefix("a\xED\xA0\x80"), 1u);      // a surrogate
  EXPECT_EQ(ValidUtf8Prefix("a\xF4\x90\x80\x80"), 1u);  // past U+10FFFF
  EXPECT_EQ(ValidUtf8Prefix("a\xF0\x9F\x98\x80"), 5u);  // U+1F600
}

// Converters are per thread: threads decoding at once do not share conversion state.
TEST(TextDecoderTest, ThreadsDecodeAtOnce) {
  const std::string gbk = "\xD6\xD0\xCE\xC4";   // 中文 (Python: '中文'.encode('gbk'))
  const std::string sjis = "\x93\xFA\x96\x7B";  // 日本 (Python: '日本'.encode('shift_jis'))
  std::string gbk_text, sjis_text;
  for (int i = 0; i < 2000; ++i) {
    gbk_text += gbk;
    sjis_text += sjis;
  }
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        const bool use_gbk = (t + i) % 2 == 0;
        const std::string out = Decode(use_gbk ? gbk_text : sjis_text, use_gbk ? "gbk" : "sjis");
        const std::string_view unit = use_gbk ? "中文" : "日本";
        if (out.size() != unit.size() * 2000 || out.substr(0, unit.size()) != unit ||
            out.substr(out.size() - unit.size()) != unit) {
          ++failures[t];
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

TEST(TextDecoderTest, AnEncodingFromOutsideTheTableStillDecodes) {
  const TextEncoding koi8r{"KOI8-R", "KOI8-R"};  // not one of AllEncodings()' pointers
  Result<DecodedText> decoded = DecodeToUtf8("\xF0\xD2\xC9", koi8r);  // Python: 'При'
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->utf8, "При");
  const TextEncoding gb{"gb18030", "GB18030"};
  decoded = DecodeToUtf8("\xD6\xD0", gb);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->utf8, "中");
  const TextEncoding missing{"windows-9999", "NO-SUCH-CHARSET"};
  decoded = DecodeToUtf8("x\xFF", missing);
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.status().message().find("NO-SUCH-CHARSET"), std::string::npos);
}

}  // namespace
}  // namespace urlsieve
