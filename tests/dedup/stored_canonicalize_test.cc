// The canonicalizer options as state.db stores them (EncodeStoredCanonicalize, state_dir.h): the
// string is part of existing states, so the table-driven encoder must write exactly what the
// hand-written one did, and the decoder must read what it read.
#include <gtest/gtest.h>

#include <cstdio>
#include <iterator>
#include <string>
#include <vector>

#include "dedup/state_dir.h"
#include "url/tracking_params.h"

namespace urlsieve {
namespace {

// The encoder as it was before it was driven by kCanonicalizeRules: the reference format (of the
// first five rules; strip_tracking_params, written only when on, is added by WithNewRules below).
std::string HandWrittenEncode(const CanonicalizeOptions& o) {
  std::string s;
  if (o.key_version != 1) s += "key_version=" + std::to_string(o.key_version) + ",";
  s += "sort_query=" + std::to_string(o.sort_query);
  s += ",drop_empty_query=" + std::to_string(o.drop_empty_query);
  s += ",strip_session_ids=" + std::to_string(o.strip_session_ids);
  s += ",strip_www=" + std::to_string(o.strip_www);
  s += ",collapse_slashes=" + std::to_string(o.collapse_slashes);
  s += ",max_length=" + std::to_string(o.max_length);
  return s;
}

// The decoder as it was: one sscanf. The reference for what is accepted.
Result<CanonicalizeOptions> HandWrittenDecode(const std::string& s) {
  CanonicalizeOptions o;
  unsigned sort_query, drop_empty, strip_sid, strip_www, collapse;
  unsigned long long max_length;
  int consumed = 0;
  o.key_version = 1;
  if (std::sscanf(s.c_str(), "key_version=%d,%n", &o.key_version, &consumed) == 1 &&
      (consumed == 0 || o.key_version < 2 || o.key_version > kCurrentKeyVersion)) {
    return Status::Unsupported("key version");
  }
  if (std::sscanf(s.c_str() + consumed,
                  "sort_query=%u,drop_empty_query=%u,strip_session_ids=%u,strip_www=%u,"
                  "collapse_slashes=%u,max_length=%llu",
                  &sort_query, &drop_empty, &strip_sid, &strip_www, &collapse, &max_length) != 6) {
    return Status::Corruption("unreadable");
  }
  o.sort_query = sort_query != 0;
  o.drop_empty_query = drop_empty != 0;
  o.strip_session_ids = strip_sid != 0;
  o.strip_www = strip_www != 0;
  o.collapse_slashes = collapse != 0;
  o.max_length = static_cast<size_t>(max_length);
  return o;
}

CanonicalizeOptions WithRules(unsigned bits, int key_version, size_t max_length) {
  CanonicalizeOptions o;
  o.sort_query = bits & 1;
  o.drop_empty_query = bits & 2;
  o.strip_session_ids = bits & 4;
  o.strip_www = bits & 8;
  o.collapse_slashes = bits & 16;
  o.strip_tracking_params = bits & 32;
  if (bits & 32 && bits & 1) o.tracking_exceptions = {"b.example:Ref", "a.example:x"};
  o.key_version = key_version;
  o.max_length = max_length;
  return o;
}

void ExpectSame(const CanonicalizeOptions& a, const CanonicalizeOptions& b, const std::string& s) {
  for (const CanonicalizeRule& rule : kCanonicalizeRules) {
    EXPECT_EQ(a.*rule.member, b.*rule.member) << rule.name << " in " << s;
  }
  EXPECT_EQ(a.key_version, b.key_version) << s;
  EXPECT_EQ(a.max_length, b.max_length) << s;
  // The exceptions count only with the rule, normalized.
  EXPECT_EQ(a.strip_tracking_params ? NormalizeTrackingExceptions(a.tracking_exceptions)
                                    : std::vector<std::string>(),
            b.strip_tracking_params ? NormalizeTrackingExceptions(b.tracking_exceptions)
                                    : std::vector<std::string>())
      << s;
}

// HandWrittenEncode with the rules added since (stored_version > 0): each only when on, before
// max_length.
std::string WithNewRules(const CanonicalizeOptions& o) {
  std::string s = HandWrittenEncode(o);
  if (o.strip_tracking_params) {
    std::string field = ",strip_tracking_params=1";
    const std::vector<std::string> exceptions = NormalizeTrackingExceptions(o.tracking_exceptions);
    for (size_t i = 0; i < exceptions.size(); ++i) {
      field += (i == 0 ? ",tracking_exceptions=" : ";") + exceptions[i];
    }
    s.insert(s.find(",max_length="), field);
  }
  return s;
}

TEST(StoredCanonicalizeTest, EveryCombinationEncodesAsBeforeAndRoundTrips) {
  static_assert(std::size(kCanonicalizeRules) == 6, "WithRules and WithNewRules know six");
  for (int key_version : {1, kCurrentKeyVersion}) {
    for (size_t max_length : {size_t{2083}, size_t{1}, size_t{65536}}) {
      for (unsigned bits = 0; bits < 64; ++bits) {
        const CanonicalizeOptions o = WithRules(bits, key_version, max_length);
        const std::string s = EncodeStoredCanonicalize(o);
        EXPECT_EQ(s, WithNewRules(o));
        // Without the new rule, what the builds before it wrote; with it, what they refuse.
        if (!o.strip_tracking_params) {
          EXPECT_EQ(s, HandWrittenEncode(o));
        }
        EXPECT_EQ(HandWrittenDecode(s).ok(), !o.strip_tracking_params) << s;
        auto decoded = DecodeStoredCanonicalize(s);
        ASSERT_TRUE(decoded.ok()) << s << ": " << decoded.status().ToString();
        ExpectSame(*decoded, o, s);
      }
    }
  }
}

TEST(StoredCanonicalizeTest, ExactStrings) {
  CanonicalizeOptions o;  // the defaults: current key version, no rules
  EXPECT_EQ(EncodeStoredCanonicalize(o),
            "key_version=2,sort_query=0,drop_empty_query=0,strip_session_ids=0,strip_www=0,"
            "collapse_slashes=0,max_length=2083");
  o.key_version = 1;
  o.sort_query = o.strip_www = true;
  o.max_length = 100;
  EXPECT_EQ(EncodeStoredCanonicalize(o),
            "sort_query=1,drop_empty_query=0,strip_session_ids=0,strip_www=1,collapse_slashes=0,"
            "max_length=100");
}

TEST(StoredCanonicalizeTest, ReadsWhatTheSscanfDecoderRead) {
  // A version-1 string, as states written before key version 2 hold it.
  auto v1 = DecodeStoredCanonicalize(
      "sort_query=1,drop_empty_query=0,strip_session_ids=1,strip_www=0,collapse_slashes=1,"
      "max_length=2083");
  ASSERT_TRUE(v1.ok()) << v1.status().ToString();
  ExpectSame(*v1, WithRules(1 | 4 | 16, 1, 2083), "v1");

  // The old decoder read each value with %u: any non-zero number is on, leading blanks and a
  // sign are accepted, and text after max_length is ignored.
  auto lenient = DecodeStoredCanonicalize(
      "key_version=2,sort_query=7,drop_empty_query= 0,strip_session_ids=+1,strip_www=00,"
      "collapse_slashes=2,max_length=99 and more");
  ASSERT_TRUE(lenient.ok()) << lenient.status().ToString();
  ExpectSame(*lenient, WithRules(1 | 4 | 16, 2, 99), "lenient");

  for (const char* bad : {
           "",
           "max_length=2083",
           "sort_query=1",
           "sort_query=x,drop_empty_query=0,strip_session_ids=0,strip_www=0,collapse_slashes=0,"
           "max_length=1",
           // a rule missing, or out of order
           "sort_query=0,strip_session_ids=0,strip_www=0,collapse_slashes=0,max_length=1",
           "drop_empty_query=0,sort_query=0,strip_session_ids=0,strip_www=0,collapse_slashes=0,"
           "max_length=1",
           // a blank before a name, a missing comma, no max_length value
           "sort_query=0, drop_empty_query=0,strip_session_ids=0,strip_www=0,collapse_slashes=0,"
           "max_length=1",
           "sort_query=0drop_empty_query=0,strip_session_ids=0,strip_www=0,collapse_slashes=0,"
           "max_length=1",
           "sort_query=0,drop_empty_query=0,strip_session_ids=0,strip_www=0,collapse_slashes=0,"
           "max_length=",
       }) {
    auto decoded = DecodeStoredCanonicalize(bad);
    ASSERT_FALSE(decoded.ok()) << "'" << bad << "'";
    EXPECT_EQ(decoded.status().code(), StatusCode::kCorruption) << decoded.status().ToString();
  }

  for (const char* unsupported :
       {"key_version=3,sort_query=0", "key_version=0,sort_query=0", "key_version=2"}) {
    auto decoded = DecodeStoredCanonicalize(unsupported);
    ASSERT_FALSE(decoded.ok()) << unsupported;
    EXPECT_EQ(decoded.status().code(), StatusCode::kUnsupported) << decoded.status().ToString();
  }
}

TEST(StoredCanonicalizeTest, TrackingParamsAreStoredOnlyWhenOnWithTheirExceptions) {
  CanonicalizeOptions o;
  o.tracking_exceptions = {"ignored.example:x"};  // without the rule: not part of the state
  EXPECT_EQ(EncodeStoredCanonicalize(o),
            "key_version=2,sort_query=0,drop_empty_query=0,strip_session_ids=0,strip_www=0,"
            "collapse_slashes=0,max_length=2083");
  o.strip_tracking_params = true;
  o.tracking_exceptions = {"Shop.Example:UTM_SOURCE", "a.example:ref", "bad", "a.example:ref"};
  const std::string s = EncodeStoredCanonicalize(o);
  EXPECT_EQ(s,
            "key_version=2,sort_query=0,drop_empty_query=0,strip_session_ids=0,strip_www=0,"
            "collapse_slashes=0,strip_tracking_params=1,"
            "tracking_exceptions=a.example:ref;shop.example:utm_source,max_length=2083");
  auto decoded = DecodeStoredCanonicalize(s);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_TRUE(decoded->strip_tracking_params);
  EXPECT_EQ(decoded->tracking_exceptions,
            (std::vector<std::string>{"a.example:ref", "shop.example:utm_source"}));
  EXPECT_EQ(EncodeStoredCanonicalize(*decoded), s);
  // The builds before the rule cannot read it: they refuse the state rather than key it without.
  EXPECT_FALSE(HandWrittenDecode(s).ok());

  const std::string head =
      "key_version=2,sort_query=0,drop_empty_query=0,strip_session_ids=0,strip_www=0,"
      "collapse_slashes=0";
  auto without = DecodeStoredCanonicalize(head + ",strip_tracking_params=1,max_length=9");
  ASSERT_TRUE(without.ok()) << without.status().ToString();
  EXPECT_TRUE(without->strip_tracking_params);
  EXPECT_TRUE(without->tracking_exceptions.empty());
  EXPECT_EQ(without->max_length, 9u);

  // A list version this build does not make.
  auto newer = DecodeStoredCanonicalize(head + ",strip_tracking_params=2,max_length=9");
  ASSERT_FALSE(newer.ok());
  EXPECT_EQ(newer.status().code(), StatusCode::kUnsupported) << newer.status().ToString();
  for (const std::string bad : {
           ",strip_tracking_params=,max_length=9",
           ",strip_tracking_params=1,tracking_exceptions=,max_length=9",
           ",strip_tracking_params=1,tracking_exceptions=a.example:x;,max_length=9",
           ",strip_tracking_params=1,tracking_exceptions=nocolon,max_length=9",
           ",strip_tracking_params=1,tracking_exceptions=a.example:x",
           ",tracking_exceptions=a.example:x,max_length=9",
       }) {
    auto decoded_bad = DecodeStoredCanonicalize(head + bad);
    ASSERT_FALSE(decoded_bad.ok()) << bad;
    EXPECT_EQ(decoded_bad.status().code(), StatusCode::kCorruption) << bad;
  }
  // Text after max_length was always ignored (the old decoder's leniency), so nothing there
  // turns the rule on.
  auto after = DecodeStoredCanonicalize(head + ",max_length=9,strip_tracking_params=1");
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_FALSE(after->strip_tracking_params);
}

// Differential: every string one edit away from a valid one is accepted or refused, with the same
// status code and values, by both decoders.
TEST(StoredCanonicalizeTest, AcceptsWhatTheHandWrittenDecoderAccepted) {
  std::vector<std::string> inputs;
  for (int key_version : {1, kCurrentKeyVersion}) {
    for (unsigned bits : {0u, 5u, 31u}) {
      const std::string valid = HandWrittenEncode(WithRules(bits, key_version, 2083));
      inputs.push_back(valid);
      for (size_t i = 0; i <= valid.size(); ++i) {
        if (i < valid.size()) inputs.push_back(valid.substr(0, i) + valid.substr(i + 1));
        if (i < valid.size()) inputs.push_back(valid.substr(0, i));
        for (const char* insert : {" ", "+", "-", ",", "=", "x", "9", "\t", "_"}) {
          inputs.push_back(valid.substr(0, i) + insert + valid.substr(i));
        }
      }
    }
  }
  size_t accepted = 0;
  for (const std::string& input : inputs) {
    auto before = HandWrittenDecode(input);
    auto now = DecodeStoredCanonicalize(input);
    ASSERT_EQ(before.ok(), now.ok()) << "'" << input << "': " << now.status().ToString();
    if (!before.ok()) {
      EXPECT_EQ(before.status().code(), now.status().code()) << "'" << input << "'";
      continue;
    }
    ++accepted;
    ExpectSame(*now, *before, input);
  }
  EXPECT_GT(accepted, 100u);  // the edits do not all make the string unreadable
}

}  // namespace
}  // namespace urlsieve
