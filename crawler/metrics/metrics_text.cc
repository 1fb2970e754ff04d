#include "crawler/metrics/metrics_text.h"

#include <charconv>
#include <cmath>
#include <map>

namespace urlsieve {
namespace {

using Samples = std::vector<MetricSample>;

template <typename Map>
Samples FromMap(const Map& counts) {
  Samples samples;
  for (const auto& [name, n] : counts) samples.push_back({std::string(name), uint64_t{n}});
  return samples;
}

// Pages or bytes by status class: the classes of a response and "none" always (at 0 before the
// first), so that a rate over them exists from the start; "other" when there is any.
Samples ByStatusClass(std::map<std::string, uint64_t> counts) {
  for (const char* name : {"1xx", "2xx", "3xx", "4xx", "5xx", "none"}) counts.try_emplace(name, 0);
  return FromMap(counts);
}

Samples One(uint64_t value) { return {{"", value}}; }
Samples OneDouble(double value) { return {{"", value}}; }

std::vector<MetricFamily> CounterFamilies() {
  return {
      {"urlsieve_pages_total", MetricType::kCounter,
       "Fetches recorded (pages.jsonl), by HTTP status class (none: no response)", "class",
       "/pages_by_status_class",
       [](const MetricsSnapshot& s) { return ByStatusClass(s.stats.PagesByStatusClass()); }},
      {"urlsieve_bytes_total", MetricType::kCounter,
       "Body bytes of the recorded fetches, by HTTP status class", "class",
       "/bytes_by_status_class",
       [](const MetricsSnapshot& s) { return ByStatusClass(s.stats.bytes_by_status_class); }},
      {"urlsieve_errors_total", MetricType::kCounter, "Failed fetches, by error kind", "kind",
       "/errors", [](const MetricsSnapshot& s) { return FromMap(s.stats.errors); }},
      {"urlsieve_rejections_total", MetricType::kCounter,
       "URLs and links rejected (scope, frontier, link extraction), by reason", "reason",
       "/rejections", [](const MetricsSnapshot& s) { return FromMap(s.stats.rejections); }},
      {"urlsieve_links_found_total", MetricType::kCounter, "Links of fetched pages in scope", "",
       "/links_found", [](const MetricsSnapshot& s) { return One(s.stats.links_found); }},
      {"urlsieve_links_new_total", MetricType::kCounter,
       "Links of fetched pages the seen stage told new", "", "/links_new",
       [](const MetricsSnapshot& s) { return One(s.stats.links_new); }},
      {"urlsieve_refetches_total", MetricType::kCounter,
       "Re-fetches of a re-crawl, by what they found", "result", "/refetches",
       [](const MetricsSnapshot& s) {
         std::map<std::string, uint64_t> results = {
             {"not_modified", 0}, {"unchanged", 0}, {"changed", 0}};
         for (const auto& [result, n] : s.stats.refetches) results[result] = n;
         return FromMap(results);
       }},
      {"urlsieve_pages_by_encoding_total", MetricType::kCounter,
       "Parsed HTML pages, by the character encoding they were decoded from", "encoding",
       "/encodings", [](const MetricsSnapshot& s) { return FromMap(s.stats.encodings); }},
      {"urlsieve_sitemap_total", MetricType::kCounter, "Sitemap counters, by name", "counter",
       "/sitemaps", [](const MetricsSnapshot& s) { return FromMap(s.stats.sitemaps); }},
      {"urlsieve_duplicates_total", MetricType::kCounter,
       "Pages whose content the crawl had fetched before, by kind (exact, near; unknown: not "
       "answered)",
       "kind", "/duplicates",
       [](const MetricsSnapshot& s) {
         std::map<std::string, uint64_t> kinds = {{"exact", 0}, {"near", 0}, {"unknown", 0}};
         for (const auto& [kind, n] : s.stats.duplicates) kinds[kind] = n;
         return FromMap(kinds);
       }},
      {"urlsieve_seen_inserts_total", MetricType::kCounter,
       "Keys asked of the seen stage (seeds, links, sitemap URLs)", "", "/seen/inserts",
       [](const MetricsSnapshot& s) { return One(s.stats.seen_inserts); }},
      {"urlsieve_seen_new_total", MetricType::kCounter, "Keys the seen stage told new", "",
       "/seen/new", [](const MetricsSnapshot& s) { return One(s.stats.seen_new); }},
      {"urlsieve_dust_suppressed_total", MetricType::kCounter,
       "Links not fetched because a learned URL rule covers them (rejected.jsonl \"dust\")", "",
       "/dust/suppressed", [](const MetricsSnapshot& s) { return One(s.dust.suppressed); }},
      {"urlsieve_dust_validation_fetches_total", MetricType::kCounter,
       "Fetches made to check a learned URL rule (pages.jsonl \"dust_check\")", "",
       "/dust/validation_fetches",
       [](const MetricsSnapshot& s) { return One(s.dust.validation_fetches); }},
      {"urlsieve_dust_requeued_total", MetricType::kCounter,
       "Suppressed links queued again because their rule was retired", "", "/dust/requeued",
       [](const MetricsSnapshot& s) { return One(s.dust.requeued); }},
  };
}

// The gauges, and last the info family.
std::vector<MetricFamily> GaugeFamilies() {
  return {
      {"urlsieve_frontier_pending", MetricType::kGauge,
       "URLs queued in the frontier, in memory or spilled to disk", "where", "/frontier/pending",
       [](const MetricsSnapshot& s) {
         return Samples{{"memory", s.pending_in_memory}, {"spilled", s.pending_spilled}};
       }},
      {"urlsieve_frontier_in_flight", MetricType::kGauge,
       "Fetches handed out and not yet done (pages and robots.txt)", "", "/frontier/in_flight",
       [](const MetricsSnapshot& s) { return One(s.in_flight); }},
      {"urlsieve_hosts", MetricType::kGauge,
       "Hosts (politeness keys): active (a fetch in flight), waiting (URLs queued, none in "
       "flight), retired (given up, or their page budget reached)",
       "state", "/hosts",
       [](const MetricsSnapshot& s) {
         return Samples{{"active", s.hosts_active},
                        {"waiting", s.hosts_waiting},
                        {"retired", s.hosts_retired}};
       }},
      {"urlsieve_seen_fill_ratio", MetricType::kGauge,
       "Fraction of the seen set's Bloom filter bits that are set", "", "/seen/fill_ratio",
       [](const MetricsSnapshot& s) { return OneDouble(s.seen_fill_ratio); }},
      {"urlsieve_seen_expected_fp_rate", MetricType::kGauge,
       "Expected false-positive rate of the seen set's Bloom filter at its current load", "",
       "/seen/expected_fp_rate",
       [](const MetricsSnapshot& s) { return OneDouble(s.seen_expected_fp_rate); }},
      {"urlsieve_dust_rules", MetricType::kGauge,
       "Learned URL rules by state (candidate, validating, active, retired, rejected)", "state",
       "/dust/rules",
       [](const MetricsSnapshot& s) {
         return Samples{{"candidate", s.dust.candidates},
                        {"validating", s.dust.rules_validating},
                        {"active", s.dust.rules_active},
                        {"retired", s.dust.rules_retired},
                        {"rejected", s.dust.rules_rejected}};
       }},
      {"urlsieve_checkpoint_age_seconds", MetricType::kGauge,
       "Seconds since this run's last checkpoint (since its start before the first)", "",
       "/checkpoint_age_s", [](const MetricsSnapshot& s) { return OneDouble(s.checkpoint_age_s); }},
      {"urlsieve_crawl_duration_seconds", MetricType::kGauge,
       "Running time of the crawl, summed over its sessions", "", "/duration_s",
       [](const MetricsSnapshot& s) { return OneDouble(s.stats.duration_s); }},
      {"urlsieve_pages_per_second", MetricType::kGauge,
       "Fetches recorded per second of the crawl's running time", "", "/pages_per_s",
       [](const MetricsSnapshot& s) { return OneDouble(s.stats.pages_per_s()); }},
      {"urlsieve_crawl_running", MetricType::kGauge,
       "1 while the crawl runs, 0 once it has ended (the final figures, as in stats.json)", "",
       "/running", [](const MetricsSnapshot& s) { return One(s.running ? 1 : 0); }},
      {"urlsieve_node_info", MetricType::kInfo, "The crawl cluster node this crawl is", "node",
       "/node_id",
       [](const MetricsSnapshot& s) {
         return s.node_id.empty() ? Samples{} : Samples{{s.node_id, uint64_t{1}}};
       }},
  };
}

// The table (docs/features/metrics.md, "Metrics"). Counters first, then gauges.
std::vector<MetricFamily> BuildFamilies() {
  std::vector<MetricFamily> families = CounterFamilies();
  const std::vector<MetricFamily> gauges = GaugeFamilies();
  families.insert(families.end(), gauges.begin(), gauges.end());
  return families;
}

// A sample value as the text format spells it (Go's strconv.ParseFloat reads it back exactly).
std::string FormatValue(const std::variant<uint64_t, double>& value) {
  if (const uint64_t* n = std::get_if<uint64_t>(&value)) return std::to_string(*n);
  const double v = std::get<double>(value);
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[40];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);  // shortest that reads back
  return ec == std::errc() ? std::string(buf, end) : "NaN";
}

// HELP text escaping: \ -> \\, newline -> \n.
std::string EscapeHelp(std::string_view help) {
  std::string out;
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string_view TypeName(MetricType type) {
  return type == MetricType::kCounter ? "counter" : "gauge";
}

}  // namespace

std::span<const MetricFamily> MetricFamilies() {
  static const std::vector<MetricFamily> families = BuildFamilies();
  return families;
}

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string MetricsText(const MetricsSnapshot& snapshot) {
  std::string out;
  for (const MetricFamily& family : MetricFamilies()) {
    out.append("# HELP ").append(family.name).append(" ").append(EscapeHelp(family.help));
    out.append("\n# TYPE ").append(family.name).append(" ").append(TypeName(family.type));
    out += '\n';
    for (const MetricSample& sample : family.samples(snapshot)) {
      out.append(family.name);
      if (!family.label.empty()) {
        out.append("{").append(family.label).append("=\"");
        out.append(EscapeLabelValue(sample.label_value)).append("\"}");
      }
      out.append(" ").append(FormatValue(sample.value)).append("\n");
    }
  }
  return out;
}

void AddMetricsJson(const MetricsSnapshot& snapshot, nlohmann::json* json) {
  auto number = [](const std::variant<uint64_t, double>& value) -> nlohmann::json {
    if (const uint64_t* n = std::get_if<uint64_t>(&value)) return *n;
    return std::get<double>(value);
  };
  for (const MetricFamily& family : MetricFamilies()) {
    const nlohmann::json::json_pointer where{std::string(family.json)};
    const std::vector<MetricSample> samples = family.samples(snapshot);
    if (family.type == MetricType::kInfo) {
      if (!samples.empty()) (*json)[where] = samples.front().label_value;
    } else if (family.label.empty()) {
      (*json)[where] = number(samples.at(0).value);
    } else {
      nlohmann::json object = nlohmann::json::object();
      for (const MetricSample& sample : samples) object[sample.label_value] = number(sample.value);
      (*json)[where] = std::move(object);
    }
  }
}

}  // namespace urlsieve
