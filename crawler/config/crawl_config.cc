#include "crawler/config/crawl_config.h"

#include <toml++/toml.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "base/duration.h"
#include "crawler/config/crawl_config_file.h"
#include "crawler/config/rules_file.h"
#include "crawler/metrics/metrics_server.h"

namespace urlsieve {

std::string_view ScopeModeName(ScopeMode mode) {
  switch (mode) {
    case ScopeMode::kHost:
      return "host";
    case ScopeMode::kDomain:
      return "domain";
    case ScopeMode::kAny:
      return "any";
  }
  return "?";
}

Result<ScopeMode> ParseScopeMode(std::string_view name) {
  for (ScopeMode m : {ScopeMode::kHost, ScopeMode::kDomain, ScopeMode::kAny}) {
    if (name == ScopeModeName(m)) return m;
  }
  return Status::InvalidArgument("scope must be \"host\", \"domain\" or \"any\", not \"" +
                                 std::string(name) + "\"");
}

namespace {

bool IsSection(std::string_view section) {
  for (const CrawlOptionSpec& spec : CrawlOptionSpecs()) {
    if (spec.in_file && spec.section == section) return true;
  }
  return false;
}

const CrawlOptionSpec* FindFileOption(std::string_view section, std::string_view name) {
  for (const CrawlOptionSpec& spec : CrawlOptionSpecs()) {
    if (spec.in_file && spec.section == section && spec.name == name) return &spec;
  }
  return nullptr;
}

// Reads a TOML value into *value as the spec's type, or says what it must be. *where is the node
// the error is about (an item of an array). (An out-parameter, not Result<OptionValue>: GCC 12
// reports a false -Wmaybe-uninitialized when a variant holding a vector is moved into a Result.)
Status ReadTomlValue(const CrawlOptionSpec& spec, const toml::node& n, const toml::node** where,
                     OptionValue* value) {
  *where = &n;
  switch (spec.type) {
    case OptionType::kBool:
      if (!n.is_boolean()) return Status::InvalidArgument("must be a boolean");
      *value = n.as_boolean()->get();
      return Status::Ok();
    case OptionType::kInteger:
      if (!n.is_integer()) return Status::InvalidArgument("must be an integer");
      *value = n.as_integer()->get();
      return Status::Ok();
    case OptionType::kNumber:
      if (n.is_integer()) {
        *value = static_cast<double>(n.as_integer()->get());
      } else if (n.is_floating_point()) {
        *value = n.as_floating_point()->get();
      } else {
        return Status::InvalidArgument("must be a number");
      }
      return Status::Ok();
    case OptionType::kDuration:
      if (!n.is_string()) return Status::InvalidArgument("must be a duration such as \"7d\"");
      *value = n.as_string()->get();
      return Status::Ok();
    case OptionType::kString:
    case OptionType::kChoice:
      if (!n.is_string()) return Status::InvalidArgument("must be a string");
      *value = n.as_string()->get();
      return Status::Ok();
    case OptionType::kStringList: {
      const toml::array* array = n.as_array();
      if (array == nullptr) return Status::InvalidArgument("must be an array of strings");
      std::vector<std::string> list;
      for (const toml::node& item : *array) {
        *where = &item;
        if (!item.is_string()) return Status::InvalidArgument("must be an array of strings");
        list.push_back(item.as_string()->get());
      }
      *where = &n;
      *value = std::move(list);
      return Status::Ok();
    }
  }
  return Status::InvalidArgument("cannot be read");
}

// Keeps the error of the earliest line, so that a file with several mistakes is reported at its
// first one, whatever order they were found in.
class FirstError {
 public:
  explicit FirstError(std::string_view source) : source_(source) {}

  void Add(const toml::node& n, const std::string& what) {
    const auto line = n.source().begin.line;
    if (!status_.ok() && line >= line_) return;
    line_ = line;
    status_ =
        Status::InvalidArgument(std::string(source_) + ":" + std::to_string(line) + ": " + what);
  }
  const Status& status() const { return status_; }

