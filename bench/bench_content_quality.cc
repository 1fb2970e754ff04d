// The near-duplicate fingerprint's quality on a corpus with ground truth (bench/content_corpus.py):
// every page, in crawl order, goes through urlsieve's own LinkExtractor (visible text, in the
// walk of the link extraction) and SimHash; a page is called a near-duplicate when some earlier
// page's fingerprint is within Hamming distance k. Against truth.tsv: precision and recall overall
// and recall per planted kind, for k = 1..6 (docs/features/content-seen.md, "Quality").
//
//   bench_content_quality CORPUS_DIR [--shingle N] [--text-dir DIR] [--pairs FILE] [--pairs-k K]
//
// --text-dir writes each page's visible text to DIR/NNNNN.txt (for Debian's simhash, which reads
// text); --pairs writes the pairs of pages within distance K (default 3) as "i j" lines, i < j.
// Speeds are pages/s on one core over files already in memory.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "crawler/page/link_extractor.h"
#include "dedup/content/simhash.h"

namespace urlsieve {
namespace {

struct Page {
  std::string file;
  std::string kind;  // "distinct" or the planted kind
  int original = -1;
  std::string html;
  std::string text;
  uint64_t fingerprint = 0;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

int Run(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s CORPUS_DIR [--shingle N] [--text-dir DIR] [--pairs FILE] "
                 "[--pairs-k K]\n",
                 argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  SimHashOptions options;
  std::string text_dir, pairs_file;
  int pairs_k = 3;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--shingle") {
      options.shingle_words = std::atoi(argv[i + 1]);
    } else if (flag == "--text-dir") {
      text_dir = argv[i + 1];
    } else if (flag == "--pairs") {
      pairs_file = argv[i + 1];
    } else if (flag == "--pairs-k") {
      pairs_k = std::atoi(argv[i + 1]);
    } else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }

