#include "url/url_canonicalizer.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/support/fuzz_corpus.h"
#include "tests/url/uri_validator.h"

namespace urlsieve {
namespace {

// The key for `url`, or "error: <reason>". Every key produced is also checked for the two
// invariants: it is a valid RFC 3986 URI and canonicalizing it again yields itself.
std::string Key(std::string_view url, const CanonicalizeOptions& options = {}) {
  const UrlCanonicalizer canonicalizer(options);
  std::string key;
  const Status status = canonicalizer.CanonicalizeTo(url, &key);
  if (!status.ok()) {
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    return "error: " + status.message();
  }
  EXPECT_TRUE(testing::IsValidUriKey(key)) << key;
  std::string again;
  EXPECT_TRUE(canonicalizer.CanonicalizeTo(key, &again).ok()) << key;
  EXPECT_EQ(again, key) << "not idempotent for " << url;
  return key;
}

std::string Resolved(std::string_view reference, std::string_view base = "http://a/b/c/d;p?q") {
  const Result<std::string> r = UrlCanonicalizer().Resolve(base, reference);
  return r.ok() ? r.value() : "error: " + r.status().message();
}

TEST(UrlCanonicalizerTest, LowercasesSchemeAndHost) {
  EXPECT_EQ(Key("HTTP://WWW.Example.COM/Path"), "http://www.example.com/Path");
  EXPECT_EQ(Key("hTtPs://example.com/"), "https://example.com/");
}

TEST(UrlCanonicalizerTest, EmptyPathBecomesSlash) {
  EXPECT_EQ(Key("http://example.com"), "http://example.com/");
  EXPECT_EQ(Key("http://example.com?q"), "http://example.com/?q");
}

TEST(UrlCanonicalizerTest, RemovesDefaultPortAndEmptyPort) {
  EXPECT_EQ(Key("http://example.com:80/"), "http://example.com/");
  EXPECT_EQ(Key("https://example.com:443/"), "https://example.com/");
  EXPECT_EQ(Key("http://example.com:/"), "http://example.com/");
  EXPECT_EQ(Key("http://example.com:0080/"), "http://example.com/");
  EXPECT_EQ(Key("http://example.com:443/"), "http://example.com:443/");
  EXPECT_EQ(Key("https://example.com:80/"), "https://example.com:80/");
  EXPECT_EQ(Key("http://example.com:08080/"), "http://example.com:8080/");
  EXPECT_EQ(Key("http://example.com:65535/"), "http://example.com:65535/");
  EXPECT_EQ(Key("http://example.com:0/"), "http://example.com:0/");
}

TEST(UrlCanonicalizerTest, RejectsBadPorts) {
  EXPECT_EQ(Key("http://example.com:65536/"), "error: invalid port");
  EXPECT_EQ(Key("http://example.com:99999999999999999999/"), "error: invalid port");
  EXPECT_EQ(Key("http://example.com:8a/"), "error: invalid port");
  EXPECT_EQ(Key("http://example.com:-1/"), "error: invalid port");
  EXPECT_EQ(Key("http://example.com:80:80/"), "error: invalid port");
}

TEST(UrlCanonicalizerTest, RemovesDotSegments) {
  EXPECT_EQ(Key("http://a/b/c/./../../g"), "http://a/g");
  EXPECT_EQ(Key("http://a/./b/"), "http://a/b/");
  EXPECT_EQ(Key("http://a/b/."), "http://a/b/");
  EXPECT_EQ(Key("http://a/b/.."), "http://a/");
  EXPECT_EQ(Key("http://a/.."), "http://a/");
  EXPECT_EQ(Key("http://a/../../x"), "http://a/x");
  EXPECT_EQ(Key("http://a/b/..."), "http://a/b/...");
  EXPECT_EQ(Key("http://a/b/.c/..d"), "http://a/b/.c/..d");
  EXPECT_EQ(Key("http://a/b//../c"), "http://a/b/c");
}

TEST(UrlCanonicalizerTest, PercentEncodedDotSegmentsAreDotSegments) {
  // WHATWG path state: "%2e" and "%2E" spell '.', so these are dot segments too.
  EXPECT_EQ(Key("http://a/b/%2e/c"), "http://a/b/c");
  EXPECT_EQ(Key("http://a/b/%2E%2e/c"), "http://a/c");
  EXPECT_EQ(Key("http://a/b/.%2E/c"), "http://a/c");
  EXPECT_EQ(Key("http://a/b/%2e./c"), "http://a/c");
  EXPECT_EQ(Key("http://a/b/%2e%2e"), "http://a/");
}

TEST(UrlCanonicalizerTest, NormalizesPercentEncoding) {
  EXPECT_EQ(Key("http://a/%7euser/%61%62c"), "http://a/~user/abc");  // unreserved decoded
  EXPECT_EQ(Key("http://a/%2f%3f%23%26%3d%2b"), "http://a/%2F%3F%23%26%3D%2B");  // reserved kept
  EXPECT_EQ(Key("http://a/p?x=%2f%3F%23%26%3d%2B"), "http://a/p?x=%2F%3F%23%26%3D%2B");
  EXPECT_EQ(Key("http://a/%c3%a9"), "http://a/%C3%A9");  // uppercase hex
  EXPECT_EQ(Key("http://a/%41%5A%30%2D%2E%5F%7E"), "http://a/AZ0-._~");
}

TEST(UrlCanonicalizerTest, LoneOrBrokenPercentBecomesPercent25) {
  EXPECT_EQ(Key("http://a/100%"), "http://a/100%25");
  EXPECT_EQ(Key("http://a/%zz"), "http://a/%25zz");
  EXPECT_EQ(Key("http://a/%4"), "http://a/%254");
  EXPECT_EQ(Key("http://a/?q=%"), "http://a/?q=%25");
  EXPECT_EQ(Key("http://a/%%41"), "http://a/%25A");
}

TEST(UrlCanonicalizerTest, EncodesSpacesControlsAndNonAscii) {
  EXPECT_EQ(Key("http://a/a b?c d"), "http://a/a%20b?c%20d");
  EXPECT_EQ(Key("http://a/\x01\x7f"), "http://a/%01%7F");
  EXPECT_EQ(Key("http://a/caf\xc3\xa9?q=\xe2\x82\xac"), "http://a/caf%C3%A9?q=%E2%82%AC");
  EXPECT_EQ(Key("http://a/<>\"`{}|^[]"), "http://a/%3C%3E%22%60%7B%7D%7C%5E%5B%5D");
  EXPECT_EQ(Key("http://a/?<>\"`{}|^[]\\"), "http://a/?%3C%3E%22%60%7B%7D%7C%5E%5B%5D%5C");
  EXPECT_EQ(Key("http://a/p:@!$&'()*+,;=?/?:@"), "http://a/p:@!$&'()*+,;=?/?:@");
}

TEST(UrlCanonicalizerTest, ApostropheInAQueryIsEncodedAsABrowserSendsIt) {
  // WHATWG URL Standard §1.3: the special-query percent-encode set holds '\'', so a browser sends
  // "?a'b" as "?a%27b": one request, one key.
  EXPECT_EQ(Key("http://a/p?a'b"), "http://a/p?a%27b");
  EXPECT_EQ(Key("http://a/p?a%27b"), "http://a/p?a%27b");
  EXPECT_EQ(Key("https://a/?q='x'&r=%27y%27"), "https://a/?q=%27x%27&r=%27y%27");
  // Not in the path (the path percent-encode set has no '\''), nor after the '#'.
  EXPECT_EQ(Key("http://a/it's?q"), "http://a/it's?q");
  EXPECT_EQ(Key("http://a/it%27s"), "http://a/it%27s");
  EXPECT_EQ(Key("http://a/?q#it's"), "http://a/?q");
  // With the opt-in query rules too.
  CanonicalizeOptions options;
  options.sort_query = options.strip_session_ids = true;
  EXPECT_EQ(Key("http://a/?b='1'&sid=2&a=x", options), "http://a/?a=x&b=%271%27");
  // A state made with key version 1 keeps its keys: '\'' literal.
  options = CanonicalizeOptions{};
  options.key_version = 1;
  EXPECT_EQ(Key("http://a/p?a'b", options), "http://a/p?a'b");
  EXPECT_EQ(Key("http://a/p?a%27b", options), "http://a/p?a%27b");
}

TEST(UrlCanonicalizerTest, StripsSurroundingWhitespaceAndInnerTabsAndNewlines) {
  EXPECT_EQ(Key("  \t http://a/b \x01\x1f "), "http://a/b");
  EXPECT_EQ(Key("ht\ttp://ex\nample.com/p\r\nath"), "http://example.com/path");
}

TEST(UrlCanonicalizerTest, BackslashIsSlashForHttp) {
  EXPECT_EQ(Key("http:\\\\example.com\\a\\b"), "http://example.com/a/b");
  EXPECT_EQ(Key("http://example.com/a\\..\\b"), "http://example.com/b");
  EXPECT_EQ(Key("http://example.com/?a\\b"), "http://example.com/?a%5Cb");  // not in the query
}

TEST(UrlCanonicalizerTest, AnyNumberOfSlashesAfterTheScheme) {
  EXPECT_EQ(Key("http:example.com/x"), "http://example.com/x");
  EXPECT_EQ(Key("http:/example.com/x"), "http://example.com/x");
  EXPECT_EQ(Key("http:////example.com/x"), "http://example.com/x");
}

TEST(UrlCanonicalizerTest, DropsFragment) {
  EXPECT_EQ(Key("http://a/b#frag"), "http://a/b");
  EXPECT_EQ(Key("http://a/b?q#frag?x"), "http://a/b?q");
  EXPECT_EQ(Key("http://a#"), "http://a/");
}

TEST(UrlCanonicalizerTest, DropsUserinfo) {
  EXPECT_EQ(Key("http://user:pass@example.com/"), "http://example.com/");
  EXPECT_EQ(Key("http://a@b@example.com:81/"), "http://example.com:81/");
  EXPECT_EQ(Key("http://user@/"), "error: empty host");
}

TEST(UrlCanonicalizerTest, KeepsQueryAsWrittenByDefault) {
  EXPECT_EQ(Key("http://a/p?"), "http://a/p?");
  EXPECT_EQ(Key("http://a/p?b=2&a=1&jsessionid=x"), "http://a/p?b=2&a=1&jsessionid=x");
  EXPECT_EQ(Key("http://a//b"), "http://a//b");
  EXPECT_EQ(Key("http://www.a.com/"), "http://www.a.com/");
}

TEST(UrlCanonicalizerTest, IdnHostsBecomePunycode) {
  EXPECT_EQ(Key("http://b\xc3\xbc"
                "cher.de/"),
            "http://xn--bcher-kva.de/");
  EXPECT_EQ(Key("http://B\xc3\x9c"
                "CHER.de/"),
            "http://xn--bcher-kva.de/");
  EXPECT_EQ(Key("http://XN--BCHER-KVA.de/"), "http://xn--bcher-kva.de/");
  EXPECT_EQ(Key("http://b%C3%BCcher.de/"), "http://xn--bcher-kva.de/");  // decoded first
  // Non-transitional (IDNA2008): sharp s is kept, not mapped to "ss".
  EXPECT_EQ(Key("http://fa\xc3\x9f.de/"), "http://xn--fa-hia.de/");
  // UTS #46 mapping: fullwidth letters and the ideographic full stop.
  EXPECT_EQ(Key("http://\xef\xbd\x85xample\xe3\x80\x82"
                "com/"),
            "http://example.com/");
  // Falls back to transitional processing for symbols IDNA2008 disallows.
  EXPECT_EQ(Key("http://\xf0\x9f\x92\xa9.la/"), "http://xn--ls8h.la/");
}

TEST(UrlCanonicalizerTest, RejectsInvalidIdn) {
  EXPECT_EQ(Key("http://xn--zz.de/"),
            "error: invalid international host (IDN2_PUNYCODE_BAD_INPUT)");
  EXPECT_EQ(Key("http://xn--.com/"), "error: invalid international host (IDN2_PUNYCODE_BAD_INPUT)");
  EXPECT_EQ(Key("http://%ff.com/"), "error: invalid UTF-8 in host");
  // UTS #46 §4.1: an "xn--" label must map to itself: not an uppercase U+00DC (mapped to ü), not
  // "u" and a combining diaeresis (not NFC).
  EXPECT_EQ(Key("http://xn--bcher-2pa.de/"),
            "error: invalid international host (IDN2_ALABEL_ROUNDTRIP_FAILED)");
  EXPECT_EQ(Key("http://xn--bucher-xyd.de/"),
            "error: invalid international host (IDN2_ALABEL_ROUNDTRIP_FAILED)");
  EXPECT_EQ(Key("http://xn--abc-.de/"),  // punycode of plain ASCII
            "error: invalid international host (IDN2_PUNYCODE_BAD_INPUT)");
}

// web-platform-tests url/resources/toascii.json (UTS #46 ToASCII as the URL Standard runs it:
// CheckHyphens=false, CheckBidi, CheckJoiners, UseSTD3ASCIIRules=false, non-transitional,
// VerifyDnsLength=false), run like the WPT harness does: as the host of "https://<input>/x".
// nullptr: the URL is rejected.
TEST(UrlCanonicalizerTest, WptToAscii) {
  struct Case {
    const char* input;
    const char* output;
  };
  const std::string long_label = "x01234567890123456789012345678901234567890123456789012345678901x";
  const std::string long_domain =
      "01234567890123456789012345678901234567890123456789.01234567890123456789012345678901234567890"
      "123456789.01234567890123456789012345678901234567890123456789.0123456789012345678901234567890"
      "1234567890123456789.0123456789012345678901234567890123456789012345678";
  const Case cases[] = {
      // Label with hyphens in 3rd and 4th position
      {"aa--", "aa--"},
      {"a\u2020--", "xn--a---kp0a"},
      {"ab--c", "ab--c"},
      // Label with leading hyphen
      {"-x", "-x"},
      {"-\u2020", "xn----xhn"},
      {"-x.xn--zca", "-x.xn--zca"},
      {"-x.\u00df", "-x.xn--zca"},
      // Label with trailing hyphen
      {"x-.xn--zca", "x-.xn--zca"},
      {"x-.\u00df", "x-.xn--zca"},
      // Empty labels
      {"x..xn--zca", "x..xn--zca"},
      {"x..\u00df", "x..xn--zca"},
      // Invalid Punycode
      {"xn--a", nullptr},
      {"xn--a.xn--zca", nullptr},
      {"xn--a.\u00df", nullptr},
      {"xn--ls8h=", nullptr},
      // Invalid Punycode (contains non-ASCII character)
      {"xn--te\u0161la", nullptr},
      // Valid Punycode
      {"xn--zca.xn--zca", "xn--zca.xn--zca"},
      // Mixed
      {"xn--zca.\u00df", "xn--zca.xn--zca"},
      {"ab--c.xn--zca", "ab--c.xn--zca"},
      {"ab--c.\u00df", "ab--c.xn--zca"},
      // CheckJoiners is true
      {"\u200d.example", nullptr},
      {"xn--1ug.example", nullptr},
      // CheckBidi is true
      {"\u064aa", nullptr},
      {"\u064a.", "xn--mhb."},
      {"1.\u064a", "1.xn--mhb"},
      {"\u064a.1", nullptr},
      {"xn--mhb.1", nullptr},
      {"xn--a-yoc", nullptr},
      // processing_option is Nontransitional_Processing
      {"\u0dc1\u0dca\u200d\u0dbb\u0dd3", "xn--10cl1a0b660p"},
      {"\u0646\u0627\u0645\u0647\u200c\u0627\u06cc", "xn--mgba3gch31f060k"},
      // U+FFFD
      {"\ufffd.com", nullptr},
      // U+FFFD character encoded in Punycode
      {"xn--zn7c.com", nullptr},
      // IDNA ignored code points
      {"a\u00adb", "ab"},
      // Interesting UseSTD3ASCIIRules=false cases
      {"\u2260", "xn--1ch"},
      {"\u226e", "xn--gdh"},
      {"\u226f", "xn--hdh"},
  };
  for (const Case& c : cases) {
    const std::string key = Key("https://" + std::string(c.input) + "/x");
    if (c.output != nullptr) {
      EXPECT_EQ(key, "https://" + std::string(c.output) + "/x") << c.input;
    } else {
      EXPECT_EQ(key.substr(0, 7), "error: ") << c.input << " -> " << key;
    }
  }
  // Label longer than 63 code points; domain excluding TLD longer than 253 code points.
  EXPECT_EQ(Key("https://" + long_label + "/x"), "https://" + long_label + "/x");
  EXPECT_EQ(Key("https://" + long_label + ".xn--zca/x"), "https://" + long_label + ".xn--zca/x");
  EXPECT_EQ(Key("https://" + long_label + ".\u00df/x"), "https://" + long_label + ".xn--zca/x");
  EXPECT_EQ(Key("https://" + long_domain + ".x/x"), "https://" + long_domain + ".x/x");
  EXPECT_EQ(Key("https://" + long_domain + ".xn--zca/x"), "https://" + long_domain + ".xn--zca/x");
  EXPECT_EQ(Key("https://" + long_domain + ".\u00df/x"), "https://" + long_domain + ".xn--zca/x");
  // Known limit (idna_host.h): libidn2 holds an internationalized label in 63 bytes, so this one,
  // which the URL Standard accepts as "xn--x0123...901-6963b", is refused. DNS could not resolve
  // it.
  EXPECT_EQ(Key("https://x01234567890123456789012345678901234567890123456789012345678901"
                "\u2020/x"),
            "error: invalid international host (IDN2_PUNYCODE_BIG_OUTPUT)");
}

// Host cases of web-platform-tests url/resources/urltestdata.json that go through IDNA.
TEST(UrlCanonicalizerTest, WptUrlTestDataHosts) {
  EXPECT_EQ(Key("http://www.foo\u3002bar.com"), "http://www.foo.bar.com/");
  EXPECT_EQ(Key("http://\uff27\uff4f.com"), "http://go.com/");
  EXPECT_EQ(Key("http://\u4f60\u597d\u4f60\u597d"), "http://xn--6qqa088eba/");
  EXPECT_EQ(Key("https://fa\u00df.ExAmPlE/"), "https://xn--fa-hia.example/");
  EXPECT_EQ(Key("http://\uff05\uff14\uff11.com"), "error: forbidden host code point");
  EXPECT_EQ(Key("http://\u00ad/"), "error: empty host");
  for (std::string_view host :
       {"a.b.c.xn--pokxncvks", "10.0.0.xn--pokxncvks", "a.b.c.XN--pokxncvks", "a.b.c.Xn--pokxncvks",
        "10.0.0.XN--pokxncvks", "10.0.0.xN--pokxncvks"}) {
    EXPECT_EQ(Key("http://" + std::string(host) + "/").substr(0, 7), "error: ") << host;
  }
}

TEST(UrlCanonicalizerTest, RejectsForbiddenHostCodePoints) {
  for (std::string_view host : {"a b", "a<b", "a>b", "a^b", "a|b", "a%b", "a%25b", "a%00b", "a%20b",
                                "a\"b", "a{b", "a`b", "a%7Fb", "a]b", "a[b"}) {
    EXPECT_EQ(Key("http://" + std::string(host) + "/"), "error: forbidden host code point") << host;
  }
  // A fullwidth '<' maps to '<' under UTS #46, and is then rejected like the ASCII one.
  EXPECT_EQ(Key("http://a\xef\xbc\x9c"
                "b/"),
            "error: forbidden host code point");
  EXPECT_EQ(Key("http://a_b.example.com/"), "http://a_b.example.com/");  // allowed, not STD3
}

TEST(UrlCanonicalizerTest, Ipv4NumberForms) {
  EXPECT_EQ(Key("http://127.0.0.1/"), "http://127.0.0.1/");
  EXPECT_EQ(Key("http://0x7f.1/"), "http://127.0.0.1/");
  EXPECT_EQ(Key("http://2130706433/"), "http://127.0.0.1/");
  EXPECT_EQ(Key("http://0177.0.0.1/"), "http://127.0.0.1/");
  EXPECT_EQ(Key("http://0x7F.0.0.01/"), "http://127.0.0.1/");
  EXPECT_EQ(Key("http://127.1/"), "http://127.0.0.1/");
  EXPECT_EQ(Key("http://127.0.1/"), "http://127.0.0.1/");
  EXPECT_EQ(Key("http://0x7f000001/"), "http://127.0.0.1/");
  EXPECT_EQ(Key("http://127.0.0.1./"), "http://127.0.0.1/");
  EXPECT_EQ(Key("http://0/"), "http://0.0.0.0/");
  EXPECT_EQ(Key("http://0x/"), "http://0.0.0.0/");
  EXPECT_EQ(Key("http://255.255.255.255/"), "http://255.255.255.255/");
  EXPECT_EQ(Key("http://4294967295/"), "http://255.255.255.255/");
  EXPECT_EQ(Key("http://%31%32%37.0.0.1/"), "http://127.0.0.1/");
  // Fullwidth digits become ASCII under UTS #46 and are then parsed as an address.
  EXPECT_EQ(Key("http://\xef\xbc\x91\xef\xbc\x92\xef\xbc\x97.0.0.1/"), "http://127.0.0.1/");
}

TEST(UrlCanonicalizerTest, HostsThatEndInANumberMustBeIpv4) {
  EXPECT_EQ(Key("http://256.0.0.1/"), "error: invalid IPv4 address");
  EXPECT_EQ(Key("http://4294967296/"), "error: invalid IPv4 address");
  EXPECT_EQ(Key("http://1.2.3.4.5/"), "error: invalid IPv4 address");
  EXPECT_EQ(Key("http://1.2.3.256/"), "error: invalid IPv4 address");
  EXPECT_EQ(Key("http://1.2.65536/"), "error: invalid IPv4 address");
  EXPECT_EQ(Key("http://08.0.0.1/"), "error: invalid IPv4 address");  // 8 is not octal
  EXPECT_EQ(Key("http://example.123/"), "error: invalid IPv4 address");
  EXPECT_EQ(Key("http://1..2/"), "error: invalid IPv4 address");
  EXPECT_EQ(Key("http://0xg.com/"), "http://0xg.com/");  // last label is not a number
  EXPECT_EQ(Key("http://1.2.3.4a/"), "http://1.2.3.4a/");
  EXPECT_EQ(Key("http://example.com./"), "http://example.com./");
}

TEST(UrlCanonicalizerTest, Ipv6Literals) {
  EXPECT_EQ(Key("http://[2001:DB8:0:0:0:0:0:1]/"), "http://[2001:db8::1]/");
  EXPECT_EQ(Key("http://[2001:0db8:0000:0000:0001:0000:0000:0001]/"),
            "http://[2001:db8::1:0:0:1]/");  // RFC 5952 §4.2.3: the first longest run
  EXPECT_EQ(Key("http://[2001:db8:0:1:1:1:1:1]/"), "http://[2001:db8:0:1:1:1:1:1]/");  // §4.2.2
  EXPECT_EQ(Key("http://[0:0:0:0:0:0:0:0]/"), "http://[::]/");
  EXPECT_EQ(Key("http://[::1]:8080/"), "http://[::1]:8080/");
  EXPECT_EQ(Key("http://[::1]:80/"), "http://[::1]/");
  EXPECT_EQ(Key("http://[1::]/"), "http://[1::]/");
  EXPECT_EQ(Key("http://[::ffff:192.0.2.1]/"), "http://[::ffff:c000:201]/");
  EXPECT_EQ(Key("http://[::127.0.0.1]/"), "http://[::7f00:1]/");
  EXPECT_EQ(Key("http://[1:2:3:4:5:6:1.2.3.4]/"), "http://[1:2:3:4:5:6:102:304]/");
}

TEST(UrlCanonicalizerTest, RejectsBadIpv6) {
  for (std::string_view host :
       {"[::1", "[1:2:3:4:5:6:7:8:9]", "[:1]", "[1:::2]", "[1::2::3]", "[12345::]", "[::1.2.3]",
        "[::1.2.3.4.5]", "[::01.2.3.4]", "[::256.0.0.1]", "[1:2:3:4:5:6:7:1.2.3.4]", "[g::]",
        "[fe80::1%25eth0]", "[::1]x", "[]", "[1:2]"}) {
    EXPECT_EQ(Key("http://" + std::string(host) + "/"), "error: invalid IPv6 address") << host;
  }
}

TEST(UrlCanonicalizerTest, RejectsOtherSchemes) {
  EXPECT_EQ(Key("javascript:alert(1)"), "error: unsupported scheme 'javascript'");
  EXPECT_EQ(Key("mailto:a@b.c"), "error: unsupported scheme 'mailto'");
  EXPECT_EQ(Key("data:text/plain,hi"), "error: unsupported scheme 'data'");
  EXPECT_EQ(Key("FILE:///etc/passwd"), "error: unsupported scheme 'file'");
  EXPECT_EQ(Key("ftp://example.com/"), "error: unsupported scheme 'ftp'");
  EXPECT_EQ(Key("httpx://example.com/"), "error: unsupported scheme 'httpx'");
}

TEST(UrlCanonicalizerTest, RejectsRelativeAndEmptyInput) {
  EXPECT_EQ(Key("/path"), "error: relative URL without a base");
  EXPECT_EQ(Key("example.com/path"), "error: relative URL without a base");
  EXPECT_EQ(Key("//example.com/"), "error: relative URL without a base");
  EXPECT_EQ(Key(""), "error: empty url");
  EXPECT_EQ(Key(" \t\n "), "error: empty url");
}

TEST(UrlCanonicalizerTest, RejectsEmptyHost) {
  EXPECT_EQ(Key("http://"), "error: empty host");
  EXPECT_EQ(Key("http:///"), "error: empty host");
  EXPECT_EQ(Key("http://:80/"), "error: empty host");
  EXPECT_EQ(Key("http://?q"), "error: empty host");
  EXPECT_EQ(Key("https://#f"), "error: empty host");
}

TEST(UrlCanonicalizerTest, RejectsInvalidUtf8) {
  EXPECT_EQ(Key("http://a/\xff"), "error: invalid UTF-8");
  EXPECT_EQ(Key("http://a/\xc3"), "error: invalid UTF-8");
  EXPECT_EQ(Key("http://a/\xc0\xaf"), "error: invalid UTF-8");      // overlong '/'
  EXPECT_EQ(Key("http://a/\xed\xa0\x80"), "error: invalid UTF-8");  // surrogate
  // Percent-encoded bytes are data, not text: they are kept as they are.
  EXPECT_EQ(Key("http://a/%FF"), "http://a/%FF");
}

TEST(UrlCanonicalizerTest, RejectsOverlongInput) {
  const std::string url = "http://a/" + std::string(2100, 'x');
  EXPECT_EQ(Key(url), "error: url too long (2109 > 2083 bytes)");
  CanonicalizeOptions options;
  options.max_length = 20;
  EXPECT_EQ(Key("http://example.com/1", options), "http://example.com/1");
  EXPECT_EQ(Key("http://example.com/12", options), "error: url too long (21 > 20 bytes)");
  // The key may also not outgrow the limit, or it could not be canonicalized again.
  EXPECT_EQ(Key("http://a/\xc3\xa9\xc3\xa9", options), "error: url too long (21 > 20 bytes)");
}

TEST(UrlCanonicalizerTest, SortQuery) {
  CanonicalizeOptions options;
  options.sort_query = true;
  EXPECT_EQ(Key("http://a/?b=2&a=1&c=3", options), "http://a/?a=1&b=2&c=3");
  EXPECT_EQ(Key("http://a/?b=2&a=9&a=1&b=1", options), "http://a/?a=9&a=1&b=2&b=1");  // stable
  EXPECT_EQ(Key("http://a/?b&a=&a", options), "http://a/?a=&a&b");
  EXPECT_EQ(Key("http://a/?", options), "http://a/?");
  EXPECT_EQ(Key("http://a/?b=2&&a=1&", options), "http://a/?a=1&b=2");  // empty params go
  EXPECT_EQ(Key("http://a/?&&", options), "http://a/?");
  // Many parameters (the path beyond the small-array sort): still by name, still stable.
  std::string query, expected_a, expected_b;
  for (int i = 0; i < 40; ++i) {
    const std::string param = std::string(i % 2 ? "b=" : "a=") + std::to_string(i);
    query += (i ? "&" : "") + param;
    (i % 2 ? expected_b : expected_a) += "&" + param;
  }
  EXPECT_EQ(Key("http://a/?" + query, options), "http://a/?" + expected_a.substr(1) + expected_b);
}

TEST(UrlCanonicalizerTest, DropEmptyQuery) {
  CanonicalizeOptions options;
  options.drop_empty_query = true;
  EXPECT_EQ(Key("http://a/p?", options), "http://a/p");
  EXPECT_EQ(Key("http://a/p?#f", options), "http://a/p");
  EXPECT_EQ(Key("http://a/p?x", options), "http://a/p?x");
}

TEST(UrlCanonicalizerTest, StripSessionIds) {
  CanonicalizeOptions options;
  options.strip_session_ids = true;
  EXPECT_EQ(Key("http://a/p?JSESSIONID=1&x=2&PHPSESSID=3&sid=4", options), "http://a/p?x=2");
  EXPECT_EQ(Key("http://a/p?aspsessionid=1&CFID=2&cftoken=3", options), "http://a/p");
  EXPECT_EQ(Key("http://a/p?sidebar=1&sid", options), "http://a/p?sidebar=1");
  EXPECT_EQ(Key("http://a/p;jsessionid=ABC123?x=1", options), "http://a/p?x=1");
  EXPECT_EQ(Key("http://a/p;JSessionId=ABC;v=1/q", options), "http://a/p;v=1/q");
  EXPECT_EQ(Key("http://a/b/..;jsessionid=1/c", options), "http://a/c");
  EXPECT_EQ(Key("http://a/p?", options), "http://a/p?");
}

TEST(UrlCanonicalizerTest, StripWww) {
  CanonicalizeOptions options;
  options.strip_www = true;
  EXPECT_EQ(Key("http://www.example.com/", options), "http://example.com/");
  EXPECT_EQ(Key("http://WWW.www.example.com/", options), "http://example.com/");
  EXPECT_EQ(Key("http://www2.example.com/", options), "http://www2.example.com/");
  EXPECT_EQ(Key("http://www./", options), "http://www./");
  EXPECT_EQ(Key("http://wwwexample.com/", options), "http://wwwexample.com/");
}

TEST(UrlCanonicalizerTest, CollapseSlashes) {
  CanonicalizeOptions options;
  options.collapse_slashes = true;
  EXPECT_EQ(Key("http://a//b///c", options), "http://a/b/c");
  EXPECT_EQ(Key("http://a/b//", options), "http://a/b/");
  EXPECT_EQ(Key("http://a/b//../c", options), "http://a/c");
  EXPECT_EQ(Key("http://a/?x=//", options), "http://a/?x=//");
}

TEST(UrlCanonicalizerTest, AllCrawlerRulesTogether) {
  CanonicalizeOptions options;
  options.sort_query = options.drop_empty_query = options.strip_session_ids = true;
  options.strip_www = options.collapse_slashes = options.strip_tracking_params = true;
  EXPECT_EQ(
      Key("HTTP://WWW.Example.com:80//a/./b//c;jsessionid=9?z=1&sid=2&a=%7e&utm_id=3#x", options),
      "http://example.com/a/b/c?a=~&z=1");
  EXPECT_EQ(Key("http://www.example.com/?phpsessid=1", options), "http://example.com/");
}

TEST(UrlCanonicalizerTest, CanonicalUrlComponents) {
  const UrlCanonicalizer canonicalizer;
  Result<CanonicalUrl> url = canonicalizer.Canonicalize("HTTPS://Example.com:8443/a/b?x=1#f");
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  EXPECT_EQ(url->key(), "https://example.com:8443/a/b?x=1");
  EXPECT_EQ(url->scheme(), "https");
  EXPECT_EQ(url->host(), "example.com");
  EXPECT_EQ(url->port(), 8443);
  EXPECT_EQ(url->origin(), "https://example.com:8443");
  EXPECT_EQ(url->path(), "/a/b");
  EXPECT_TRUE(url->has_query());
  EXPECT_EQ(url->query(), "x=1");
  EXPECT_EQ(url->path_and_query(), "/a/b?x=1");

  url = canonicalizer.Canonicalize("http://[::1]");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->scheme(), "http");
  EXPECT_EQ(url->host(), "[::1]");
  EXPECT_EQ(url->port(), 80);
  EXPECT_EQ(url->origin(), "http://[::1]");
  EXPECT_EQ(url->path(), "/");
  EXPECT_FALSE(url->has_query());
  EXPECT_EQ(url->query(), "");

