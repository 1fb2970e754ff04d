// OUT/crawl.toml: the options a crawl runs with, kept in its output directory, so that continuing
// it takes only --out (docs/usage/crawl.md, "Continuing a crawl"): `crawl --out OUT --resume`
// and `crawl --out OUT --recrawl` start from the saved options (its seeds file, scope, politeness,
// shared set...), and the flags given then override them. A --config FILE given instead wins over
// the saved file.
//
// Saved: every option that has a TOML key, as CrawlConfig holds it after the flags, except what
// one run asks for itself (crawl.resume, crawl.accept_loss, and how it reports: the metrics
// endpoint and its linger, the progress line, the log level). Written whole (a temporary file,
// then a rename) when the crawl has opened, so a refused start leaves the old file.
//
// Thread-safety: functions of values.
#ifndef URLSIEVE_CRAWLER_CONFIG_CRAWL_CONFIG_FILE_H_
#define URLSIEVE_CRAWLER_CONFIG_CRAWL_CONFIG_FILE_H_

#include <optional>
#include <string>

#include "base/status.h"
#include "crawler/config/crawl_config.h"

namespace urlsieve {

inline constexpr const char* kSavedConfigName = "crawl.toml";

// The saved options as TOML (ParseCrawlConfig reads it back).
std::string SavedCrawlConfigText(const CrawlConfig& config);
// Writes OUT/crawl.toml; IoError naming the file.
Status SaveCrawlConfig(const CrawlConfig& config);
// OUT/crawl.toml when `flags` continue a crawl (--resume or --recrawl, --out, no --config) whose
// output directory has one; nullopt otherwise.
std::optional<std::string> SavedConfigToContinue(const CrawlFlags& flags);

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CONFIG_CRAWL_CONFIG_FILE_H_
