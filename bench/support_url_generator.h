// UrlGenerator: a deterministic source of realistic absolute http(s) URLs for benchmarks.
//
// The mix imitates links harvested by a crawler: 60–120 bytes, thousands of hosts (some "www.",
// some internationalized in UTF-8, a few IPv4), multi-segment paths, queries, some
// percent-encoding, some upper-case spellings and dot segments. The same seed always yields the
// same sequence, on every platform, so figures from different runs and benches are comparable.
// Variant() re-spells a generated URL without changing its canonical key (default options),
// for benches of duplicate detection.
// Thread-safety: none; use one generator per thread.
#ifndef URLSIEVE_BENCH_SUPPORT_URL_GENERATOR_H_
#define URLSIEVE_BENCH_SUPPORT_URL_GENERATOR_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace urlsieve::bench {

class UrlGenerator {
 public:
  explicit UrlGenerator(uint64_t seed = 42, size_t host_count = 5000);

  // The next absolute URL (60–120 bytes).
  std::string Next();
  // `count` URLs from Next().
  std::vector<std::string> NextBatch(size_t count);
  // Another spelling of `url` (a URL from Next()) with the same default canonical key: upper-case
  // scheme or host, explicit default port, a fragment, an unreserved character percent-encoded,
  // or a "./" segment.
  std::string Variant(const std::string& url);
  // A relative reference as found in HTML ("../a/b.html", "?page=2", "//host/x", "/abs").
  std::string NextRelative();

 private:
  uint64_t Rand();
  size_t Below(size_t n) { return static_cast<size_t>(Rand() % n); }
  bool Chance(unsigned percent) { return Below(100) < percent; }
  const char* Word();
  void AppendSegment(std::string* path);

  uint64_t state_;
  std::vector<std::string> hosts_;
};

}  // namespace urlsieve::bench

#endif  // URLSIEVE_BENCH_SUPPORT_URL_GENERATOR_H_
