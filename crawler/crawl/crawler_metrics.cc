// Crawler's metrics (docs/features/metrics.md, "Metrics"): the Prometheus endpoint's lifetime, its
// out_dir/metrics.addr, and the snapshot that both /metrics and stats.json are made from.
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "crawler/crawl/crawler.h"
#include "crawler/crawl/scope.h"
#include "crawler/metrics/metrics_server.h"
#include "crawler/state/crawl_state.h"
#include "dedup/seen_filter.h"
#include "frontier/frontier.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;

fs::path AddressFile(const CrawlConfig& config) {
  return fs::path(config.crawl.out_dir) / "metrics.addr";
}

}  // namespace

Status Crawler::BindMetrics() {
  // The checkpoint age counts from the run's start until its first checkpoint.
  last_checkpoint_ = clock_.Now().time_since_epoch().count();
  if (config_.output.metrics_listen.empty()) return Status::Ok();
  Result<MetricsAddress> address = MetricsAddress::Parse(config_.output.metrics_listen);
  if (!address.ok()) return address.status();
  Result<std::unique_ptr<MetricsServer>> server = MetricsServer::Bind(*address);
  if (!server.ok()) return server.status();
  metrics_ = std::move(*server);
  return Status::Ok();
}

Status Crawler::StartMetrics() {
  if (!metrics_) return Status::Ok();
  URLSIEVE_RETURN_IF_ERROR(metrics_->Start([this] {
    {
      std::lock_guard<std::mutex> lock(metrics_mu_);
      if (final_metrics_) return MetricsText(*final_metrics_);
    }
    return MetricsText(MetricsNow());
  }));
  // For scripts and tests: the address, written whole (renamed into place) once it serves.
  const fs::path file = AddressFile(config_);
  const fs::path tmp = file.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << metrics_->address().ToString() << '\n';
    out.flush();
    if (!out) return Status::IoError("metrics: cannot write " + tmp.string());
  }
  std::error_code ec;
  fs::rename(tmp, file, ec);
  if (ec) return Status::IoError("metrics: cannot rename " + tmp.string() + ": " + ec.message());
  log_.Info("metrics: " + metrics_->url());
  return Status::Ok();
}

MetricsSnapshot Crawler::MetricsNow() {
  MetricsSnapshot m;
  m.stats = stats_->Snapshot();
  m.stats.AddRejections(scope_->Rejections());
  const FrontierStats f = frontier_->Stats();
  m.pending_in_memory = f.pending_in_memory;
  m.pending_spilled = f.pending > f.pending_in_memory ? f.pending - f.pending_in_memory : 0;
  m.in_flight = f.in_flight;
  m.hosts_active = f.keys_active;
  m.hosts_waiting = f.keys_waiting;
  m.hosts_retired = f.keys_retired;
  const SeenStats seen = seen_->Stats();
  m.seen_fill_ratio = seen.bloom_fill_ratio;
  m.seen_expected_fp_rate = seen.bloom_expected_fp_rate;
  const Clock::Duration age =
      clock_.Now().time_since_epoch() - Clock::Duration(last_checkpoint_.load());
  m.checkpoint_age_s = std::max(0.0, std::chrono::duration<double>(age).count());
  m.node_id = node_id();
  if (dust_) m.dust = dust_->counters();
  return m;
}

MetricsSnapshot Crawler::FinalMetrics(const CrawlStatsSnapshot& final_stats) {
  MetricsSnapshot m = MetricsNow();
  m.stats = final_stats;
  m.running = false;
  return m;
}

void Crawler::StopMetrics(const MetricsSnapshot& final_metrics) {
  if (!metrics_) return;
  {
    // From now on /metrics shows what stats.json holds (written before this call).
    std::lock_guard<std::mutex> lock(metrics_mu_);
    final_metrics_ = final_metrics;
  }
  if (config_.output.metrics_linger.count() > 0) {
    // The final figures stay up for a scraper, unless a stop (a signal, an error) was asked.
    std::unique_lock<std::mutex> lock(monitor_mu_);
    monitor_cv_.wait_for(lock, config_.output.metrics_linger,
                         [this] { return stop_requested_.load(); });
  }
  metrics_->Stop();
  std::error_code ec;
  fs::remove(AddressFile(config_), ec);
}

}  // namespace urlsieve
