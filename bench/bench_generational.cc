// The generational seen set (dedup/generational_seen_set.h) against the static Bloom filter at
// the same ε, on one core, over precomputed key hashes (the filter alone: no canonicalization).
// bench/generational.sh runs it and prints the ratios.
//  - BM_StaticBloom/<1/ε>: a fresh BloomSeenSet sized for N = 2^20 keys gets N' = N − N/256 new
//    keys in batches of 4096 (a little under N: the key that fills a layer to its capacity adds a
//    layer of twice its size, which would measure the growth, not the filter).
//    bits_per_url = filter bytes · 8 / N; ns_per_insert = time / N'.
//  - BM_Generational/<1/ε>/<G>: steady state, N keys per revisit_after: G + 1 generations are
//    filled with N' / G keys each (untimed), then each iteration turns to the next generation
//    (a ManualClock) and inserts N' / G new keys (each tested against the G older generations,
//    then inserted into the current one). bits_per_url = the live generations' bytes · 8 / N
//    (what a static filter of N keys is compared with); ns_per_insert = time / (N' / G).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "base/clock.h"
#include "dedup/bloom_seen_set.h"
#include "dedup/generational_seen_set.h"

namespace urlsieve {
namespace {

constexpr uint64_t kKeys = uint64_t{1} << 20;      // N, the capacity
constexpr uint64_t kFilled = kKeys - kKeys / 256;  // N', the keys inserted
constexpr size_t kBatch = 4096;

// Distinct pseudo-random 128-bit hashes (splitmix64), as XXH3 digests look.
class HashStream {
 public:
  explicit HashStream(uint64_t seed) : state_(seed) {}
  KeyHash Next() { return {Mix(), Mix()}; }
  std::vector<KeyHash> Take(size_t n) {
    std::vector<KeyHash> out(n);
    for (KeyHash& h : out) h = Next();
    return out;
  }

 private:
  uint64_t Mix() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint64_t state_;
};

int64_t InsertAll(SeenSet& set, const std::vector<KeyHash>& hashes) {
  static const std::vector<std::string_view> kNoKeys(kBatch);
  bool is_new[kBatch];
  int64_t fresh = 0;
  for (size_t b = 0; b < hashes.size(); b += kBatch) {
    const size_t n = std::min(kBatch, hashes.size() - b);
    if (!set.InsertHashedIfNew(std::span(kNoKeys).first(n), std::span(hashes).subspan(b, n),
                               std::span(is_new, n))
             .ok()) {
      std::abort();
    }
    for (size_t i = 0; i < n; ++i) fresh += is_new[i];
  }
  return fresh;
}

void BM_StaticBloom(benchmark::State& state) {
  const double fp_rate = 1.0 / static_cast<double>(state.range(0));
  HashStream stream(1);
  const std::vector<KeyHash> hashes = stream.Take(kFilled);
  uint64_t bytes = 0;
  int64_t fresh = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto set = BloomSeenSet::InMemory(kKeys, fp_rate);
    if (!set.ok()) std::abort();
    state.ResumeTiming();
    fresh += InsertAll(**set, hashes);
    state.PauseTiming();
    bytes = (*set)->Stats().bloom_bytes;
    set->reset();
    state.ResumeTiming();
  }
  const double inserts = static_cast<double>(state.iterations()) * static_cast<double>(kFilled);
  state.SetItemsProcessed(static_cast<int64_t>(inserts));
  state.counters["bits_per_url"] = 8.0 * static_cast<double>(bytes) / static_cast<double>(kKeys);
  state.counters["ns_per_insert"] =
      benchmark::Counter(inserts * 1e-9, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["new_share"] = static_cast<double>(fresh) / inserts;
}
BENCHMARK(BM_StaticBloom)->Arg(1000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

void BM_Generational(benchmark::State& state) {
  const double fp_rate = 1.0 / static_cast<double>(state.range(0));
  const uint32_t generations = static_cast<uint32_t>(state.range(1));
  const uint64_t per_generation = kFilled / generations;
  ManualClock clock;
  auto set = GenerationalSeenSet::InMemory(
      {kKeys, fp_rate, std::chrono::hours(24 * 7), generations, &clock});
  if (!set.ok()) std::abort();
  const auto length = (*set)->generation_length();
  HashStream stream(2);
  for (uint32_t g = 0; g <= generations; ++g) {  // steady state: every live generation full
    clock.Advance(length);
    InsertAll(**set, stream.Take(per_generation));
  }
  const uint64_t bytes = (*set)->Stats().bloom_bytes;
  int64_t fresh = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const std::vector<KeyHash> hashes = stream.Take(per_generation);
    clock.Advance(length);
    state.ResumeTiming();
    fresh += InsertAll(**set, hashes);
  }
  const double inserts =
      static_cast<double>(state.iterations()) * static_cast<double>(per_generation);
  state.SetItemsProcessed(static_cast<int64_t>(inserts));
  state.counters["bits_per_url"] = 8.0 * static_cast<double>(bytes) / static_cast<double>(kKeys);
  state.counters["ns_per_insert"] =
      benchmark::Counter(inserts * 1e-9, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["new_share"] = static_cast<double>(fresh) / inserts;
}
BENCHMARK(BM_Generational)
    ->Args({1000, 4})
    ->Args({1000, 8})
    ->Args({1'000'000, 4})
    ->Args({1'000'000, 8})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace urlsieve

BENCHMARK_MAIN();
