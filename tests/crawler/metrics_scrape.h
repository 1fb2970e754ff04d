// Helpers of the metrics tests (docs/features/metrics.md, "Metrics"): scraping an endpoint over
// real HTTP (cpp-httplib's client), parsing an exposition with a real Prometheus parser
// (prometheus_client, through tests/crawler/metrics_parse.py run by /usr/bin/python3), and
// comparing a parsed exposition with stats.json through the metric table.
// Thread-safety: test helpers; one thread.
#ifndef URLSIEVE_TESTS_CRAWLER_METRICS_SCRAPE_H_
#define URLSIEVE_TESTS_CRAWLER_METRICS_SCRAPE_H_

#include <gtest/gtest.h>
#include <httplib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "crawler/metrics/metrics_server.h"
#include "crawler/metrics/metrics_text.h"
#include "tests/support/file_contents.h"

namespace urlsieve::testing {

struct ScrapeResult {
  int status = 0;  // 0: no answer
  std::string content_type;
  std::string body;
};

// GET http://<address><path> (address "127.0.0.1:PORT" as metrics.addr holds it).
inline ScrapeResult Scrape(const std::string& address, const std::string& path = "/metrics") {
  Result<MetricsAddress> parsed = MetricsAddress::Parse(address);
  if (!parsed.ok()) {
    ADD_FAILURE() << parsed.status().message();
    return {};
  }
  httplib::Client client(parsed->host, parsed->port);
  client.set_connection_timeout(10);
  client.set_read_timeout(30);
  httplib::Result res = client.Get(path);
  if (!res) return {};
  return {res->status, res->get_header_value("Content-Type"), res->body};
}

// The exposition `text` as prometheus_client's parser reads it ({"families": {...}}, see
// metrics_parse.py), or null (and a test failure) when it refuses it.
inline nlohmann::json ParseExposition(const std::string& text, const std::filesystem::path& dir) {
  static int serial = 0;
  const std::filesystem::path in =
      dir / std::string("exposition_").append(std::to_string(++serial)).append(".txt");
  const std::filesystem::path err =
      dir / std::string("exposition_").append(std::to_string(serial)).append(".err");
  std::ofstream(in, std::ios::binary) << text;
  const std::string command = std::string("/usr/bin/python3 ").append(URLSIEVE_SOURCE_DIR) +
                              "/tests/crawler/metrics_parse.py " + in.string() + " 2> " +
                              err.string();
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << "cannot run " << command;
    return nullptr;
  }
  std::string out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof(buf), pipe)) > 0;) out.append(buf, n);
  const int status = ::pclose(pipe);
  if (status != 0) {
    ADD_FAILURE() << "prometheus_client refused the exposition: " << ReadFile(err) << "\n" << text;
    return nullptr;
  }
  return nlohmann::json::parse(out);
}

// The name prometheus_client gives a family: a counter's without its _total.
inline std::string ParsedName(const MetricFamily& family) {
  std::string name(family.name);
  if (family.type == MetricType::kCounter && name.ends_with("_total")) {
    name.resize(name.size() - 6);
  }
  return name;
}

// The samples of `family` in a parsed exposition: label value ("" without a label) -> value.
inline std::map<std::string, double> ParsedSamples(const nlohmann::json& parsed,
                                                   const MetricFamily& family) {
  std::map<std::string, double> samples;
  const nlohmann::json& f = parsed["families"][ParsedName(family)];
  for (const nlohmann::json& s : f["samples"]) {
    const std::string label =
        family.label.empty() ? "" : s["labels"].value(std::string(family.label), "");
    samples[label] = s["value"].get<double>();
  }
  return samples;
}

// The sum of a family's samples (e.g. every page whatever its class).
inline double ParsedTotal(const nlohmann::json& parsed, std::string_view name) {
  for (const MetricFamily& family : MetricFamilies()) {
    if (family.name != name) continue;
    double total = 0;
    for (const auto& [label, value] : ParsedSamples(parsed, family)) total += value;
    return total;
  }
  ADD_FAILURE() << "no metric family " << name;
  return -1;
}

// Every family of the table is in `parsed`, with its type, and its samples equal what stats.json
// holds at the family's place (docs/features/metrics.md, "Metrics": the same figures in both).
inline void ExpectExpositionMatchesJson(const nlohmann::json& parsed, const nlohmann::json& stats) {
  for (const MetricFamily& family : MetricFamilies()) {
    SCOPED_TRACE(std::string(family.name));
    const std::string name = ParsedName(family);
    ASSERT_TRUE(parsed["families"].contains(name));
    EXPECT_EQ(parsed["families"][name]["type"],
              family.type == MetricType::kCounter ? "counter" : "gauge");
    const std::map<std::string, double> samples = ParsedSamples(parsed, family);
    const nlohmann::json::json_pointer where{std::string(family.json)};
    if (family.type == MetricType::kInfo) {
      if (samples.empty()) {
        EXPECT_FALSE(stats.contains(where));
      } else {
        ASSERT_EQ(samples.size(), 1u);
        EXPECT_EQ(stats.at(where), samples.begin()->first);
        EXPECT_EQ(samples.begin()->second, 1.0);
      }
      continue;
    }
    ASSERT_TRUE(stats.contains(where)) << family.json << " is not in stats.json";
    const nlohmann::json& value = stats.at(where);
    if (family.label.empty()) {
      ASSERT_EQ(samples.size(), 1u);
      EXPECT_EQ(samples.at(""), value.get<double>());
      continue;
    }
    ASSERT_TRUE(value.is_object());
    EXPECT_EQ(samples.size(), value.size());
    for (const auto& [label, n] : value.items()) {
      ASSERT_TRUE(samples.contains(label)) << label;
      EXPECT_EQ(samples.at(label), n.get<double>()) << label;
    }
  }
}

}  // namespace urlsieve::testing

#endif  // URLSIEVE_TESTS_CRAWLER_METRICS_SCRAPE_H_
