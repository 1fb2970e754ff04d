#include "url/ipv6_host.h"

#include <gtest/gtest.h>

#include <string>

namespace urlsieve {
namespace {

std::string Canonical(std::string_view text) {
  const std::optional<Ipv6Address> address = ParseIpv6(text);
  if (!address) return "invalid";
  char buf[40];
  return std::string(buf, FormatIpv6(*address, buf));
}

// RFC 5952 §4: lowercase, no leading zeros, "::" for the first longest run of 2+ zero pieces.
TEST(Ipv6HostTest, Rfc5952CanonicalForm) {
  EXPECT_EQ(Canonical("2001:0DB8:0000:0000:0000:0000:0000:0001"), "2001:db8::1");
  EXPECT_EQ(Canonical("2001:db8:0:0:1:0:0:1"), "2001:db8::1:0:0:1");     // §4.2.3: first run
  EXPECT_EQ(Canonical("2001:db8:0:0:0:1:0:0"), "2001:db8::1:0:0");       // §4.2.3: longest run
  EXPECT_EQ(Canonical("2001:db8:0:1:1:1:1:1"), "2001:db8:0:1:1:1:1:1");  // §4.2.2: no single ::
  EXPECT_EQ(Canonical("2001:db8::0:1"), "2001:db8::1");
  EXPECT_EQ(Canonical("::"), "::");
  EXPECT_EQ(Canonical("::1"), "::1");
  EXPECT_EQ(Canonical("1::"), "1::");
  EXPECT_EQ(Canonical("0:0:0:0:0:0:0:1"), "::1");
  EXPECT_EQ(Canonical("1:0:0:0:0:0:0:0"), "1::");
  EXPECT_EQ(Canonical("FFFF:ffff:FfFf:ffff:ffff:ffff:ffff:ffff"),
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
}

TEST(Ipv6HostTest, EmbeddedIpv4) {
  EXPECT_EQ(Canonical("::ffff:192.0.2.128"), "::ffff:c000:280");
  EXPECT_EQ(Canonical("::1.2.3.4"), "::102:304");
  EXPECT_EQ(Canonical("1:2:3:4:5:6:1.2.3.4"), "1:2:3:4:5:6:102:304");
  EXPECT_EQ(Canonical("::0.0.0.0"), "::");
}

TEST(Ipv6HostTest, Invalid) {
  for (std::string_view text : {"",
                                ":",
                                ":1",
                                "1:",
                                "1:::2",
                                "1::2::3",
                                "12345::",
                                "1:2:3:4:5:6:7",
                                "1:2:3:4:5:6:7:8:9",
                                "::1.2.3",
                                "::1.2.3.4.5",
                                "::01.2.3.4",
                                "::256.1.1.1",
                                "::1.2.3.",
                                "1:2:3:4:5:6:7:1.2.3.4",
                                "g::",
                                "::1%eth0",
                                "1.2.3.4",
                                "::.1.2.3",
                                " ::1"}) {
    EXPECT_EQ(Canonical(text), "invalid") << text;
  }
}

}  // namespace
}  // namespace urlsieve