  url = canonicalizer.Canonicalize("https://a/p?");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->port(), 443);
  EXPECT_TRUE(url->has_query());
  EXPECT_EQ(url->query(), "");

  url = canonicalizer.Canonicalize("mailto:x@y");
  ASSERT_FALSE(url.ok());
  EXPECT_EQ(url.status().ToString(), "invalid argument: unsupported scheme 'mailto'");
}

TEST(UrlCanonicalizerTest, CanonicalizeToReusesTheKeyString) {
  const UrlCanonicalizer canonicalizer;
  std::string key = "previous contents that are longer than the next key";
  ASSERT_TRUE(canonicalizer.CanonicalizeTo("http://a/", &key).ok());
  EXPECT_EQ(key, "http://a/");
  ASSERT_TRUE(canonicalizer.CanonicalizeTo("http://example.com/a/much/longer/path", &key).ok());
  EXPECT_EQ(key, "http://example.com/a/much/longer/path");
}

TEST(UrlCanonicalizerTest, SpellingsOfOneUrlShareAKey) {
  const std::string expected = "http://xn--bcher-kva.de/a%20b/~c?q=%2F";
  for (std::string_view spelling : {"http://b\xc3\xbc"
                                    "cher.de/a b/~c?q=%2F",
                                    "HTTP://B\xc3\x9c"
                                    "CHER.DE:80/a%20b/%7Ec?q=%2f",
                                    "  http://xn--bcher-kva.de/x/../a%20b/./%7ec?q=%2f#top ",
                                    "http://user@b%C3%BCcher.de/a%20b/%7e%63?q=%2F",
                                    "http:\\\\b\xc3\xbc"
                                    "cher.de\\a b\\~c?q=%2F"}) {
    EXPECT_EQ(Key(spelling), expected) << spelling;
  }
}

