// Throughput of the URL canonicalizer on one core: CanonicalizeTo (the hot path) over 100k
// generated URLs with default options and with the crawler rules, on URLs with tracking parameters
// with strip_tracking_params off and on, the allocating Canonicalize,
// and Resolve of relative links (also with a non-ASCII query from a GBK page). items/s is URLs/s.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "base/encoding/text_encoding.h"
#include "bench/support_url_generator.h"
#include "url/url_canonicalizer.h"

namespace urlsieve {
namespace {

const std::vector<std::string>& Urls() {
  static const std::vector<std::string> urls = bench::UrlGenerator(42).NextBatch(100000);
  return urls;
}

int64_t TotalBytes(const std::vector<std::string>& urls) {
  int64_t bytes = 0;
  for (const std::string& u : urls) bytes += static_cast<int64_t>(u.size());
  return bytes;
}

void RunCanonicalizeTo(benchmark::State& state, const CanonicalizeOptions& options) {
  const std::vector<std::string>& urls = Urls();
  const UrlCanonicalizer canonicalizer(options);
  std::string key;
  int64_t errors = 0;
  for (auto _ : state) {
    for (const std::string& url : urls) {
      errors += !canonicalizer.CanonicalizeTo(url, &key).ok();
      benchmark::DoNotOptimize(key.data());
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(urls.size()));
  state.SetBytesProcessed(state.iterations() * TotalBytes(urls));
  state.counters["errors"] = static_cast<double>(errors) / static_cast<double>(state.iterations());
}

void BM_CanonicalizeTo(benchmark::State& state) { RunCanonicalizeTo(state, {}); }
BENCHMARK(BM_CanonicalizeTo)->Unit(benchmark::kMillisecond);

void BM_CanonicalizeToAllRules(benchmark::State& state) {
  CanonicalizeOptions options;
  options.sort_query = options.drop_empty_query = options.strip_session_ids = true;
  options.strip_www = options.collapse_slashes = true;
  RunCanonicalizeTo(state, options);
}
BENCHMARK(BM_CanonicalizeToAllRules)->Unit(benchmark::kMillisecond);

// strip_tracking_params on URLs carrying campaign parameters (each URL gets utm_source, utm_medium,
// fbclid and a content parameter): a binary search per parameter. Off, the same URLs, for the
// difference.
void RunTracking(benchmark::State& state, bool strip) {
  static const std::vector<std::string> tagged = [] {
    std::vector<std::string> out;
    int i = 0;
    for (const std::string& u : Urls()) {
      const std::string url = u.substr(0, u.find('#'));
      out.push_back(url + (url.find('?') == std::string::npos ? "?" : "&") +
                    "utm_source=news&utm_medium=email&id=" + std::to_string(i++) +
                    "&fbclid=IwAR0abcdef");
    }
    return out;
  }();
  CanonicalizeOptions options;
  options.strip_tracking_params = strip;
  const UrlCanonicalizer canonicalizer(options);
  std::string key;
  for (auto _ : state) {
    for (const std::string& url : tagged) {
      benchmark::DoNotOptimize(canonicalizer.CanonicalizeTo(url, &key));
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(tagged.size()));
  state.SetBytesProcessed(state.iterations() * TotalBytes(tagged));
}
void BM_CanonicalizeToTrackingParamsOff(benchmark::State& state) { RunTracking(state, false); }
BENCHMARK(BM_CanonicalizeToTrackingParamsOff)->Unit(benchmark::kMillisecond);
void BM_CanonicalizeToStripTrackingParams(benchmark::State& state) { RunTracking(state, true); }
BENCHMARK(BM_CanonicalizeToStripTrackingParams)->Unit(benchmark::kMillisecond);

// ASCII hosts only: the path that never calls libidn2.
void BM_CanonicalizeToAsciiOnly(benchmark::State& state) {
  static const std::vector<std::string> ascii = [] {
    std::vector<std::string> out;
    for (const std::string& u : Urls()) {
      bool plain = true;
      for (char c : u) plain = plain && static_cast<unsigned char>(c) < 0x80;
      if (plain) out.push_back(u);
    }
    return out;
  }();
  const UrlCanonicalizer canonicalizer;
  std::string key;
  for (auto _ : state) {
    for (const std::string& url : ascii) {
      benchmark::DoNotOptimize(canonicalizer.CanonicalizeTo(url, &key));
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(ascii.size()));
  state.SetBytesProcessed(state.iterations() * TotalBytes(ascii));
}
BENCHMARK(BM_CanonicalizeToAsciiOnly)->Unit(benchmark::kMillisecond);

void BM_Canonicalize(benchmark::State& state) {
  const std::vector<std::string>& urls = Urls();
  const UrlCanonicalizer canonicalizer;
  for (auto _ : state) {
    for (const std::string& url : urls) benchmark::DoNotOptimize(canonicalizer.Canonicalize(url));
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(urls.size()));
}
BENCHMARK(BM_Canonicalize)->Unit(benchmark::kMillisecond);

// Links as found in a page: resolve against the page URL, then canonicalize.
void BM_ResolveThenCanonicalize(benchmark::State& state) {
  bench::UrlGenerator generator(7);
  std::vector<std::string> refs;
  for (int i = 0; i < 100000; ++i) refs.push_back(generator.NextRelative());
  const std::string base = "https://www.example.com/news/2024/article/index.html?id=42";
  const UrlCanonicalizer canonicalizer;
  std::string key;
  for (auto _ : state) {
    for (const std::string& ref : refs) {
      Result<std::string> absolute = canonicalizer.Resolve(base, ref);
      if (absolute.ok()) benchmark::DoNotOptimize(canonicalizer.CanonicalizeTo(*absolute, &key));
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(refs.size()));
}
BENCHMARK(BM_ResolveThenCanonicalize)->Unit(benchmark::kMillisecond);

// Links with a non-ASCII query, from a UTF-8 page (arg 0) and from a GBK page (arg 1), whose
// queries go through iconv (docs/features/canonicalization.md, "Queries in the document's
// encoding").
void BM_ResolveNonAsciiQuery(benchmark::State& state) {
  std::vector<std::string> refs;
  for (int i = 0; i < 10000; ++i) {
    refs.push_back("/搜索/页面.html?q=中文" + std::to_string(i) + "&lang=zh&t=新闻");
  }
  const TextEncoding* encoding = state.range(0) == 1 ? EncodingForLabel("gbk") : nullptr;
  const std::string base = "https://www.example.com/news/index.html";
  const UrlCanonicalizer canonicalizer;
  for (auto _ : state) {
    for (const std::string& ref : refs) {
      benchmark::DoNotOptimize(canonicalizer.Resolve(base, ref, encoding));
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(refs.size()));
}
BENCHMARK(BM_ResolveNonAsciiQuery)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace urlsieve

BENCHMARK_MAIN();
