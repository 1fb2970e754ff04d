// The settings every node of a crawl cluster must share (docs/features/cluster.md, "The crawl
// cluster"): how a joining node compares its own with those stored in the cluster's meta hash, so
// that a refusal names the keys that differ. The register Function compares the stored text again,
// atomically; this is only for the message.
//
// Thread-safety: pure functions.
#ifndef URLSIEVE_CRAWLER_CLUSTER_CLUSTER_SETTINGS_H_
#define URLSIEVE_CRAWLER_CLUSTER_CLUSTER_SETTINGS_H_

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace urlsieve {

// The settings as a JSON object ("" is {}); nullopt when not an object.
std::optional<nlohmann::json> ParseClusterSettings(std::string_view text);

// "key (cluster: X, this node: Y), ..." for every key whose value differs, in key order.
std::string ClusterSettingsDifference(const nlohmann::json& cluster, const nlohmann::json& mine);

// Checks an existing cluster's meta hash (its fields, not empty) against what this node was
// given: the format, its version, the partition count and the settings. Returns the stored
// settings text (what the node registers with), or the error naming what differs; `what` names
// the cluster ("the crawl cluster 'NAME' at ..."), `meta_key` its meta hash.
Result<std::string> CheckClusterMeta(const std::map<std::string, std::string>& fields,
                                     uint32_t partitions, const nlohmann::json& settings,
                                     const std::string& what, const std::string& meta_key);

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CLUSTER_CLUSTER_SETTINGS_H_
