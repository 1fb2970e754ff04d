// How a joining node's settings and partitions are checked against a cluster's meta hash
// (crawler/cluster/cluster_settings.h): each refusal names what differs.
#include "crawler/cluster/cluster_settings.h"

#include <gtest/gtest.h>

#include "crawler/cluster/cluster_keys.h"

namespace urlsieve {
namespace {

const std::string kWhat = "the crawl cluster 'c' at redis://127.0.0.1:6379/0";
const std::string kMetaKey = "urlsieve:{c}:cluster";

std::map<std::string, std::string> Meta(std::string settings) {
  return {{"format", std::string(kClusterFormat)},
          {"version", std::to_string(kClusterFormatVersion)},
          {"partitions", "16"},
          {"settings", std::move(settings)}};
}

TEST(ClusterSettingsTest, EmptyTextIsAnEmptyObject) {
  auto settings = ParseClusterSettings("");
  ASSERT_TRUE(settings.has_value());
  EXPECT_TRUE(settings->is_object());
  EXPECT_TRUE(settings->empty());
}

TEST(ClusterSettingsTest, NotAnObjectIsRefused) {
  EXPECT_FALSE(ParseClusterSettings("[1]").has_value());
  EXPECT_FALSE(ParseClusterSettings("{").has_value());
}

TEST(ClusterSettingsTest, DifferenceNamesEachKeyInOrder) {
  const auto cluster = *ParseClusterSettings(R"({"a":1,"b":"x","c":true})");
  const auto mine = *ParseClusterSettings(R"({"b":"y","c":true,"d":2})");
  EXPECT_EQ(ClusterSettingsDifference(cluster, mine),
            "a (cluster: 1, this node: (unset)), b (cluster: \"x\", this node: \"y\"), "
            "d (cluster: (unset), this node: 2)");
  EXPECT_EQ(ClusterSettingsDifference(cluster, cluster), "");
}

TEST(ClusterSettingsTest, MatchingMetaGivesTheStoredText) {
  const std::string stored = R"({"scope":"host"})";
  auto text = CheckClusterMeta(Meta(stored), 16, *ParseClusterSettings(stored), kWhat, kMetaKey);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, stored);
}

TEST(ClusterSettingsTest, EachMismatchIsNamed) {
  const auto mine = *ParseClusterSettings(R"({"scope":"host"})");
  auto meta = Meta(R"({"scope":"host"})");
  meta["format"] = "other";
  auto result = CheckClusterMeta(meta, 16, mine, kWhat, kMetaKey);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(result.status().message(),
            kWhat + ": " + kMetaKey + " is not a urlsieve crawl cluster (format 'other')");

  meta = Meta(R"({"scope":"host"})");
  meta["version"] = "99";
  result = CheckClusterMeta(meta, 16, mine, kWhat, kMetaKey);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kUnsupported);

  result = CheckClusterMeta(Meta(R"({"scope":"host"})"), 32, mine, kWhat, kMetaKey);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(), kWhat + " has 16 partitions, this node was given 32");

  result = CheckClusterMeta(Meta("not json"), 16, mine, kWhat, kMetaKey);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kCorruption);

  result = CheckClusterMeta(Meta(R"({"scope":"domain"})"), 16, mine, kWhat, kMetaKey);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(result.status().message().find(
                "scope (cluster: \"domain\", this node: \"host\"); the nodes of a cluster must "
                "share them"),
            std::string::npos);
}

}  // namespace
}  // namespace urlsieve