// The fuzzer's seed corpus (first byte: option flags, rest: the URL) under every combination of
// crawler rules: Key() checks validity and idempotence of every key, as the fuzzer does.
TEST(UrlCanonicalizerTest, FuzzCorpusKeepsInvariants) {
  int files = 0;
  for (const auto& [name, data] : testing::FuzzCorpus("canonicalize")) {
    if (data.empty()) continue;
    ++files;
    for (int flags = 0; flags < 64; ++flags) {
      CanonicalizeOptions options;
      options.sort_query = flags & 1;
      options.drop_empty_query = flags & 2;
      options.strip_session_ids = flags & 4;
      options.strip_www = flags & 8;
      options.collapse_slashes = flags & 16;
      options.strip_tracking_params = flags & 32;
      options.tracking_exceptions = {"a:utm_source", "example.com:gclid"};
      const std::string url = data.substr(1);
      Key(url, options);
      const Result<std::string> resolved =
          UrlCanonicalizer(options).Resolve("http://a/b/c/d;p?q", url);
      if (resolved.ok()) Key(resolved.value(), options);
    }
  }
  EXPECT_GE(files, 10);
}

// RFC 3986 §5.4.1, normal examples. Keys drop fragments, so "#s" results lose theirs.
TEST(UrlCanonicalizerResolveTest, Rfc3986NormalExamples) {
  EXPECT_EQ(Resolved("g:h"), "error: unsupported scheme 'g'");  // RFC: "g:h"; not http(s)
  EXPECT_EQ(Resolved("g"), "http://a/b/c/g");
  EXPECT_EQ(Resolved("./g"), "http://a/b/c/g");
  EXPECT_EQ(Resolved("g/"), "http://a/b/c/g/");
  EXPECT_EQ(Resolved("/g"), "http://a/g");
  EXPECT_EQ(Resolved("//g"), "http://g");
  EXPECT_EQ(Resolved("?y"), "http://a/b/c/d;p?y");
  EXPECT_EQ(Resolved("g?y"), "http://a/b/c/g?y");
  EXPECT_EQ(Resolved("#s"), "http://a/b/c/d;p?q");
  EXPECT_EQ(Resolved("g#s"), "http://a/b/c/g");
  EXPECT_EQ(Resolved("g?y#s"), "http://a/b/c/g?y");
  EXPECT_EQ(Resolved(";x"), "http://a/b/c/;x");
  EXPECT_EQ(Resolved("g;x"), "http://a/b/c/g;x");
  EXPECT_EQ(Resolved("g;x?y#s"), "http://a/b/c/g;x?y");
  EXPECT_EQ(Resolved(""), "http://a/b/c/d;p?q");
  EXPECT_EQ(Resolved("."), "http://a/b/c/");
  EXPECT_EQ(Resolved("./"), "http://a/b/c/");
  EXPECT_EQ(Resolved(".."), "http://a/b/");
  EXPECT_EQ(Resolved("../"), "http://a/b/");
  EXPECT_EQ(Resolved("../g"), "http://a/b/g");
  EXPECT_EQ(Resolved("../.."), "http://a/");
  EXPECT_EQ(Resolved("../../"), "http://a/");
  EXPECT_EQ(Resolved("../../g"), "http://a/g");
}