 private:
  std::string_view source_;
  toml::source_index line_ = 0;
  Status status_;
};

// Reads one [section] strictly: every key must be an option of the section, with a value of its
// type that meets its rule.
void ReadSection(std::string_view section, const toml::table& table, CrawlConfig* config,
                 FirstError* errors) {
  for (auto&& [name, node] : table) {
    const std::string key = std::string(section) + "." + std::string(name.str());
    const CrawlOptionSpec* spec = FindFileOption(section, name.str());
    if (spec == nullptr) {
      errors->Add(node, key + ": unknown key");
      continue;
    }
    const toml::node* where = &node;
    OptionValue value;
    Status stored = ReadTomlValue(*spec, node, &where, &value);
    if (stored.ok()) stored = StoreOption(*spec, value, config);
    if (!stored.ok()) errors->Add(*where, key + ": " + stored.message());
  }
}

// The rules between the [cluster] options and the others (docs/features/cluster.md, "The crawl
// cluster").
Status ValidateCluster(const CrawlConfig& config) {
  const CrawlConfig::Cluster& cluster = config.cluster;
  if (!config.cluster_mode()) {
    if (!cluster.name.empty()) {
      return Status::InvalidArgument("cluster.name: --cluster-name needs --cluster (the server)");
    }
    if (!cluster.node_id.empty()) {
      return Status::InvalidArgument("cluster.node_id: --node-id needs --cluster");
    }
    return Status::Ok();
  }
  if (cluster.name.empty()) {
    return Status::InvalidArgument(
        "cluster.name: a cluster needs its name (--cluster-name NAME) besides the server");
  }
  if (!config.crawl.seen_redis.empty() || !config.crawl.seen_redis_name.empty()) {
    return Status::InvalidArgument(
        "crawl.seen_redis: --cluster and --seen-redis exclude each other (a cluster keeps its "
        "seen set in the cluster's Redis)");
  }
  if (config.crawl.rebuild_bloom) {
    return Status::InvalidArgument(
        "crawl.rebuild_bloom: --rebuild rebuilds a local seen set; a cluster's is in Redis");
  }
  // The hand-over cool-down (the delay) must fit well inside a lease (cluster_coordinator.h).
  if (int64_t{config.politeness.delay_ms} * 2 >= int64_t{cluster.lease_ttl_s} * 1000) {
    return Status::InvalidArgument(
        "politeness.delay_ms: in a cluster the delay (" +
        std::to_string(config.politeness.delay_ms) + " ms) must be below half the lease TTL (" +
        std::to_string(cluster.lease_ttl_s) + " s): raise --lease-ttl or lower --delay-ms");
  }
  return Status::Ok();
}

}  // namespace

Status CrawlConfig::Validate() const {
  // Every option's rule, whether its value came from the file, a flag or code.
  for (const CrawlOptionSpec& spec : CrawlOptionSpecs()) {
    const OptionValue value = spec.get(*this);
    std::string why = CheckOptionValue(spec, value);
    const std::string* text = std::get_if<std::string>(&value);
    // A node of a cluster may join without seeds and wait for work.
    const bool optional_in_cluster =
        spec.section == "crawl" && spec.name == "seeds" && cluster_mode();
    if (why.empty() && !spec.if_empty.empty() && text != nullptr && text->empty() &&
        !optional_in_cluster) {
      why = spec.if_empty;
    }
    if (!why.empty()) return Status::InvalidArgument(spec.key() + ": " + why);
  }
  if (!fetch.ca_file.empty() && !std::ifstream(fetch.ca_file)) {
    // Checked now: libcurl would only notice at the first https fetch, and fail every one.
    return Status::InvalidArgument("fetch.ca_file: cannot read the CA bundle '" + fetch.ca_file +
                                   "'");
  }
  if (!dust.rules_file.empty()) {
    if (!std::ifstream(dust.rules_file)) {
      return Status::InvalidArgument("dust.rules_file: cannot read '" + dust.rules_file +
                                     "' (--rules-file)");
    }
    // Checked whole now, before anything is created (Crawler::OpenDust reads it again).
    Result<std::vector<UserRule>> rules = ReadRulesFile(dust.rules_file);
    if (!rules.ok()) return rules.status();
  }
  if (recrawl.min_interval > recrawl.max_interval) {
    return Status::InvalidArgument("recrawl.min_interval (" + FormatDuration(recrawl.min_interval) +
                                   ") must not be longer than recrawl.max_interval (" +
                                   FormatDuration(recrawl.max_interval) + ")");
  }
  if (!output.metrics_listen.empty()) {
    Result<MetricsAddress> address = MetricsAddress::Parse(output.metrics_listen);
    if (!address.ok()) {
      std::string message = "output.metrics_listen: ";
      message += address.status().message();
      return Status::InvalidArgument(std::move(message));
    }
  }
  if (output.metrics_linger.count() > 0 && output.metrics_listen.empty()) {
    return Status::InvalidArgument(
        "output.metrics_linger: --metrics-linger needs --metrics-listen");
  }
  // Without an archive a non-HTML body is not downloaded at all: asking to cut it means nothing
  // (docs/features/content-seen.md, "Non-HTML bodies").
  if (output.warc_non_html != "full" && !output.warc) {
    return Status::InvalidArgument("output.warc_non_html: --warc-non-html truncate needs --warc");
  }
  return ValidateCluster(*this);
}

Result<CrawlConfig> ParseCrawlConfig(std::string_view toml_text, std::string_view source) {
  toml::table root;
  try {
    root = toml::parse(toml_text, source);
  } catch (const toml::parse_error& e) {
    return Status::InvalidArgument(std::string(source) + ":" +
                                   std::to_string(e.source().begin.line) + ": " +
                                   std::string(e.description()));
  }
  CrawlConfig config;
  FirstError errors(source);
  for (auto&& [key, node] : root) {
    const toml::table* t = node.as_table();
    if (!IsSection(key.str())) {
      errors.Add(node, "unknown section [" + std::string(key.str()) + "]");
    } else if (t == nullptr) {
      errors.Add(node, std::string(key.str()) + " must be a [section]");
    } else {
      ReadSection(key.str(), *t, &config, &errors);
    }
  }
  if (!errors.status().ok()) return errors.status();
  return config;
}

Result<CrawlConfig> LoadCrawlConfig(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError("cannot open config file " + path);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::IoError("cannot read config file " + path);
  return ParseCrawlConfig(text.str(), path);
}

Status ApplyCrawlFlags(const CrawlFlags& flags, CrawlConfig* config) {
  for (const auto& [spec, value] : flags.given) {
    OptionValue stored = value;
    if (spec->type == OptionType::kStringList) {
      // The flags' patterns are added to the file's (once: a continued crawl's saved options
      // already hold the ones its first run was given).
      OptionValue list = spec->get(*config);
      auto* to = std::get_if<std::vector<std::string>>(&list);
      const auto* more = std::get_if<std::vector<std::string>>(&value);
      for (size_t i = 0; to != nullptr && more != nullptr && i < more->size(); ++i) {
        if (std::find(to->begin(), to->end(), (*more)[i]) == to->end()) to->push_back((*more)[i]);
      }
      stored = std::move(list);
    }
    Status status = StoreOption(*spec, stored, config);
    if (!status.ok()) return Status::InvalidArgument(spec->key() + ": " + status.message());
  }
  return Status::Ok();
}

Result<CrawlConfig> ResolveCrawlConfig(const CrawlFlags& flags) {
  CrawlConfig config;
  // A continued crawl starts from the options it saved (crawl_config_file.h).
  const std::optional<std::string> base =
      flags.config ? flags.config : SavedConfigToContinue(flags);
  if (base) {
    Result<CrawlConfig> loaded = LoadCrawlConfig(*base);
    if (!loaded.ok()) return loaded.status();
    config = std::move(*loaded);
  }
  URLSIEVE_RETURN_IF_ERROR(ApplyCrawlFlags(flags, &config));
  URLSIEVE_RETURN_IF_ERROR(config.Validate());
  return config;
}

}  // namespace urlsieve
