#include "url/ipv4_host.h"

#include <gtest/gtest.h>

#include <string>

namespace urlsieve {
namespace {

std::string Parsed(std::string_view host) {
  const std::optional<uint32_t> address = ParseIpv4(host);
  if (!address) return "invalid";
  char buf[16];
  return std::string(buf, FormatIpv4(*address, buf));
}

TEST(Ipv4HostTest, EndsInANumber) {
  EXPECT_TRUE(EndsInIpv4Number("1.2.3.4"));
  EXPECT_TRUE(EndsInIpv4Number("example.123"));
  EXPECT_TRUE(EndsInIpv4Number("a.0x1F"));
  EXPECT_TRUE(EndsInIpv4Number("0x"));
  EXPECT_TRUE(EndsInIpv4Number("1.2.3.4."));  // one trailing dot is ignored
  EXPECT_FALSE(EndsInIpv4Number("1.2.3.4.."));
  EXPECT_FALSE(EndsInIpv4Number("example.com"));
  EXPECT_FALSE(EndsInIpv4Number("1.2.3.4a"));
  EXPECT_FALSE(EndsInIpv4Number("0xg"));
  EXPECT_FALSE(EndsInIpv4Number("."));
  EXPECT_FALSE(EndsInIpv4Number(""));
}

TEST(Ipv4HostTest, NumberForms) {
  EXPECT_EQ(Parsed("127.0.0.1"), "127.0.0.1");
  EXPECT_EQ(Parsed("0x7f.1"), "127.0.0.1");
  EXPECT_EQ(Parsed("0X7F.0X0.0.1"), "127.0.0.1");
  EXPECT_EQ(Parsed("2130706433"), "127.0.0.1");
  EXPECT_EQ(Parsed("0177.0.0.1"), "127.0.0.1");
  EXPECT_EQ(Parsed("00000177.0.0.1"), "127.0.0.1");
  EXPECT_EQ(Parsed("192.168.257"), "192.168.1.1");  // the last part fills two bytes
  EXPECT_EQ(Parsed("10.16777215"), "10.255.255.255");
  EXPECT_EQ(Parsed("0"), "0.0.0.0");
  EXPECT_EQ(Parsed("0x"), "0.0.0.0");
  EXPECT_EQ(Parsed("00"), "0.0.0.0");
  EXPECT_EQ(Parsed("4294967295"), "255.255.255.255");
  EXPECT_EQ(Parsed("1.2.3.4."), "1.2.3.4");
}

TEST(Ipv4HostTest, Invalid) {
  for (std::string_view host :
       {"4294967296", "256.1.1.1", "1.256.1.1", "1.2.3.256", "1.2.65536", "1.16777216", "1.2.3.4.5",
        "1..2", ".1.2", "08", "09.1", "0x1g", "1.2.3.4..", "a.1", "99999999999999999999999"}) {
    EXPECT_EQ(Parsed(host), "invalid") << host;
  }
}

}  // namespace
}  // namespace urlsieve