// RFC 3986 §5.4.2, abnormal examples.
TEST(UrlCanonicalizerResolveTest, Rfc3986AbnormalExamples) {
  EXPECT_EQ(Resolved("../../../g"), "http://a/g");
  EXPECT_EQ(Resolved("../../../../g"), "http://a/g");
  EXPECT_EQ(Resolved("/./g"), "http://a/g");
  EXPECT_EQ(Resolved("/../g"), "http://a/g");
  EXPECT_EQ(Resolved("g."), "http://a/b/c/g.");
  EXPECT_EQ(Resolved(".g"), "http://a/b/c/.g");
  EXPECT_EQ(Resolved("g.."), "http://a/b/c/g..");
  EXPECT_EQ(Resolved("..g"), "http://a/b/c/..g");
  EXPECT_EQ(Resolved("./../g"), "http://a/b/g");
  EXPECT_EQ(Resolved("./g/."), "http://a/b/c/g/");
  EXPECT_EQ(Resolved("g/./h"), "http://a/b/c/g/h");
  EXPECT_EQ(Resolved("g/../h"), "http://a/b/c/h");
  EXPECT_EQ(Resolved("g;x=1/./y"), "http://a/b/c/g;x=1/y");
  EXPECT_EQ(Resolved("g;x=1/../y"), "http://a/b/c/y");
  EXPECT_EQ(Resolved("g?y/./x"), "http://a/b/c/g?y/./x");
  EXPECT_EQ(Resolved("g?y/../x"), "http://a/b/c/g?y/../x");
  EXPECT_EQ(Resolved("g#s/./x"), "http://a/b/c/g");
  EXPECT_EQ(Resolved("g#s/../x"), "http://a/b/c/g");
  // "for backward compatibility": http:g against an http base is the relative reference g.
  EXPECT_EQ(Resolved("http:g"), "http://a/b/c/g");
}

