#include "crawler/config/component_options.h"

#include <chrono>
#include <cstdint>

namespace urlsieve {

FetcherOptions FetcherOptionsFrom(const CrawlConfig& config) {
  FetcherOptions o;
  o.user_agent = config.fetch.user_agent;
  o.connect_timeout = std::chrono::milliseconds(config.fetch.connect_timeout_ms);
  o.total_timeout = std::chrono::milliseconds(config.fetch.timeout_ms);
  o.max_body_bytes = static_cast<uint64_t>(config.fetch.max_body_bytes);
  o.capture_headers = config.output.warc;
  // docs/features/content-seen.md, "Non-HTML bodies": an archive keeps what was fetched, and says
  // when it is not the whole body; without one, an unparsed body is not downloaded.
  if (config.output.warc) {
    o.other_bodies = config.output.warc_non_html == "truncate"
                         ? FetcherOptions::OtherBodies::kFirstBytes
                         : FetcherOptions::OtherBodies::kDownload;
    o.keep_cut_bodies = true;
  }
  o.verify_tls = config.fetch.verify_tls;
  o.ca_file = config.fetch.ca_file;
  return o;
}

FrontierOptions FrontierOptionsFrom(const CrawlConfig& config, const std::string& spill_path) {
  FrontierOptions o;
  o.user_agent = config.fetch.user_agent;
  o.obey_robots = config.politeness.obey_robots;
  o.delay = std::chrono::milliseconds(config.politeness.delay_ms);
  o.per_key_concurrency = static_cast<uint32_t>(config.politeness.per_host_concurrency);
  o.crawl_delay_cap = std::chrono::milliseconds(config.politeness.max_crawl_delay_ms);
  o.max_total_pages = static_cast<uint64_t>(config.crawl.max_pages);
  o.max_pages_per_key = static_cast<uint64_t>(config.scope.max_pages_per_host);
  o.backoff_initial = std::chrono::milliseconds(config.politeness.backoff_ms);
  o.max_retries = static_cast<uint32_t>(config.politeness.max_retries);
  o.robots_retries = static_cast<uint32_t>(config.politeness.robots_retries);
  o.max_retry_after = std::chrono::seconds(config.politeness.max_retry_after_s);
  o.max_pending_in_memory = config.crawl.max_pending_in_memory;
  o.spill_path = spill_path;
  return o;
}

}  // namespace urlsieve
