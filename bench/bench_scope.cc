// Scope::Check per URL: the cost of the trap guards and of std::regex allow/deny patterns, which
// run on every discovered link (tens per page) after canonicalization.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "crawler/crawl/scope.h"

namespace urlsieve {
namespace {

std::vector<CanonicalUrl> Urls() {
  UrlCanonicalizer canonicalizer;
  std::vector<CanonicalUrl> urls;
  const char* hosts[] = {"www.example.com", "blog.example.com", "other.org"};
  for (int i = 0; i < 1024; ++i) {
    std::string url = std::string("https://") + hosts[i % 3] + "/section-" +
                      std::to_string(i % 17) + "/article/" + std::to_string(i) +
                      "/page.html?ref=home&id=" + std::to_string(i * 7);
    urls.push_back(*canonicalizer.Canonicalize(url));
  }
  return urls;
}

void Run(benchmark::State& state, ScopeOptions options) {
  const std::vector<CanonicalUrl> urls = Urls();
  std::unique_ptr<Scope> scope = Scope::Create(options, {urls[0]}).value();
  size_t i = 0, accepted = 0;
  for (auto _ : state) accepted += scope->Check(urls[i++ % urls.size()], 2).accept();
  benchmark::DoNotOptimize(accepted);
  state.SetItemsProcessed(static_cast<int64_t>(i));
}

void BM_ScopeHostOnly(benchmark::State& state) { Run(state, {}); }
BENCHMARK(BM_ScopeHostOnly);

void BM_ScopeDomain(benchmark::State& state) {
  ScopeOptions o;
  o.mode = ScopeMode::kDomain;
  Run(state, o);
}
BENCHMARK(BM_ScopeDomain);

void BM_ScopeDomainWithRegexes(benchmark::State& state) {
  ScopeOptions o;
  o.mode = ScopeMode::kDomain;
  o.allow = {"^https://[a-z.]*example\\.com/section-[0-9]+/"};
  o.deny = {"\\.(pdf|zip|exe)$", "[?&](sessionid|sid)="};
  Run(state, o);
}
BENCHMARK(BM_ScopeDomainWithRegexes);

}  // namespace
}  // namespace urlsieve

BENCHMARK_MAIN();