TEST(UrlCanonicalizerResolveTest, AbsoluteReferences) {
  EXPECT_EQ(Resolved("https://other.org/x/../y?z#f"), "https://other.org/y?z");
  EXPECT_EQ(Resolved("https:other.org/x"), "https://other.org/x");  // other scheme: authority
  EXPECT_EQ(Resolved("HTTP://Other.org"), "http://Other.org");      // not canonicalized
  EXPECT_EQ(Resolved("http:/g"), "http://a/g");                     // same scheme: relative
  EXPECT_EQ(Resolved("javascript:void(0)"), "error: unsupported scheme 'javascript'");
  EXPECT_EQ(Resolved("mailto:a@b.c"), "error: unsupported scheme 'mailto'");
}

TEST(UrlCanonicalizerResolveTest, BrowserLeniencies) {
  EXPECT_EQ(Resolved("  ../g\t\n "), "http://a/b/g");
  EXPECT_EQ(Resolved("..\\g\\h?x\\y"), "http://a/b/g/h?x%5Cy");
  EXPECT_EQ(Resolved("\\\\host\\p"), "http://host/p");
  EXPECT_EQ(Resolved("a b/\xc3\xa9?c d"), "http://a/b/c/a%20b/%C3%A9?c%20d");
  EXPECT_EQ(Resolved("%7e/%zz"), "http://a/b/c/%7e/%zz");  // existing '%' kept as written
  EXPECT_EQ(Resolved("user:pw@x"), "error: unsupported scheme 'user'");
  EXPECT_EQ(Resolved("//user:pw@x/p"), "http://user:pw@x/p");
}

