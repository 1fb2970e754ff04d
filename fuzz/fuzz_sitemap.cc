// libFuzzer target for sitemaps (crawler/sitemap/sitemap_parser.h): any body — XML, text, gzip,
// garbage — parses within its limits and keeps the invariants of
// tests/crawler/sitemap_invariants.h. Any violation aborts, which libFuzzer reports as a crash.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "tests/crawler/sitemap_invariants.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string wrong = urlsieve::testing::SitemapInvariantViolation(
      std::string_view(reinterpret_cast<const char*>(data), size));
  if (!wrong.empty()) {
    std::fprintf(stderr, "%s\n", wrong.c_str());
    std::abort();
  }
  return 0;
}
