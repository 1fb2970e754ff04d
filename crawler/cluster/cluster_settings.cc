#include "crawler/cluster/cluster_settings.h"

#include <utility>

#include "crawler/cluster/cluster_keys.h"

namespace urlsieve {

std::optional<nlohmann::json> ParseClusterSettings(std::string_view text) {
  if (text.empty()) return nlohmann::json::object();
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) return std::nullopt;
  return json;
}

std::string ClusterSettingsDifference(const nlohmann::json& cluster, const nlohmann::json& mine) {
  std::map<std::string, std::pair<std::string, std::string>> differ;
  for (const auto& [key, value] : cluster.items()) {
    auto it = mine.find(key);
    if (it == mine.end()) {
      differ[key] = {value.dump(), "(unset)"};
    } else if (*it != value) {
      differ[key] = {value.dump(), it->dump()};
    }
  }
  for (const auto& [key, value] : mine.items()) {
    if (!cluster.contains(key)) differ[key] = {"(unset)", value.dump()};
  }
  std::string out;
  for (const auto& [key, values] : differ) {
    if (!out.empty()) out += ", ";
    out += key;
    out += " (cluster: ";
    out += values.first;
    out += ", this node: ";
    out += values.second;
    out += ")";
  }
  return out;
}

Result<std::string> CheckClusterMeta(const std::map<std::string, std::string>& fields,
                                     uint32_t partitions, const nlohmann::json& settings,
                                     const std::string& what, const std::string& meta_key) {
  auto field = [&fields](const char* name) {
    auto it = fields.find(name);
    return it == fields.end() ? std::string() : it->second;
  };
  if (field("format") != kClusterFormat) {
    return Status::FailedPrecondition(what + ": " + meta_key +
                                      " is not a urlsieve crawl cluster (format '" +
                                      field("format") + "')");
  }
  if (field("version") != std::to_string(kClusterFormatVersion)) {
    return Status::Unsupported(what + " has format version " + field("version") +
                               "; this urlsieve reads version " +
                               std::to_string(kClusterFormatVersion));
  }
  if (field("partitions") != std::to_string(partitions)) {
    return Status::FailedPrecondition(what + " has " + field("partitions") +
                                      " partitions, this node was given " +
                                      std::to_string(partitions));
  }
  const std::string stored_text = field("settings");
  auto stored = ParseClusterSettings(stored_text);
  if (!stored) {
    return Status::Corruption(what + ": its settings are not a JSON object: " + stored_text);
  }
  if (*stored != settings) {
    return Status::FailedPrecondition(
        what + " was created with other settings than this node's: " +
        ClusterSettingsDifference(*stored, settings) +
        "; the nodes of a cluster must share them (their keys and partitions would not agree)");
  }
  return stored_text;
}

}  // namespace urlsieve
