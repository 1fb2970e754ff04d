// urlsieve_gen_urls N [SEED]: writes N URLs, one per line, for bench/compare_filter.sh. The mix
// imitates a crawl's link stream: 60 % URLs not written before, 20 % exact repeats of an earlier
// line, 20 % re-spellings of an earlier URL with the same canonical key (upper-case scheme/host,
// default port, fragment, percent-encoded unreserved character, "./"). Earlier lines are drawn from
// the last 2^20 new URLs, so memory stays constant. Deterministic for a given seed.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/support_url_generator.h"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: %s N [SEED]\n", argv[0]);
    return 2;
  }
  const unsigned long long n = std::strtoull(argv[1], nullptr, 10);
  const unsigned long long seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1;
  urlsieve::bench::UrlGenerator gen(seed);
  constexpr size_t kPool = 1 << 20;
  std::vector<std::string> pool;
  pool.reserve(kPool);
  size_t written_new = 0;
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  auto rand = [&state] {  // splitmix64
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  std::string line;
  for (unsigned long long i = 0; i < n; ++i) {
    const unsigned kind = static_cast<unsigned>(rand() % 10);
    if (pool.empty() || kind < 6) {
      line = gen.Next();
      if (pool.size() < kPool) {
        pool.push_back(line);
      } else {
        pool[written_new % kPool] = line;
      }
      ++written_new;
    } else {
      const std::string& earlier = pool[rand() % pool.size()];
      line = kind < 8 ? earlier : gen.Variant(earlier);
    }
    line += '\n';
    if (fwrite(line.data(), 1, line.size(), stdout) != line.size()) return 1;
  }
  return fflush(stdout) == 0 ? 0 : 1;
}
