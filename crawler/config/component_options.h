// What each component of a crawl takes from the CrawlConfig: the fetcher's and the frontier's
// options, derived in one place beside the config (crawler/config/crawl_options.h declares the
// options). Thread-safety: pure functions.
#ifndef URLSIEVE_CRAWLER_CONFIG_COMPONENT_OPTIONS_H_
#define URLSIEVE_CRAWLER_CONFIG_COMPONENT_OPTIONS_H_

#include <string>

#include "crawler/config/crawl_config.h"
#include "crawler/fetch/fetcher.h"
#include "frontier/frontier_options.h"

namespace urlsieve {

FetcherOptions FetcherOptionsFrom(const CrawlConfig& config);
// `spill_path`: the frontier's scratch SQLite file (in the crawl's state directory).
FrontierOptions FrontierOptionsFrom(const CrawlConfig& config, const std::string& spill_path);

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CONFIG_COMPONENT_OPTIONS_H_
