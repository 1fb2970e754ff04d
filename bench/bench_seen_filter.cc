// SeenFilter end to end (canonicalize + XXH3-128 + Bloom filter [+ SQLite]) on one core, against
// the obvious baseline: a std::unordered_set<std::string> of canonical keys.
//  - BM_SeenFilterBatch / BM_SeenFilterSingle: Bloom mode, in memory, capacity 1e7, ε 1e-3, over
//    2^20 generated URLs of which a third are re-spellings of earlier ones. items/s is URLs/s.
//  - BM_UnorderedSetBaseline: the same URLs, canonicalized, into an unordered_set; bytes_per_key
//    is the heap growth per distinct key (mallinfo2).
//  - BM_SeenFilterFresh/{0,1}: the same URLs in batches into a fresh filter each iteration, at the
//    crawl's defaults (capacity 1e7, ε 1e-6), in memory (0) or persistent and checkpointed (1,
//    Bloom-only, as a crawl without --exact; checkpoints, untimed, after the open and halfway):
//    the difference is what collecting the new keys for the delta log costs (bloom_delta_log.h).
//  - BM_ExactNew: exact mode, N new URLs (generated outside the timed region, batch by batch),
//    standalone (commit per batch) or checkpointed (one commit at the end). items/s is new URLs/s.
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <unordered_set>
#include <vector>

#include "bench/support_url_generator.h"
#include "dedup/seen_filter.h"
#include "url/url_canonicalizer.h"

