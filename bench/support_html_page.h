// Generated HTML pages for the benchmarks: deterministic, page-sized, link-rich markup shaped like
// a typical site page (head metadata, scripts and styles, navigation lists, paragraphs with inline
// links, a table, a footer).
#ifndef URLSIEVE_BENCH_SUPPORT_HTML_PAGE_H_
#define URLSIEVE_BENCH_SUPPORT_HTML_PAGE_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace urlsieve::bench {

// A page of about `bytes` bytes with about `links` links (relative, absolute, with queries and
// fragments, a few nofollow and mailto). Same seed, same page.
std::string GenerateHtmlPage(uint64_t seed, size_t bytes = 30 * 1024, int links = 100);

}  // namespace urlsieve::bench

#endif  // URLSIEVE_BENCH_SUPPORT_HTML_PAGE_H_
