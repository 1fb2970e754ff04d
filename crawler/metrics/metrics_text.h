// The crawl's metrics, defined once (docs/features/metrics.md, "Metrics"): one table of metric
// families, from which both the Prometheus text exposition (format 0.0.4, served by MetricsServer
// at /metrics) and the matching keys of stats.json are made. A family says its name, type, help,
// label and its place in stats.json, and reads its samples from a MetricsSnapshot; nothing else
// names a metric.
//
// Pure: a snapshot in, text (or JSON) out. Counters end in _total and count over the whole crawl
// (across --resume, like stats.json); gauges describe the instant of the snapshot.
//
// Thread-safety: the table is immutable (built on first use); the functions are pure.
#ifndef URLSIEVE_CRAWLER_METRICS_METRICS_TEXT_H_
#define URLSIEVE_CRAWLER_METRICS_METRICS_TEXT_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "crawler/metrics/crawl_stats.h"
#include "url/dust_learner.h"

namespace urlsieve {

// What the metrics show at one instant: the crawl's counters and the gauges of its frontier, seen
// set and checkpoints (Crawler::MetricsNow fills it).
struct MetricsSnapshot {
  CrawlStatsSnapshot stats;        // the counters, the scope's rejections included
  uint64_t pending_in_memory = 0;  // frontier: queued URLs in RAM
  uint64_t pending_spilled = 0;    // ... in the spill file
  uint64_t in_flight = 0;          // leases handed out and not yet done (pages and robots.txt)
  uint64_t hosts_active = 0;       // politeness keys by state (FrontierStats::keys_*)
  uint64_t hosts_waiting = 0;
  uint64_t hosts_retired = 0;
  double seen_fill_ratio = 0;        // SeenStats::bloom_fill_ratio
  double seen_expected_fp_rate = 0;  // SeenStats::bloom_expected_fp_rate
  double checkpoint_age_s = 0;  // since this run's last checkpoint (its start before the first)
  bool running = true;          // false: the crawl has ended (the snapshot stats.json holds)
  std::string node_id;          // a node of a crawl cluster; "" for a standalone crawl
  DustCounters dust;            // learned URL rules (docs/features/dust.md); zero with --dust off
};

enum class MetricType : uint8_t {
  kCounter,
  kGauge,
  kInfo,  // exposed as a gauge of value 1 whose label carries the value; in stats.json, the label
};

struct MetricSample {
  std::string label_value;  // "" for a family without a label
  std::variant<uint64_t, double> value;
};

struct MetricFamily {
  std::string_view name;  // "urlsieve_pages_total": a counter's name ends in _total
  MetricType type = MetricType::kGauge;
  std::string_view help;
  std::string_view label;  // the label's name; "" when the family has one sample
  // Its place in stats.json, a JSON pointer ("/seen/fill_ratio"): a number, or for a labelled
  // family an object {label value: number}.
  std::string_view json;
  std::vector<MetricSample> (*samples)(const MetricsSnapshot&) = nullptr;
};

// Every family, in the order of the exposition.
std::span<const MetricFamily> MetricFamilies();

// The Prometheus text exposition format 0.0.4 of `snapshot`: for each family its # HELP and # TYPE
// lines, then its samples (a labelled family with none has only the two lines).
std::string MetricsText(const MetricsSnapshot& snapshot);

// Sets every family's value at its place in *json (stats.json: CrawlStatsSnapshot::ToJson() and
// these). A key ToJson() already writes gets the same value again.
void AddMetricsJson(const MetricsSnapshot& snapshot, nlohmann::json* json);

// A label value escaped for the text format: \ -> \\, " -> \", newline -> \n.
std::string EscapeLabelValue(std::string_view value);

// The content type of MetricsText().
inline constexpr std::string_view kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_METRICS_METRICS_TEXT_H_