TEST(UrlCanonicalizerResolveTest, ApostropheInTheQueryIsEncoded) {
  EXPECT_EQ(Resolved("it's?q='x'"), "http://a/b/c/it's?q=%27x%27");
  EXPECT_EQ(Resolved("?q=%27x'"), "http://a/b/c/d;p?q=%27x%27");
  EXPECT_EQ(Resolved("g", "http://a/b?q='x'"), "http://a/g");
  EXPECT_EQ(Resolved("", "http://a/b?q='x'"), "http://a/b?q=%27x%27");
  CanonicalizeOptions version1;
  version1.key_version = 1;
  EXPECT_EQ(UrlCanonicalizer(version1).Resolve("http://a/", "?q='x'").value(), "http://a/?q='x'");
}

TEST(UrlCanonicalizerResolveTest, BaseVariants) {
  EXPECT_EQ(Resolved("g", "http://a"), "http://a/g");  // §5.2.3: empty base path merges as "/"
  EXPECT_EQ(Resolved("?q", "http://a"), "http://a?q");
  EXPECT_EQ(Resolved("g", "  HTTPS://a/b\\c  "), "https://a/b/g");
  EXPECT_EQ(Resolved("g", "/relative"), "error: base is not an absolute URL");
  EXPECT_EQ(Resolved("g", "ftp://a/"), "error: unsupported scheme 'ftp'");
  EXPECT_EQ(Resolved("g", "http://?q"), "error: empty host");
  EXPECT_EQ(Resolved("g", "http:///x/"), "http://x/g");  // any number of slashes
  const std::string long_ref(2100, 'x');
  EXPECT_EQ(Resolved(long_ref), "error: url too long (2100 > 2083 bytes)");
}

TEST(UrlCanonicalizerResolveTest, ResolvedThenCanonicalized) {
  EXPECT_EQ(Key(Resolved("g?y/./x")), "http://a/b/c/g?y/./x");
  EXPECT_EQ(Key(Resolved("./%2E%2E/G")), "http://a/b/G");
  EXPECT_EQ(Key(Resolved("//WWW.B\xc3\x9c"
                         "CHER.de:80")),
            "http://www.xn--bcher-kva.de/");
}

}  // namespace
}  // namespace urlsieve