  std::vector<Page> pages;
  {
    std::ifstream truth(dir + "/truth.tsv");
    if (!truth) {
      std::fprintf(stderr, "no %s/truth.tsv\n", dir.c_str());
      return 1;
    }
    std::string line;
    while (std::getline(truth, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream fields(line);
      Page p;
      fields >> p.file >> p.kind >> p.original;
      p.html = ReadFile(dir + "/" + p.file);
      pages.push_back(std::move(p));
    }
  }
  if (pages.empty()) return 1;

  UrlCanonicalizer canonicalizer;
  LinkExtractor::Options extract_options;
  extract_options.collect_text = true;
  LinkExtractor extractor(&canonicalizer, extract_options);
  size_t html_bytes = 0, text_bytes = 0;
  auto start = std::chrono::steady_clock::now();
  for (Page& p : pages) {
    PageLinks links = extractor.Extract(p.html, "http://example.com/" + p.file);
    p.text = std::move(links.text);
    p.fingerprint = SimHash(p.text, options);
    html_bytes += p.html.size();
    text_bytes += p.text.size();
  }
  const double extract_s = Seconds(start);
  // SimHash alone, over the collected text (repeated for a measurable time).
  start = std::chrono::steady_clock::now();
  uint64_t sink = 0;
  const int rounds = 5;
  for (int r = 0; r < rounds; ++r)
    for (const Page& p : pages) sink ^= SimHash(p.text, options);
  const double simhash_s = Seconds(start) / rounds;

  std::printf(
      "corpus %s: %zu pages, %.1f KB HTML and %.1f KB visible text per page; shingles of "
      "%d words\n",
      dir.c_str(), pages.size(), html_bytes / 1024.0 / pages.size(),
      text_bytes / 1024.0 / pages.size(), options.shingle_words);
  std::printf(
      "speed: parse + links + text + SimHash %.0f pages/s; SimHash of the text alone "
      "%.0f pages/s (%.0f MB/s)%s\n",
      pages.size() / extract_s, pages.size() / simhash_s, text_bytes / simhash_s / 1e6,
      sink == 42 ? " " : "");

  // For each page and k: is some earlier page within k? (Brute force: n^2/2 popcounts.)
  const int kMaxK = 6;
  std::vector<int> nearest(pages.size(), 65);  // distance to the nearest earlier page
  std::vector<std::pair<size_t, size_t>> pairs;
  for (size_t j = 0; j < pages.size(); ++j) {
    for (size_t i = 0; i < j; ++i) {
      int d = HammingDistance(pages[i].fingerprint, pages[j].fingerprint);
      nearest[j] = std::min(nearest[j], d);
      if (!pairs_file.empty() && d <= pairs_k) pairs.emplace_back(i, j);
    }
  }

  std::vector<std::string> kinds = {"exact", "date",  "counter", "token",   "edit1",
                                    "edit3", "edit5", "edit10",  "template"};
  std::map<std::string, int> count;
  for (const Page& p : pages) ++count[p.kind];
  std::printf("\nnear-duplicate of an earlier page at distance <= k\n");
  std::printf("%-10s %6s", "kind", "pages");
  for (int k = 1; k <= kMaxK; ++k) std::printf("  k=%d  ", k);
  std::printf("\n");
  auto row = [&](const std::string& name, int n, auto&& share) {
    std::printf("%-10s %6d", name.c_str(), n);
    for (int k = 1; k <= kMaxK; ++k) std::printf("  %5.3f", share(k));
    std::printf("\n");
  };
  for (const std::string& kind : kinds) {
    row("recall " + kind, count[kind], [&](int k) {
      int hit = 0;
      for (size_t j = 0; j < pages.size(); ++j)
        if (pages[j].kind == kind && nearest[j] <= k) ++hit;
      return count[kind] ? static_cast<double>(hit) / count[kind] : 0.0;
    });
  }
  int planted = static_cast<int>(pages.size()) - count["distinct"];
  row("recall all", planted, [&](int k) {
    int hit = 0;
    for (size_t j = 0; j < pages.size(); ++j)
      if (pages[j].kind != "distinct" && nearest[j] <= k) ++hit;
    return planted ? static_cast<double>(hit) / planted : 0.0;
  });
  row("precision", static_cast<int>(pages.size()), [&](int k) {
    int tp = 0, fp = 0;
    for (size_t j = 0; j < pages.size(); ++j) {
      if (nearest[j] > k) continue;
      (pages[j].kind == "distinct" ? fp : tp) += 1;
    }
    return tp + fp ? static_cast<double>(tp) / (tp + fp) : 1.0;
  });
  row("false pos.", count["distinct"], [&](int k) {
    int fp = 0;
    for (size_t j = 0; j < pages.size(); ++j)
      if (pages[j].kind == "distinct" && nearest[j] <= k) ++fp;
    return static_cast<double>(fp);
  });
  // How far the planted copies are from their originals: the median distance per kind.
  std::printf("\nmedian distance to the original:");
  for (const std::string& kind : kinds) {
    std::vector<int> d;
    for (const Page& p : pages)
      if (p.kind == kind && p.original >= 0)
        d.push_back(HammingDistance(p.fingerprint, pages[p.original].fingerprint));
    if (d.empty()) continue;
    std::nth_element(d.begin(), d.begin() + d.size() / 2, d.end());
    std::printf(" %s %d", kind.c_str(), d[d.size() / 2]);
  }
  std::printf("\n");

  if (!text_dir.empty()) {
    for (size_t i = 0; i < pages.size(); ++i) {
      char name[32];
      std::snprintf(name, sizeof(name), "/%05zu.txt", i);
      std::ofstream(text_dir + name, std::ios::binary) << pages[i].text;
    }
  }
  if (!pairs_file.empty()) {
    std::ofstream out(pairs_file);
    for (auto [i, j] : pairs) out << i << ' ' << j << '\n';
  }
  return 0;
}

}  // namespace
}  // namespace urlsieve

int main(int argc, char** argv) { return urlsieve::Run(argc, argv); }
