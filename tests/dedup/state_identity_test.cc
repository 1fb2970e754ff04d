#include "dedup/state/state_identity.h"

#include <gtest/gtest.h>

namespace urlsieve {
namespace {

TEST(StateIdentityTest, RandomIdentitiesDifferAndAreNotZero) {
  auto a = StateIdentity::Random();
  auto b = StateIdentity::Random();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_FALSE(a->IsZero());
  EXPECT_NE(*a, *b);
}

TEST(StateIdentityTest, HexRoundTrips) {
  auto id = StateIdentity::Random();
  ASSERT_TRUE(id.ok());
  const std::string hex = id->ToHex();
  EXPECT_EQ(hex.size(), 32u);
  auto back = StateIdentity::FromHex(hex);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, *id);
}

TEST(StateIdentityTest, MalformedHexIsCorruption) {
  for (const char* bad :
       {"", "00", "0123456789abcdef0123456789abcdeF", "0123456789abcdef0123456789abcdeg",
        "0123456789abcdef0123456789abcdef0"}) {
    auto id = StateIdentity::FromHex(bad);
    ASSERT_FALSE(id.ok()) << bad;
    EXPECT_EQ(id.status().code(), StatusCode::kCorruption) << bad;
  }
  EXPECT_TRUE(StateIdentity().IsZero());
}

}  // namespace
}  // namespace urlsieve
