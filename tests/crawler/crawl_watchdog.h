// RunCrawlWithWatchdog: runs a crawl in this process; a watchdog stops one still running after a
// generous deadline, so that a regression fails (summary.stopped) instead of hanging the suite.
// Thread-safety: call from the test's thread; the watchdog is joined before it returns.
#ifndef URLSIEVE_TESTS_CRAWLER_CRAWL_WATCHDOG_H_
#define URLSIEVE_TESTS_CRAWLER_CRAWL_WATCHDOG_H_

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "crawler/crawl/crawler.h"
#include "crawler/deploy/deployment_factory.h"

namespace urlsieve::testing {

inline Result<CrawlSummary> RunCrawlWithWatchdog(const CrawlConfig& config) {
  auto crawler = OpenCrawler(config);
  if (!crawler.ok()) return crawler.status();
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::thread watchdog([&] {
    std::unique_lock<std::mutex> lock(mu);
    if (!cv.wait_for(lock, std::chrono::seconds(120), [&] { return done; })) {
      (*crawler)->RequestStop();
    }
  });
  Result<CrawlSummary> summary = (*crawler)->Run();
  {
    std::lock_guard<std::mutex> lock(mu);
    done = true;
  }
  cv.notify_all();
  watchdog.join();
  return summary;
}

}  // namespace urlsieve::testing

#endif  // URLSIEVE_TESTS_CRAWLER_CRAWL_WATCHDOG_H_
