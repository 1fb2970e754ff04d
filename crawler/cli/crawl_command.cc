// `urlsieve crawl`: runs a crawl from a seed list (crawler/crawl/crawler.h). SIGINT/SIGTERM stop it
// gracefully (finish in-flight fetches, checkpoint, exit 0); a second signal exits at once, leaving
// the state of the last checkpoint for --resume. With --seen-redis URL --name NAME the seen set is
// shared in Redis (crawler/state/crawl_state.h); a stop also ends the waits for a Redis that does
// not answer (crawler/crawl/seen_retry.h). With --cluster URL --cluster-name NAME the crawl is one
// node of a crawl cluster (crawler/crawl/crawler.h): it ends (exit 0) when the whole cluster's
// crawl is over, and a signal hands its partitions back after its in-flight pages are recorded and
// acknowledged.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "crawler/cli/commands.h"
#include "crawler/cli/option_flags.h"
#include "crawler/config/crawl_config.h"
#include "crawler/config/crawl_config_file.h"
#include "crawler/crawl/crawler.h"
#include "crawler/deploy/deployment_factory.h"

namespace urlsieve::cli {
namespace {

// Blocks SIGINT/SIGTERM in every thread created from now on and delivers them to a watcher thread,
// which calls on_signal (first signal) or exits the process (second one).
class SignalWatcher {
 public:
  explicit SignalWatcher(std::function<void()> on_signal) {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set_, &previous_);
    thread_ = std::thread([this, on_signal = std::move(on_signal)] {
      int received = 0;
      const timespec tick{0, 200'000'000};
      while (!done_.load()) {
        if (sigtimedwait(&set_, nullptr, &tick) < 0) continue;
        if (++received == 1) {
          on_signal();
        } else {
          std::fputs("urlsieve: exiting without a final checkpoint\n", stderr);
          _exit(kExitFailure);
        }
      }
    });
  }
  ~SignalWatcher() {
    done_ = true;
    thread_.join();
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }

 private:
  sigset_t set_;
  sigset_t previous_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

int RunCrawl(const CrawlFlags& flags) {
  Result<CrawlConfig> config = ResolveCrawlConfig(flags);
  if (!config.ok()) {
    std::fprintf(stderr, "urlsieve crawl: %s\n", config.status().message().c_str());
    return kExitUsage;
  }
  if (Status used = UseRedisPasswordFile(config->crawl.redis_password_file); !used.ok()) {
    std::fprintf(stderr, "urlsieve crawl: %s\n", used.message().c_str());
    return kExitUsage;
  }
  // The watcher runs from before the crawl is opened, so that threads started while opening (a
  // cluster node's heartbeat) leave the stop signals to it too (their default action would end
  // the process with no final checkpoint and no hand-over). A signal while opening ends the
  // process at once, as it always did; once the crawl runs, it stops the crawl gracefully.
  // The running crawl, guarded by running_mu: the watcher calls RequestStop under it, so the
  // crawl is not destroyed meanwhile.
  std::mutex running_mu;
  Crawler* running = nullptr;
  SignalWatcher signals([&running_mu, &running] {
    std::lock_guard<std::mutex> lock(running_mu);
    Crawler* crawler = running;
    if (crawler == nullptr) {
      std::fputs("urlsieve: interrupted (the crawl was not running)\n", stderr);
      _exit(kExitFailure);
    }
    std::fputs(
        "urlsieve: stopping — finishing in-flight fetches, then checkpointing "
        "(signal again to exit at once)\n",
        stderr);
    crawler->RequestStop();
  });
  Result<std::unique_ptr<Crawler>> crawler = OpenCrawler(*config);
  if (!crawler.ok()) {
    std::fprintf(stderr, "urlsieve crawl: %s\n", crawler.status().ToString().c_str());
    return crawler.status().code() == StatusCode::kInvalidArgument ? kExitUsage : kExitFailure;
  }
  if (Status saved = SaveCrawlConfig(*config); !saved.ok()) {
    std::fprintf(stderr, "urlsieve crawl: %s\n", saved.ToString().c_str());
    return kExitFailure;
  }
  for (const std::string& notice : (*crawler)->notices()) {
    std::fprintf(stderr, "urlsieve crawl: %s\n", notice.c_str());
  }
  {
    std::lock_guard<std::mutex> lock(running_mu);
    running = crawler->get();
  }
  Result<CrawlSummary> summary = (*crawler)->Run();
  {
    std::lock_guard<std::mutex> lock(running_mu);
    running = nullptr;
  }
  if (!summary.ok()) {
    std::fprintf(stderr, "urlsieve crawl: %s\n", summary.status().ToString().c_str());
    return kExitFailure;
  }
  std::fputs(summary->stats.SummaryTable().c_str(), stdout);
  if (config->cluster_mode()) {
    std::printf("node %s of the crawl cluster '%s': %s\n", (*crawler)->node_id().c_str(),
                config->cluster.name.c_str(),
                summary->stopped ? "stopped, its partitions handed back (continue with --resume)"
                                 : "the cluster's crawl is over");
  } else if (summary->stopped) {
    std::printf("stopped with %llu URLs pending: continue with --resume\n",
                static_cast<unsigned long long>(summary->pending));
  }
  std::printf("output: %s\n", config->crawl.out_dir.c_str());
  return kExitOk;
}

}  // namespace

void AddCrawlCommand(CLI::App& app, int* exit_code) {
  CLI::App* cmd = app.add_subcommand("crawl", "Crawl the web from a seed list");
  auto flags = std::make_shared<CrawlFlags>();
  AddCrawlFlags(cmd, flags.get());
  cmd->callback([flags, exit_code] { *exit_code = RunCrawl(*flags); });
}

}  // namespace urlsieve::cli