namespace urlsieve {
namespace {

constexpr size_t kBatch = 4096;

const std::vector<std::string>& Urls() {
  static const std::vector<std::string> urls = [] {
    bench::UrlGenerator gen(7);
    std::vector<std::string> out;
    out.reserve(1 << 20);
    while (out.size() < (1 << 20)) {
      out.push_back(gen.Next());
      if (out.size() % 3 == 0) out.push_back(gen.Variant(out[out.size() / 2]));
    }
    return out;
  }();
  return urls;
}

const std::vector<std::string_view>& Views() {
  static const std::vector<std::string_view> views(Urls().begin(), Urls().end());
  return views;
}

std::unique_ptr<SeenFilter> OpenFilter(const SeenFilterOptions& options) {
  auto f = SeenFilter::Open(options);
  if (!f.ok()) {
    fprintf(stderr, "%s\n", f.status().ToString().c_str());
    std::abort();
  }
  return std::move(*f);
}

void BM_SeenFilterBatch(benchmark::State& state) {
  auto filter = OpenFilter(SeenFilterOptions{});
  const auto& views = Views();
  std::vector<SeenResult> out;
  int64_t fresh = 0;
  for (auto _ : state) {
    for (size_t b = 0; b < views.size(); b += kBatch) {
      const size_t n = std::min(kBatch, views.size() - b);
      if (!filter->InsertIfNewBatch(std::span(views).subspan(b, n), &out).ok()) std::abort();
      for (size_t i = 0; i < n; ++i) fresh += out[i].verdict == Verdict::kNew;
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(views.size()));
  state.counters["new"] = static_cast<double>(fresh);
}
BENCHMARK(BM_SeenFilterBatch)->Unit(benchmark::kMillisecond);

void BM_SeenFilterFresh(benchmark::State& state) {
  const bool persistent = state.range(0) != 0;
  const std::string dir = "/tmp/urlsieve_bench_fresh_" + std::to_string(getpid());
  const auto& views = Views();
  std::vector<SeenResult> out;
  int64_t fresh = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::filesystem::remove_all(dir);
    SeenFilterOptions options;
    options.fp_rate = 1e-6;
    if (persistent) {
      options.state_dir = dir;
      options.checkpointed = true;
    }
    auto filter = OpenFilter(options);
    // The first checkpoint writes the snapshot; the log collects keys from then on.
    if (persistent && !filter->Checkpoint().ok()) std::abort();
    state.ResumeTiming();
    for (size_t b = 0; b < views.size(); b += kBatch) {
      if (persistent && b == views.size() / kBatch / 2 * kBatch) {
        state.PauseTiming();
        if (!filter->Checkpoint().ok()) std::abort();
        state.ResumeTiming();
      }
      const size_t n = std::min(kBatch, views.size() - b);
      if (!filter->InsertIfNewBatch(std::span(views).subspan(b, n), &out).ok()) std::abort();
      for (size_t i = 0; i < n; ++i) fresh += out[i].verdict == Verdict::kNew;
    }
    state.PauseTiming();
    filter.reset();
    std::filesystem::remove_all(dir);
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(views.size()));
  state.counters["new"] = static_cast<double>(fresh) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_SeenFilterFresh)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_SeenFilterSingle(benchmark::State& state) {
  auto filter = OpenFilter(SeenFilterOptions{});
  const auto& views = Views();
  int64_t fresh = 0;
  for (auto _ : state) {
    for (std::string_view url : views) {
      auto r = filter->InsertIfNew(url);
      fresh += r.ok() && *r;
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(views.size()));
  state.counters["new"] = static_cast<double>(fresh);
}
BENCHMARK(BM_SeenFilterSingle)->Unit(benchmark::kMillisecond);

void BM_UnorderedSetBaseline(benchmark::State& state) {
  const UrlCanonicalizer canonicalizer;
  const auto& views = Views();
  std::string key;
  double bytes_per_key = 0;
  for (auto _ : state) {
    const size_t heap_before = mallinfo2().uordblks;
    std::unordered_set<std::string> seen;
    for (std::string_view url : views) {
      if (canonicalizer.CanonicalizeTo(url, &key).ok()) seen.insert(key);
    }
    bytes_per_key =
        static_cast<double>(mallinfo2().uordblks - heap_before) / static_cast<double>(seen.size());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(views.size()));
  state.counters["bytes_per_key"] = bytes_per_key;
}
BENCHMARK(BM_UnorderedSetBaseline)->Unit(benchmark::kMillisecond);

// Bloom memory per key for comparison with the baseline's bytes_per_key.
void BM_SeenFilterBytesPerKey(benchmark::State& state) {
  for (auto _ : state) {
    SeenFilterOptions options;
    options.capacity = Urls().size();
    auto filter = OpenFilter(options);
    std::vector<SeenResult> out;
    if (!filter->InsertIfNewBatch(Views(), &out).ok()) std::abort();
    const SeenStats s = filter->Stats();
    state.counters["bytes_per_key"] =
        static_cast<double>(s.bloom_bytes) / static_cast<double>(s.bloom_inserted);
  }
}
BENCHMARK(BM_SeenFilterBytesPerKey)->Iterations(1)->Unit(benchmark::kMillisecond);

// state.range(0): number of new URLs; state.range(1): 1 = checkpointed (crawl mode).
void BM_ExactNew(benchmark::State& state) {
  const int64_t total = state.range(0);
  const bool checkpointed = state.range(1) != 0;
  const std::string dir = "/tmp/urlsieve_bench_exact_" + std::to_string(getpid());
  int64_t fresh = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::filesystem::remove_all(dir);
    SeenFilterOptions options;
    options.capacity = static_cast<uint64_t>(total);
    options.state_dir = dir;
    options.exact = true;
    options.checkpointed = checkpointed;
    auto filter = OpenFilter(options);
    bench::UrlGenerator gen(11);
    std::vector<std::string> urls(kBatch);
    std::vector<std::string_view> views(kBatch);
    std::vector<SeenResult> out;
    state.ResumeTiming();
    for (int64_t done = 0; done < total; done += kBatch) {
      state.PauseTiming();
      for (size_t i = 0; i < kBatch; ++i) {
        // A unique path segment keeps every URL new whatever the generator repeats.
        urls[i] = gen.Next();
        urls[i].insert(urls[i].find('/', 8), "/n" + std::to_string(done + static_cast<int64_t>(i)));
        views[i] = urls[i];
      }
      state.ResumeTiming();
      if (!filter->InsertIfNewBatch(views, &out).ok()) std::abort();
      for (const SeenResult& r : out) fresh += r.verdict == Verdict::kNew;
    }
    if (!filter->Save().ok()) std::abort();
    state.PauseTiming();
    const SeenStats s = filter->Stats();
    state.counters["maybe_lookups"] = static_cast<double>(s.maybe_lookups);
    state.counters["false_positives"] = static_cast<double>(s.false_positives);
    filter.reset();
    std::filesystem::remove_all(dir);
    state.ResumeTiming();
  }
  state.SetItemsProcessed(fresh);
  state.counters["new"] = static_cast<double>(fresh) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_ExactNew)
    ->Args({1'000'000, 0})
    ->Args({1'000'000, 1})
    ->Args({10'000'000, 1})
    ->Args({10'000'000, 0})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace urlsieve

BENCHMARK_MAIN();
