// UrlCanonicalizer::Resolve with a document encoding: the query as a browser sends it from a page
// in a legacy encoding (docs/features/canonicalization.md, "Queries in the document's encoding").
// The expected URLs of the table come from Python (query_encoding_cases.py), not from urlsieve.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "base/encoding/text_encoding.h"
#include "url/url_canonicalizer.h"
#include "tests/url/uri_validator.h"
#include "tests/support/fuzz_corpus.h"

namespace urlsieve {
namespace {

struct EncodingCase {
  const char* label;
  const char* base;
  const char* reference;
  const char* expected;
};

constexpr EncodingCase kCases[] = {
#include "tests/url/query_encoding_cases.inc"
};

const TextEncoding& Encoding(std::string_view label) {
  const TextEncoding* encoding = EncodingForLabel(label);
  EXPECT_NE(encoding, nullptr) << label;
  return encoding != nullptr ? *encoding : Utf8Encoding();
}

std::string Resolved(std::string_view base, std::string_view reference,
                     const TextEncoding* encoding, const CanonicalizeOptions& options = {}) {
  const Result<std::string> r = UrlCanonicalizer(options).Resolve(base, reference, encoding);
  return r.ok() ? r.value() : "error: " + r.status().message();
}

TEST(ResolveEncodingTest, PythonTable) {
  ASSERT_GE(std::size(kCases), 25u);
  for (const EncodingCase& c : kCases) {
    const std::string resolved = Resolved(c.base, c.reference, &Encoding(c.label));
    EXPECT_EQ(resolved, c.expected) << c.label << ": " << c.reference << " against " << c.base;
    // The result is a URL to fetch: its key is a valid URI, and canonicalizing keeps the query's
    // bytes (only the spelling of escapes may change).
    std::string key;
    ASSERT_TRUE(UrlCanonicalizer().CanonicalizeTo(resolved, &key).ok()) << resolved;
    EXPECT_TRUE(testing::IsValidUriKey(key)) << key;
  }
}

// The example, spelled out here too (the table holds it as well).
TEST(ResolveEncodingTest, GbkPageSendsPathInUtf8AndQueryInGbk) {
  const TextEncoding* gbk = EncodingForLabel("gbk");
  ASSERT_NE(gbk, nullptr);
  EXPECT_EQ(Resolved("http://example.com/", "/搜索/页面.html?q=中文", gbk),
            "http://example.com/%E6%90%9C%E7%B4%A2/%E9%A1%B5%E9%9D%A2.html?q=%D6%D0%CE%C4");
  // Without an encoding (or in UTF-8) the query is UTF-8, as before.
  EXPECT_EQ(Resolved("http://example.com/", "/搜索/页面.html?q=中文", nullptr),
            "http://example.com/%E6%90%9C%E7%B4%A2/%E9%A1%B5%E9%9D%A2.html?q=%E4%B8%AD%E6%96%87");
}

TEST(ResolveEncodingTest, UrlStandardShiftJisExamples) {
  // URL Standard §1.3, the examples of "percent-encode after encoding" with Shift_JIS and the
  // special-query percent-encode set: " " -> "%20", "≡" -> "%81%DF", "‽" -> "%26%238253%3B".
  const TextEncoding& sjis = Encoding("shift_jis");
  EXPECT_EQ(Resolved("http://a/", "?x= ", &sjis), "http://a/?x=");  // trailing space trimmed
  EXPECT_EQ(Resolved("http://a/", "?x= y", &sjis), "http://a/?x=%20y");
  EXPECT_EQ(Resolved("http://a/", "?≡", &sjis), "http://a/?%81%DF");
  EXPECT_EQ(Resolved("http://a/", "?‽", &sjis), "http://a/?%26%238253%3B");
}

TEST(ResolveEncodingTest, Utf8AndNullAreTheSameAsBefore) {
  // nullptr, UTF-8 and the UTF-16 encodings (whose output encoding is UTF-8) all give the result
  // of the two-argument call, on every reference of the fuzz corpus and under key version 1.
  const TextEncoding* same[] = {nullptr, &Utf8Encoding(), &Encoding("utf-16le"),
                                &Encoding("utf-16be")};
  int compared = 0;
  for (int version = 1; version <= 2; ++version) {
    CanonicalizeOptions options;
    options.key_version = version;
    const UrlCanonicalizer canonicalizer(options);
    for (const auto& [name, data] : testing::FuzzCorpus("canonicalize")) {
      if (data.empty()) continue;
      const std::string reference = data.substr(1);
      const Result<std::string> before = canonicalizer.Resolve("http://a/b/c/d;p?q", reference);
      for (const TextEncoding* encoding : same) {
        const Result<std::string> r =
            canonicalizer.Resolve("http://a/b/c/d;p?q", reference, encoding);
        ASSERT_EQ(r.ok(), before.ok()) << name;
        if (r.ok()) {
          EXPECT_EQ(*r, *before) << name;
        }
        ++compared;
      }
    }
  }
  EXPECT_GE(compared, 80);
}

TEST(ResolveEncodingTest, KeyVersionOneKeepsApostropheLiteral) {
  CanonicalizeOptions v1;
  v1.key_version = 1;
  const TextEncoding& gbk = Encoding("gbk");
  EXPECT_EQ(Resolved("http://a/", "?q='中'", &gbk, v1), "http://a/?q='%D6%D0'");
  EXPECT_EQ(Resolved("http://a/", "?q='中'", &gbk), "http://a/?q=%27%D6%D0%27");
}

TEST(ResolveEncodingTest, InvalidUtf8InQueryIsReplacementCharacter) {
  // Bytes that are not UTF-8 read as U+FFFD (one per maximal invalid subpart), which GBK lacks.
  const TextEncoding& gbk = Encoding("gbk");
  EXPECT_EQ(Resolved("http://a/", "?q=\xE4\xB8x\xFF", &gbk),
            "http://a/?q=%26%2365533%3Bx%26%2365533%3B");
  // The canonical key of such a link is still a valid URI.
  std::string key;
  ASSERT_TRUE(UrlCanonicalizer()
                  .CanonicalizeTo(Resolved("http://a/", "?q=\xE4\xB8x\xFF", &gbk), &key)
                  .ok());
  EXPECT_TRUE(testing::IsValidUriKey(key)) << key;
}

TEST(ResolveEncodingTest, LongQueryAndMaxLength) {
  const TextEncoding& gbk = Encoding("gbk");
  std::string query, expected;
  for (int i = 0; i < 300; ++i) {
    query += "中";
    expected += "%D6%D0";
  }
  // Strings built with append: GCC 12 -O3 reports a false -Wrestrict on "?" + std::string&&.
  std::string reference(1, '?');
  reference.append(query);
  std::string want("http://a/?");
  want.append(expected);
  EXPECT_EQ(Resolved("http://a/", reference, &gbk), want);
  CanonicalizeOptions small;
  small.max_length = 100;
  EXPECT_EQ(Resolved("http://a/", reference.substr(0, 61), &gbk, small).substr(0, 20),
            "error: url too long ");
}

// x-user-defined (from an HTTP charset) is its own output encoding, encoded without iconv.
TEST(ResolveEncodingTest, XUserDefined) {
  const TextEncoding x_user_defined{"x-user-defined", ""};
  EXPECT_EQ(Resolved("http://a/", "/é?q=\uF7E9é", &x_user_defined),
            "http://a/%C3%A9?q=%E9%26%23233%3B");
}

// An encoding iconv does not know is an error that names it, never a UTF-8 fallback.
TEST(ResolveEncodingTest, UnknownToIconvIsAnError) {
  const TextEncoding bogus{"x-bogus", "X-NO-SUCH-CHARSET"};
  const std::string r = Resolved("http://a/", "?q=中", &bogus);
  EXPECT_NE(r.find("x-bogus"), std::string::npos) << r;
  // ASCII queries need no encoder.
  EXPECT_EQ(Resolved("http://a/", "?q=a", &bogus), "http://a/?q=a");
}

// Links are resolved by many crawler threads at once; each has its own encoders.
TEST(ResolveEncodingTest, ConcurrentThreads) {
  const TextEncoding& gbk = Encoding("gbk");
  const TextEncoding& sjis = Encoding("shift_jis");
  const UrlCanonicalizer canonicalizer;
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const bool use_gbk = (i + t) % 2 == 0;
        const Result<std::string> r = canonicalizer.Resolve(
            "http://a/", use_gbk ? "?q=中文‽" : "?q=≡ソ", use_gbk ? &gbk : &sjis);
        const char* expected =
            use_gbk ? "http://a/?q=%D6%D0%CE%C4%26%238253%3B" : "http://a/?q=%81%DF%83%5C";
        if (!r.ok() || *r != expected) ++wrong[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong, std::vector<int>(4, 0));
}

}  // namespace
}  // namespace urlsieve
