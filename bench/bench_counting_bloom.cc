// The counting (deletable) Bloom filter against the plain one at the same parameters
// (docs/features/forgetting.md, "Forgetting"): ns per test-and-insert and bytes per key, on
// pre-hashed random keys; and the cost of a forget. Each insert run fills a filter of capacity N
// from empty with N new keys; "time_per_key" is wall time per key, "bytes_per_key" the filter's
// memory over the keys it holds. ε = 1e-3.
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "dedup/bloom/counting_bloom_filter.h"
#include "dedup/bloom/scalable_bloom_filter.h"

namespace urlsieve {
namespace {

constexpr double kFpRate = 1e-3;
constexpr size_t kBatch = 1024;

inline KeyHash KeyAt(uint64_t i) {
  auto mix = [](uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
  };
  return KeyHash{mix(2 * i), mix(2 * i + 1)};
}

void SetCounters(benchmark::State& state, uint64_t keys_per_iteration, uint64_t bytes,
                 uint64_t keys) {
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * keys_per_iteration));
  state.counters["time_per_key"] = benchmark::Counter(
      static_cast<double>(keys_per_iteration),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["bytes_per_key"] =
      static_cast<double>(bytes) / static_cast<double>(keys == 0 ? 1 : keys);
}

template <typename Filter>
std::unique_ptr<Filter> NewFilter(uint64_t capacity) {
  return std::move(Filter::Create({capacity, kFpRate})).value();
}

template <typename Filter>
void BM_Insert(benchmark::State& state) {
  const uint64_t n = static_cast<uint64_t>(state.range(0));
  auto filter = NewFilter<Filter>(n);
  uint64_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(filter->InsertIfNew(KeyAt(i++)));
  SetCounters(state, 1, filter->bytes(), i);
}

template <typename Filter>
void BM_InsertBatch(benchmark::State& state) {
  const uint64_t n = static_cast<uint64_t>(state.range(0));
  auto filter = NewFilter<Filter>(n);
  uint64_t i = 0;
  std::vector<KeyHash> keys(kBatch);
  bool is_new[kBatch];
  for (auto _ : state) {
    state.PauseTiming();
    for (KeyHash& k : keys) k = KeyAt(i++);
    state.ResumeTiming();
    filter->InsertIfNewBatch(keys, is_new);
    benchmark::DoNotOptimize(is_new);
  }
  SetCounters(state, kBatch, filter->bytes(), i);
}

// Forgets the N keys of a full filter, one by one.
void BM_CountingRemove(benchmark::State& state) {
  const uint64_t n = static_cast<uint64_t>(state.range(0));
  auto filter = NewFilter<CountingBloomFilter>(n);
  for (uint64_t i = 0; i < n; ++i) filter->InsertIfNew(KeyAt(i));
  uint64_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(filter->Remove(KeyAt(i++)));
  SetCounters(state, 1, filter->bytes(), n);
}

#define URLSIEVE_COUNTING_BENCH(fn, batch)                                \
  BENCHMARK(fn)->Arg(1'000'000)->Iterations(1'000'000 / (batch))->UseRealTime(); \
  BENCHMARK(fn)->Arg(10'000'000)->Iterations(10'000'000 / (batch))->UseRealTime()

URLSIEVE_COUNTING_BENCH(BM_Insert<ScalableBloomFilter>, 1);
URLSIEVE_COUNTING_BENCH(BM_Insert<CountingBloomFilter>, 1);
URLSIEVE_COUNTING_BENCH(BM_InsertBatch<ScalableBloomFilter>, kBatch);
URLSIEVE_COUNTING_BENCH(BM_InsertBatch<CountingBloomFilter>, kBatch);
URLSIEVE_COUNTING_BENCH(BM_CountingRemove, 1);

}  // namespace
}  // namespace urlsieve

BENCHMARK_MAIN();
