// The cost of applying learned URL rules (url/dust_learner.h, docs/features/dust.md) against the
// canonicalization every link already pays: DustLearner::Decide over 100k generated URLs (5000
// hosts), canonicalized once beforehand, in batches of 64 links as the crawl calls it (a page's
// links; grouped by origin, as most of a page's links are on its own host):
//   BM_CanonicalizeLinks  Canonicalize (the allocating parse the crawl does per link): the baseline
//   BM_DecideNoRuleHere   the learner has rules, but not for these origins (the common case)
//   BM_DecideRules        every origin has 4 active rules of the kinds a crawl learns (a session
//                         parameter, a form, a mirror, an index file) that few URLs match
//   BM_DecideRewriteAll   every origin has sort-params and a tracking parameter: about half the
//                         URLs are rewritten (a new rule key each): the worst case
// Instructions per URL (docs/features/dust.md, "Measured"): run one benchmark under callgrind,
// counting only the call measured, and divide by the 100k URLs of its one iteration:
//   valgrind --tool=callgrind --toggle-collect='urlsieve::DustLearner::Decide(*'
//       build/bench/bench_dust --benchmark_filter='BM_DecideRules$' --benchmark_min_time=0.01
// (`urlsieve::UrlCanonicalizer::Canonicalize(*` for BM_CanonicalizeLinks).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "bench/support_url_generator.h"
#include "url/dust_learner.h"
#include "url/url_canonicalizer.h"

namespace urlsieve {
namespace {

constexpr size_t kBatch = 64;  // links per page

const std::vector<std::string>& Urls() {
  static const std::vector<std::string> urls = bench::UrlGenerator(42).NextBatch(100000);
  return urls;
}

const std::vector<CanonicalUrl>& Canonical() {
  static const std::vector<CanonicalUrl> canonical = [] {
    std::vector<CanonicalUrl> out;
    const UrlCanonicalizer canonicalizer;
    for (const std::string& url : Urls()) {
      Result<CanonicalUrl> c = canonicalizer.Canonicalize(url);
      if (c.ok()) out.push_back(std::move(*c));
    }
    std::stable_sort(out.begin(), out.end(), [](const CanonicalUrl& a, const CanonicalUrl& b) {
      return a.origin() < b.origin();
    });
    return out;
  }();
  return canonical;
}

void RunDecide(benchmark::State& state, DustLearner& learner) {
  const std::vector<CanonicalUrl>& urls = Canonical();
  std::vector<LinkDecision> decisions;
  for (auto _ : state) {
    for (size_t i = 0; i < urls.size(); i += kBatch) {
      const size_t n = std::min(kBatch, urls.size() - i);
      learner.Decide(std::span<const CanonicalUrl>(urls.data() + i, n), &decisions);
      benchmark::DoNotOptimize(decisions.data());
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(urls.size()));
}

void BM_CanonicalizeLinks(benchmark::State& state) {
  const UrlCanonicalizer canonicalizer;
  for (auto _ : state) {
    for (const std::string& url : Urls()) benchmark::DoNotOptimize(canonicalizer.Canonicalize(url));
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(Urls().size()));
}
BENCHMARK(BM_CanonicalizeLinks)->Unit(benchmark::kMillisecond);

void BM_DecideNoRuleHere(benchmark::State& state) {
  DustLearner learner(DustOptions{});
  (void)learner.AddUserRule("http://127.0.0.1:1", "drop-param sid", true);
  RunDecide(state, learner);
}
BENCHMARK(BM_DecideNoRuleHere)->Unit(benchmark::kMillisecond);

// A learner with `forms` pinned on every origin of the URLs.
void RunDecideWith(benchmark::State& state, std::initializer_list<const char*> forms) {
  DustLearner learner(DustOptions{});
  std::set<std::string> origins;
  for (const CanonicalUrl& url : Canonical()) origins.emplace(url.origin());
  for (const std::string& origin : origins) {
    for (const char* form : forms) (void)learner.AddUserRule(origin, form, true);
  }
  RunDecide(state, learner);
}

void BM_DecideRules(benchmark::State& state) {
  RunDecideWith(state, {"drop-param sid", "skip-param action=edit", "alias /mirror/ /",
                        "index-file index.html"});
}
BENCHMARK(BM_DecideRules)->Unit(benchmark::kMillisecond);

void BM_DecideRewriteAll(benchmark::State& state) {
  RunDecideWith(state, {"sort-params", "drop-param utm_source"});
}
BENCHMARK(BM_DecideRewriteAll)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace urlsieve

BENCHMARK_MAIN();
