// Link extraction throughput on generated 30 KB pages with ~100 links, against gumbo's parse alone
// (the "parse ceiling": extraction cannot be faster than the parse it walks), plus the guard pass
// on its own and hostile pages (~1 MB each) to show the guard keeps every case linear; and the
// content fingerprint's cost on top of extraction: the visible text collected in the same walk,
// then its SimHash (docs/features/content-seen.md, "Fingerprints").
#include <benchmark/benchmark.h>
#include <gumbo.h>

#include <string>
#include <vector>

#include "bench/support_html_page.h"
#include "crawler/page/html_guard.h"
#include "crawler/page/link_extractor.h"
#include "dedup/content/simhash.h"

namespace urlsieve {
namespace {

const std::vector<std::string>& Pages() {
  static const std::vector<std::string> pages = [] {
    std::vector<std::string> p;
    for (uint64_t seed = 1; seed <= 64; ++seed) p.push_back(bench::GenerateHtmlPage(seed));
    return p;
  }();
  return pages;
}

void Report(benchmark::State& state, size_t bytes, size_t pages) {
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.SetItemsProcessed(static_cast<int64_t>(pages));  // items/s = pages/s
}

void BM_GumboParseOnly(benchmark::State& state) {
  const auto& pages = Pages();
  size_t i = 0, bytes = 0, n = 0;
  GumboOptions options = kGumboDefaultOptions;
  options.max_errors = 0;
  for (auto _ : state) {
    const std::string& page = pages[i++ % pages.size()];
    GumboOutput* out = gumbo_parse_with_options(&options, page.data(), page.size());
    benchmark::DoNotOptimize(out->root);
    gumbo_destroy_output(&options, out);
    bytes += page.size();
    ++n;
  }
  Report(state, bytes, n);
}
BENCHMARK(BM_GumboParseOnly);

void BM_GuardOnly(benchmark::State& state) {
  const auto& pages = Pages();
  size_t i = 0, bytes = 0, n = 0;
  std::string out;
  for (auto _ : state) {
    const std::string& page = pages[i++ % pages.size()];
    benchmark::DoNotOptimize(GuardHtml(page, {}, &out).changed);
    bytes += page.size();
    ++n;
  }
  Report(state, bytes, n);
}
BENCHMARK(BM_GuardOnly);

void BM_ExtractLinks(benchmark::State& state) {
  const auto& pages = Pages();
  UrlCanonicalizer canonicalizer;
  LinkExtractor extractor(&canonicalizer, {});
  size_t i = 0, bytes = 0, n = 0, links = 0;
  for (auto _ : state) {
    const std::string& page = pages[i++ % pages.size()];
    PageLinks result = extractor.Extract(page, "http://www.example.com/section/index.html");
    links += result.links.size();
    bytes += page.size();
    ++n;
  }
  Report(state, bytes, n);
  state.counters["links/page"] = static_cast<double>(links) / static_cast<double>(n);
  state.counters["page_KB"] = static_cast<double>(bytes) / static_cast<double>(n) / 1024;
}
BENCHMARK(BM_ExtractLinks);

// Extraction with the visible text collected and fingerprinted: what a crawl with the
// content-seen test does per page. The difference to BM_ExtractLinks is the fingerprint's cost.
void BM_ExtractLinksTextSimHash(benchmark::State& state) {
  const auto& pages = Pages();
  UrlCanonicalizer canonicalizer;
  LinkExtractor::Options options;
  options.collect_text = true;
  LinkExtractor extractor(&canonicalizer, options);
  size_t i = 0, bytes = 0, n = 0, text = 0;
  for (auto _ : state) {
    const std::string& page = pages[i++ % pages.size()];
    PageLinks result = extractor.Extract(page, "http://www.example.com/section/index.html");
    benchmark::DoNotOptimize(SimHash(result.text));
    text += result.text.size();
    bytes += page.size();
    ++n;
  }
  Report(state, bytes, n);
  state.counters["text_KB"] = static_cast<double>(text) / static_cast<double>(n) / 1024;
}
BENCHMARK(BM_ExtractLinksTextSimHash);

// SimHash alone over the pages' visible text (collected once, outside the loop).
void BM_SimHashOnly(benchmark::State& state) {
  static const std::vector<std::string> texts = [] {
    UrlCanonicalizer canonicalizer;
    LinkExtractor::Options options;
    options.collect_text = true;
    LinkExtractor extractor(&canonicalizer, options);
    std::vector<std::string> t;
    for (const std::string& page : Pages()) t.push_back(extractor.Extract(page, "http://a/").text);
    return t;
  }();
  size_t i = 0, bytes = 0, n = 0;
  for (auto _ : state) {
    const std::string& text = texts[i++ % texts.size()];
    benchmark::DoNotOptimize(SimHash(text));
    bytes += text.size();
    ++n;
  }
  Report(state, bytes, n);
}
BENCHMARK(BM_SimHashOnly);

std::string Hostile(int which) {
  const size_t target = 1 << 20;
  std::string unit;
  switch (which) {
    case 0:
      unit = "<div>";
      break;
    case 1:
      unit = "<div></span>";
      break;
    case 2:
      unit = "<b><div></b>";
      break;
    case 3:
      unit = "<table><b>x";
      break;
    case 4:
      unit = "<a href=/x><b><p>";
      break;
    default:
      break;
  }
  std::string html;
  if (which == 5) {  // distinct formatting elements: the active formatting list grows
    for (int i = 0; html.size() < target; ++i) html += "<b id=" + std::to_string(i) + ">x";
  } else if (which == 6) {  // one tag, very many attributes
    html = "<a ";
    // 'x' + s, not "x" + s: GCC 12 at -O3 warns -Wrestrict wrongly on a 1-char literal + string&&.
    for (int i = 0; html.size() < target; ++i) html += 'x' + std::to_string(i) + "=1 ";
    html += "href=/x>";
  } else {
    while (html.size() < target) html += unit;
  }
  return html;
}

void BM_ExtractHostile(benchmark::State& state) {
  static const char* kNames[] = {"nested-div", "div-stray-end", "misnested-b", "table-foster",
                                 "a-b-p",      "distinct-b",    "attributes"};
  const std::string html = Hostile(static_cast<int>(state.range(0)));
  state.SetLabel(kNames[state.range(0)]);
  UrlCanonicalizer canonicalizer;
  LinkExtractor extractor(&canonicalizer, {});
  size_t n = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(extractor.Extract(html, "http://example.com/").links.size());
    ++n;
  }
  Report(state, html.size() * n, n);
}
BENCHMARK(BM_ExtractHostile)->DenseRange(0, 6)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace urlsieve

BENCHMARK_MAIN();
