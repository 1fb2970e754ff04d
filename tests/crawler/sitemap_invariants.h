// SitemapInvariantViolation: what is wrong with ParseSitemap's answer for a body ("" = nothing),
// checked by the fuzz_sitemap target and by the test that replays its corpus
// (tests/crawler/sitemap_parser_test.cc): every limit holds, entries are clean URLs-to-be, a
// refusal says why, and feeding the bytes in two pieces finds what feeding them whole finds.
// Thread-safety: a pure function.
#ifndef URLSIEVE_TESTS_CRAWLER_SITEMAP_INVARIANTS_H_
#define URLSIEVE_TESTS_CRAWLER_SITEMAP_INVARIANTS_H_

#include <string>
#include <string_view>

#include "crawler/sitemap/sitemap_parser.h"

namespace urlsieve::testing {

inline std::string SitemapInvariantViolation(std::string_view body) {
  SitemapLimits limits;  // small limits, so that the fuzzer reaches them
  limits.max_entries = 50;
  limits.max_bytes = 64 * 1024;
  limits.max_loc_length = 100;
  limits.max_element_depth = 8;
  const SitemapParse parse = ParseSitemap(body, limits);
  if (parse.entries.size() > limits.max_entries) return "more entries than max_entries";
  if (parse.cut_entries > 0 && parse.entries.size() != limits.max_entries) {
    return "entries cut before max_entries";
  }
  if (parse.bytes > limits.max_bytes) return "more bytes read than max_bytes";
  if (!parse.gzip && parse.bytes > body.size()) return "more bytes read than given";
  if (parse.refused && parse.error.empty()) return "a refusal without a reason";
  if (parse.kind == SitemapKind::kUnknown && !parse.entries.empty()) return "entries of no kind";
  for (const SitemapEntry& entry : parse.entries) {
    if (entry.loc.empty()) return "an empty loc";
    if (entry.loc.size() > limits.max_loc_length) return "a loc longer than max_loc_length";
    const char first = entry.loc.front();
    const char last = entry.loc.back();
    for (char c : {first, last}) {
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') return "a loc not trimmed: " + entry.loc;
    }
    if (entry.loc.find('\n') != std::string::npos && parse.kind == SitemapKind::kText) {
      return "a text line holding a newline";
    }
  }
  if (!parse.gzip && body.size() >= 2) {
    // Streaming: two pieces find what one finds.
    SitemapParser parser(limits);
    const size_t half = body.size() / 2;
    if (parser.Feed(body.substr(0, half))) parser.Feed(body.substr(half));
    const SitemapParse pieces = parser.Finish();
    if (pieces.kind != parse.kind) return "two pieces find another kind";
    if (pieces.entries.size() != parse.entries.size()) return "two pieces find other entries";
    for (size_t i = 0; i < parse.entries.size(); ++i) {
      if (pieces.entries[i].loc != parse.entries[i].loc ||
          pieces.entries[i].lastmod != parse.entries[i].lastmod) {
        return "two pieces find entry " + std::to_string(i) + " otherwise";
      }
    }
    if (pieces.error != parse.error) return "two pieces: " + pieces.error + " vs " + parse.error;
  }
  return "";
}

}  // namespace urlsieve::testing

#endif  // URLSIEVE_TESTS_CRAWLER_SITEMAP_INVARIANTS_H_
