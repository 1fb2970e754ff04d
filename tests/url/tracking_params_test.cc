// The known tracking parameters (url/tracking_params.h) and the opt-in rule that strips them
// (CanonicalizeOptions::strip_tracking_params), with its per-host exceptions.
#include "url/tracking_params.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/url/uri_validator.h"
#include "url/url_canonicalizer.h"

namespace urlsieve {
namespace {

// a + b + c, appended: GCC 12 -O3 reports a false -Wrestrict on "x" + std::string.
std::string Cat(std::string_view a, std::string_view b, std::string_view c = {}) {
  std::string s(a);
  s.append(b).append(c);
  return s;
}

// The key for `url` under strip_tracking_params (and `exceptions`), or "error: <reason>"; each
// key is checked to be a valid URI that canonicalizes to itself.
std::string Key(std::string_view url, std::vector<std::string> exceptions = {},
                CanonicalizeOptions options = {}) {
  options.strip_tracking_params = true;
  options.tracking_exceptions = std::move(exceptions);
  const UrlCanonicalizer canonicalizer(options);
  std::string key;
  const Status status = canonicalizer.CanonicalizeTo(url, &key);
  if (!status.ok()) return "error: " + status.message();
  EXPECT_TRUE(testing::IsValidUriKey(key)) << key;
  std::string again;
  EXPECT_TRUE(canonicalizer.CanonicalizeTo(key, &again).ok()) << key;
  EXPECT_EQ(again, key) << "not idempotent for " << url;
  return key;
}

TEST(TrackingParamsTest, EveryEntryMatchesInAnyCase) {
  for (std::string_view name : kTrackingParams) {
    EXPECT_TRUE(IsTrackingParam(name)) << name;
    std::string upper(name);
    for (char& c : upper) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
    EXPECT_TRUE(IsTrackingParam(upper)) << upper;
    // Whole names: nothing longer or shorter matches (no entry is a prefix entry).
    EXPECT_FALSE(IsTrackingParam(Cat(name, "x"))) << name;
    EXPECT_FALSE(IsTrackingParam(name.substr(0, name.size() - 1))) << name;
    EXPECT_FALSE(IsTrackingParam(Cat("x", name))) << name;
  }
  for (std::string_view prefix : kTrackingParamPrefixes) {
    EXPECT_TRUE(IsTrackingParam(prefix)) << prefix;
    EXPECT_TRUE(IsTrackingParam(Cat(prefix, "source"))) << prefix;
    EXPECT_TRUE(IsTrackingParam(Cat(prefix, "Anything_at-all"))) << prefix;
    EXPECT_FALSE(IsTrackingParam(prefix.substr(0, prefix.size() - 1))) << prefix;
    EXPECT_FALSE(IsTrackingParam(Cat("x", prefix, "source"))) << prefix;
  }
}

TEST(TrackingParamsTest, TheNamesTheRuleIsKnownFor) {
  for (std::string_view name :
       {"utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content", "utm_id",
        "UTM_Source", "fbclid", "gclid", "msclkid", "mc_eid", "_hsenc", "yclid", "mtm_campaign",
        "hsa_acc", "pk_campaign"}) {
    EXPECT_TRUE(IsTrackingParam(name)) << name;
  }
  // Names that select content somewhere, or only look like tracking parameters.
  for (std::string_view name :
       {"",    "id",  "page",      "q",      "ref",     "source", "campaign",
        "sid", "utm", "utmsource", "gclid_", "fbclid2", "pk",     "pk_id",
        "mc",  "spm", "__s",       "_g",     "u",       "zzz",    "\xff"}) {
    EXPECT_FALSE(IsTrackingParam(name)) << name;
  }
}

TEST(TrackingParamsTest, StripsKnownParametersOnly) {
  EXPECT_EQ(Key("http://a.example/p?utm_source=news&id=7&utm_medium=mail&fbclid=X1"),
            "http://a.example/p?id=7");
  EXPECT_EQ(Key("http://a.example/p?id=7&GCLID=1&Utm_Campaign=x"), "http://a.example/p?id=7");
  // A query of tracking parameters only loses its '?'.
  EXPECT_EQ(Key("http://a.example/p?utm_source=x&msclkid=y#top"), "http://a.example/p");
  // Without a value, with an empty value, percent-encoded names (normalized before the lookup).
  EXPECT_EQ(Key("http://a.example/?fbclid&a=1&gclid="), "http://a.example/?a=1");
  EXPECT_EQ(Key("http://a.example/?utm%5Fsource=x&a=1&%75tm_id=2"), "http://a.example/?a=1");
  // Values that look like tracking parameters are values.
  EXPECT_EQ(Key("http://a.example/?q=utm_source&x=fbclid%3D1"),
            "http://a.example/?q=utm_source&x=fbclid%3D1");
  // Order and empty parameters are kept as written (sort_query is another rule).
  EXPECT_EQ(Key("http://a.example/?b=2&utm_id=1&&a=1&"), "http://a.example/?b=2&&a=1&");
  EXPECT_EQ(Key("http://a.example/?&utm_id=1"), "http://a.example/?");
  EXPECT_EQ(Key("http://a.example/?"), "http://a.example/?");
  EXPECT_EQ(Key("http://a.example/p"), "http://a.example/p");
  // The path is not a query.
  EXPECT_EQ(Key("http://a.example/utm_source=x/;fbclid=1"),
            "http://a.example/utm_source=x/;fbclid=1");
}

TEST(TrackingParamsTest, SplitsOnAmpersandOnlyAndKeepsAParameterHoldingASemicolon) {
  // "a=1;utm_source=x" is one parameter named a; "utm_source=x;a=1" would be two to a server that
  // splits on ';', so it is kept whole rather than taking a=1 with it.
  EXPECT_EQ(Key("http://a.example/?a=1;utm_source=x&gclid=2"),
            "http://a.example/?a=1;utm_source=x");
  EXPECT_EQ(Key("http://a.example/?utm_source=x;a=1&gclid=2"),
            "http://a.example/?utm_source=x;a=1");
  EXPECT_EQ(Key("http://a.example/?fbclid;x&b=1"), "http://a.example/?fbclid;x&b=1");
}

TEST(TrackingParamsTest, OffByDefault) {
  const UrlCanonicalizer plain;
  std::string key;
  ASSERT_TRUE(plain.CanonicalizeTo("http://a.example/?utm_source=x&fbclid=1", &key).ok());
  EXPECT_EQ(key, "http://a.example/?utm_source=x&fbclid=1");
  CanonicalizeOptions options;
  EXPECT_FALSE(options.strip_tracking_params);
  EXPECT_FALSE(HasOptInRules(options));
  options.strip_tracking_params = true;
  EXPECT_TRUE(HasOptInRules(options));
  // Exceptions without the rule change nothing.
  CanonicalizeOptions exceptions_only;
  exceptions_only.tracking_exceptions = {"a.example:utm_source"};
  ASSERT_TRUE(UrlCanonicalizer(exceptions_only)
                  .CanonicalizeTo("http://a.example/?utm_source=x&fbclid=1", &key)
                  .ok());
  EXPECT_EQ(key, "http://a.example/?utm_source=x&fbclid=1");
}

TEST(TrackingParamsTest, ExceptionsKeepANameOnAHostAndTheHostsUnderIt) {
  const std::vector<std::string> keep = {"shop.example:utm_source", "B.Example:FBCLID"};
  const std::string query = "?utm_source=x&id=1&fbclid=y&gclid=z";
  EXPECT_EQ(Key("http://shop.example/p" + query, keep), "http://shop.example/p?utm_source=x&id=1");
  EXPECT_EQ(Key("http://eu.shop.example/p" + query, keep),
            "http://eu.shop.example/p?utm_source=x&id=1");
  EXPECT_EQ(Key("http://b.example/p" + query, keep), "http://b.example/p?id=1&fbclid=y");
  EXPECT_EQ(Key("http://x.b.example/p?FbClId=y", keep), "http://x.b.example/p?FbClId=y");
  // Not a host under it: a longer label, the parent, another host.
  EXPECT_EQ(Key("http://myshop.example/p" + query, keep), "http://myshop.example/p?id=1");
  EXPECT_EQ(Key("http://example/p" + query, keep), "http://example/p?id=1");
  EXPECT_EQ(Key("http://c.example/p" + query, keep), "http://c.example/p?id=1");
  // Exceptions match the key's host: after strip_www, after IDNA.
  CanonicalizeOptions www;
  www.strip_www = true;
  EXPECT_EQ(Key("http://www.shop.example/p?utm_source=x", {"www.shop.example:utm_source"}, www),
            "http://shop.example/p");
  EXPECT_EQ(Key("http://www.shop.example/p?utm_source=x", keep, www),
            "http://shop.example/p?utm_source=x");
  EXPECT_EQ(Key("http://b\xc3\xbc"
                "cher.de/?utm_id=1",
                {"xn--bcher-kva.de:utm_id"}),
            "http://xn--bcher-kva.de/?utm_id=1");
  // An IP address host.
  EXPECT_EQ(Key("http://10.0.0.1/?gclid=1", {"10.0.0.1:gclid"}), "http://10.0.0.1/?gclid=1");
}

TEST(TrackingParamsTest, WithTheOtherQueryRules) {
  CanonicalizeOptions all;
  all.sort_query = all.strip_session_ids = all.drop_empty_query = true;
  EXPECT_EQ(Key("http://a.example/?z=1&utm_source=x&sid=2&a=3&fbclid=4", {}, all),
            "http://a.example/?a=3&z=1");
  EXPECT_EQ(Key("http://a.example/?utm_source=x&jsessionid=1", {}, all), "http://a.example/");
  EXPECT_EQ(Key("http://a.example/?&&utm_source=x&", {}, all), "http://a.example/");
  CanonicalizeOptions drop;
  drop.drop_empty_query = true;
  EXPECT_EQ(Key("http://a.example/?&utm_id=1", {}, drop), "http://a.example/");
  EXPECT_EQ(Key("http://a.example/?&utm_id=1"), "http://a.example/?");
}

TEST(TrackingParamsTest, CheckTrackingException) {
  for (const char* good : {"example.com:utm_source", "Example.COM:Ref", "a:b", "10.0.0.1:gclid",
                           "xn--bcher-kva.de:x", "a_b-c.d:n.a-m~e_"}) {
    EXPECT_EQ(CheckTrackingException(good), "") << good;
  }
  for (const char* bad :
       {"", "example.com", ":utm_source", "example.com:", ".example.com:x", "example.com.:x",
        "ex ample.com:x", "\xc3\xbc.example:x", "example.com:a=b", "example.com:a&b",
        "example.com:a;b", "example.com:a,b", "example.com:a:b", "[::1]:x", "example.com:%41"}) {
    EXPECT_NE(CheckTrackingException(bad), "") << bad;
  }
  EXPECT_EQ(CheckTrackingException("example.com"),
            "\"example.com\" is not HOST:NAME (e.g. example.com:utm_source)");
  const std::vector<std::string> list = {"ok.example:x", "bad"};
  const Status status = CheckTrackingExceptions(list);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("\"bad\""), std::string::npos) << status.message();
  EXPECT_TRUE(CheckTrackingExceptions(std::vector<std::string>{"ok.example:x"}).ok());
}

TEST(TrackingParamsTest, NormalizedExceptionsAreLowercaseSortedUniqueAndWellFormed) {
  const std::vector<std::string> given = {"B.example:Ref", "a.example:x", "b.EXAMPLE:ref",
                                          "malformed"};
  EXPECT_EQ(NormalizeTrackingExceptions(given),
            (std::vector<std::string>{"a.example:x", "b.example:ref"}));
  CanonicalizeOptions options;
  options.tracking_exceptions = given;
  EXPECT_EQ(UrlCanonicalizer(options).options().tracking_exceptions,
            (std::vector<std::string>{"a.example:x", "b.example:ref"}));
  EXPECT_TRUE(KeepsTrackingParam(NormalizeTrackingExceptions(given), "b.example", "REF"));
  EXPECT_FALSE(KeepsTrackingParam(NormalizeTrackingExceptions(given), "b.example", "x"));
}

}  // namespace
}  // namespace urlsieve
