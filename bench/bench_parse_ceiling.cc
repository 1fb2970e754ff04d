// The parse ceiling: how many pages per second one core can parse with gumbo alone, the upper
// bound of link extraction (and so of a crawl that extracts links) per core, next to full link
// extraction over the same pages.
//
// Pages: every regular file under $URLSIEVE_SITE_DIR (recursively) when set — e.g. a mirrored
// site, or the test site the crawl benchmarks serve — otherwise 256 generated 30 KB pages.
// items_per_second is pages/s on one core (CPU time).
#include <benchmark/benchmark.h>
#include <gumbo.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bench/support_html_page.h"
#include "crawler/page/link_extractor.h"

namespace urlsieve {
namespace {

struct Corpus {
  std::vector<std::string> pages;
  std::string source;
};

const Corpus& LoadCorpus() {
  static const Corpus corpus = [] {
    Corpus c;
    const char* dir = std::getenv("URLSIEVE_SITE_DIR");
    if (dir != nullptr && *dir != '\0') {
      std::error_code ec;
      for (const auto& entry : std::filesystem::recursive_directory_iterator(dir, ec)) {
        if (!entry.is_regular_file()) continue;
        std::ifstream in(entry.path(), std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        c.pages.push_back(text.str());
      }
      c.source = std::string(dir);
    }
    if (c.pages.empty()) {
      for (uint64_t seed = 1; seed <= 256; ++seed) c.pages.push_back(bench::GenerateHtmlPage(seed));
      c.source = "generated";
    }
    return c;
  }();
  return corpus;
}

void BM_ParseCeiling(benchmark::State& state) {
  const Corpus& corpus = LoadCorpus();
  GumboOptions options = kGumboDefaultOptions;
  options.max_errors = 0;
  size_t i = 0, bytes = 0, n = 0;
  for (auto _ : state) {
    const std::string& page = corpus.pages[i++ % corpus.pages.size()];
    GumboOutput* out = gumbo_parse_with_options(&options, page.data(), page.size());
    benchmark::DoNotOptimize(out->root);
    gumbo_destroy_output(&options, out);
    bytes += page.size();
    ++n;
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.SetItemsProcessed(static_cast<int64_t>(n));
  state.SetLabel(corpus.source + ", " + std::to_string(corpus.pages.size()) + " pages");
}
BENCHMARK(BM_ParseCeiling);

void BM_ExtractCorpus(benchmark::State& state) {
  const Corpus& corpus = LoadCorpus();
  UrlCanonicalizer canonicalizer;
  LinkExtractor extractor(&canonicalizer, {});
  size_t i = 0, bytes = 0, n = 0;
  for (auto _ : state) {
    const std::string& page = corpus.pages[i++ % corpus.pages.size()];
    benchmark::DoNotOptimize(extractor.Extract(page, "http://www.example.com/a/b.html"));
    bytes += page.size();
    ++n;
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.SetItemsProcessed(static_cast<int64_t>(n));
  state.SetLabel(corpus.source);
}
BENCHMARK(BM_ExtractCorpus);

}  // namespace
}  // namespace urlsieve

BENCHMARK_MAIN();
