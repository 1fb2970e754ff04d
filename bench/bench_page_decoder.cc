// What reading a page in its own encoding costs (docs/features/encodings.md, "Character
// encodings"): DecodedPage::Decode (sniffing + decoding to UTF-8) on the generated 30 KB pages of
// bench_link_extractor, with their text in Chinese (UTF-8, GBK, UTF-16LE), Russian
// (windows-1251) or English (ASCII, windows-1252 by default), against gumbo's parse of the same
// page, which every page pays anyway. Also the price of iconv_open, which the decoder's per-thread
// converters avoid paying per page.
#include <benchmark/benchmark.h>
#include <gumbo.h>
#include <iconv.h>

#include <string>
#include <vector>

#include "bench/support_html_page.h"
#include "crawler/page/page_decoder.h"

namespace urlsieve {
namespace {

// Replaces the words of text nodes (not tags or attributes) with words of `words`, so that about
// half of the visible text is non-ASCII.
std::string Translated(const std::string& html, const std::vector<std::string>& words) {
  std::string out;
  bool in_tag = false;
  size_t next = 0;
  for (size_t i = 0; i < html.size();) {
    const char c = html[i];
    if (c == '<') in_tag = true;
    if (c == '>') in_tag = false;
    if (!in_tag && c >= 'a' && c <= 'z') {
      size_t end = i;
      while (end < html.size() && html[end] >= 'a' && html[end] <= 'z') ++end;
      out += end - i >= 4 ? words[next++ % words.size()] : html.substr(i, end - i);
      i = end;
      continue;
    }
    out += c;
    ++i;
  }
  return out;
}

std::string Encode(const std::string& utf8, const char* to) {
  iconv_t cd = iconv_open(to, "UTF-8");
  std::string out(utf8.size() * 4 + 16, '\0');
  char* in = const_cast<char*>(utf8.data());
  size_t in_left = utf8.size();
  char* o = out.data();
  size_t o_left = out.size();
  iconv(cd, &in, &in_left, &o, &o_left);
  iconv_close(cd);
  out.resize(out.size() - o_left);
  return out;
}

struct Corpus {
  std::string name;
  std::string content_type;
  std::vector<std::string> pages;
  std::vector<std::string> utf8;  // the same pages in UTF-8, for gumbo
};

const std::vector<Corpus>& Corpora() {
  static const std::vector<Corpus> corpora = [] {
    const std::vector<std::string> chinese = {"中文", "网页", "搜索", "页面", "新闻", "关于"};
    const std::vector<std::string> russian = {"страница", "поиск", "новости", "архив", "товар"};
    std::vector<Corpus> c = {
        {"ascii-windows-1252", "text/html", {}, {}},
        {"utf-8-chinese", "text/html; charset=utf-8", {}, {}},
        {"gbk-chinese", "text/html; charset=gbk", {}, {}},
        {"windows-1251-russian", "text/html; charset=windows-1251", {}, {}},
        {"utf-16le-bom-chinese", "text/html", {}, {}},
    };
    for (uint64_t seed = 1; seed <= 16; ++seed) {
      const std::string page = bench::GenerateHtmlPage(seed);
      const std::string zh = Translated(page, chinese);
      const std::string ru = Translated(page, russian);
      c[0].pages.push_back(page);
      c[0].utf8.push_back(page);
      c[1].pages.push_back(zh);
      c[1].utf8.push_back(zh);
      c[2].pages.push_back(Encode(zh, "GBK"));
      c[2].utf8.push_back(zh);
      c[3].pages.push_back(Encode(ru, "CP1251"));
      c[3].utf8.push_back(ru);
      c[4].pages.push_back(std::string("\xFF\xFE").append(Encode(zh, "UTF-16LE")));
      c[4].utf8.push_back(zh);
    }
    return c;
  }();
  return corpora;
}

void BM_DecodePage(benchmark::State& state) {
  const Corpus& corpus = Corpora()[static_cast<size_t>(state.range(0))];
  state.SetLabel(corpus.name);
  size_t i = 0, bytes = 0, n = 0, copies = 0;
  for (auto _ : state) {
    const std::string& page = corpus.pages[i++ % corpus.pages.size()];
    Result<DecodedPage> decoded =
        DecodedPage::Decode(page, corpus.content_type, Windows1252Encoding());
    benchmark::DoNotOptimize(decoded->html().data());
    copies += decoded->copied();
    bytes += page.size();
    ++n;
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.SetItemsProcessed(static_cast<int64_t>(n));
  state.counters["page_KB"] = static_cast<double>(bytes) / static_cast<double>(n) / 1024;
  state.counters["copied"] = static_cast<double>(copies) / static_cast<double>(n);
}
BENCHMARK(BM_DecodePage)->DenseRange(0, 4);

// gumbo's parse of the page's UTF-8 text: the cost decoding is compared to.
void BM_GumboParse(benchmark::State& state) {
  const Corpus& corpus = Corpora()[static_cast<size_t>(state.range(0))];
  state.SetLabel(corpus.name);
  GumboOptions options = kGumboDefaultOptions;
  options.max_errors = 0;
  size_t i = 0, n = 0;
  for (auto _ : state) {
    const std::string& page = corpus.utf8[i++ % corpus.utf8.size()];
    GumboOutput* out = gumbo_parse_with_options(&options, page.data(), page.size());
    benchmark::DoNotOptimize(out->root);
    gumbo_destroy_output(&options, out);
    ++n;
  }
  state.SetItemsProcessed(static_cast<int64_t>(n));
}
BENCHMARK(BM_GumboParse)->DenseRange(0, 4);

// What opening a converter per page would add (the decoder keeps one per thread instead).
void BM_IconvOpenClose(benchmark::State& state) {
  const char* from = state.range(0) == 0 ? "GB18030" : "CP932";
  state.SetLabel(from);
  for (auto _ : state) {
    iconv_t cd = iconv_open("UTF-8", from);
    benchmark::DoNotOptimize(cd);
    iconv_close(cd);
  }
}
BENCHMARK(BM_IconvOpenClose)->DenseRange(0, 1);

}  // namespace
}  // namespace urlsieve

BENCHMARK_MAIN();
