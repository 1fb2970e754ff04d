// The Bloom filter alone, on pre-hashed random keys (hashing the URL belongs to SeenFilter's
// benchmark). Targets at 1e8 keys, ε = 1e-3: ≤ 30 ns per batched test-and-insert, ≤ 70 ns single,
// ≤ 16 bits per key.
//
// Insert benchmarks start from an empty filter of capacity N and insert exactly N new keys (the
// cost averaged over the fill); lookups query a filter holding N keys, alternating present and
// absent keys. "time_per_key" is wall time per key over all threads (CPU time for BM_Lines*). On a
// shared machine compare the CPU column (per iteration: 1 key, or kBatch keys for *Batch).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "dedup/bloom/blocked_bloom_filter.h"
#include "dedup/bloom/bloom_math.h"
#include "dedup/bloom/scalable_bloom_filter.h"

namespace urlsieve {
namespace {

constexpr double kFpRate = 1e-3;
constexpr size_t kBatch = 1024;

// The i-th random key, generated in a few cycles (splitmix64), so no key array is needed.
inline KeyHash KeyAt(uint64_t i) {
  auto mix = [](uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
  };
  return KeyHash{mix(2 * i), mix(2 * i + 1)};
}

std::unique_ptr<ScalableBloomFilter> NewFilter(uint64_t capacity) {
  BloomOptions options;
  options.capacity = capacity;
  options.fp_rate = kFpRate;
  return std::move(ScalableBloomFilter::Create(options)).value();
}

void SetCounters(benchmark::State& state, uint64_t keys_per_iteration,
                 const ScalableBloomFilter* filter) {
  state.SetLabel(BloomLineKernelName(ActiveBloomLineKernel()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * keys_per_iteration));
  // Wall seconds per key over all threads, printed with an SI prefix ("25.3n" is 25.3 ns).
  state.counters["time_per_key"] = benchmark::Counter(
      static_cast<double>(keys_per_iteration),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  if (filter != nullptr && state.thread_index() == 0) {
    BloomStats s = filter->Stats();
    state.counters["bits_per_key"] = s.bits_per_key;
    state.counters["layers"] = s.layers;
  }
}

// Shared by the threads of one run: thread 0 creates it before the timed loop (whose start is a
// barrier for all threads) and drops it after.
std::unique_ptr<ScalableBloomFilter> g_filter;

void BM_InsertIfNew(benchmark::State& state) {
  const uint64_t n = static_cast<uint64_t>(state.range(0));
  if (state.thread_index() == 0) g_filter = NewFilter(n);
  const uint64_t threads = static_cast<uint64_t>(state.threads());
  uint64_t i = static_cast<uint64_t>(state.thread_index());
  for (auto _ : state) {
    benchmark::DoNotOptimize(g_filter->InsertIfNew(KeyAt(i)));
    i += threads;
  }
  SetCounters(state, 1, g_filter.get());
  if (state.thread_index() == 0) g_filter.reset();
}

void BM_InsertIfNewBatch(benchmark::State& state) {
  const uint64_t n = static_cast<uint64_t>(state.range(0));
  if (state.thread_index() == 0) g_filter = NewFilter(n);
  const uint64_t threads = static_cast<uint64_t>(state.threads());
  uint64_t i = static_cast<uint64_t>(state.thread_index());
  std::vector<KeyHash> keys(kBatch);
  bool is_new[kBatch];
  for (auto _ : state) {
    state.PauseTiming();  // key generation is not the filter's cost
    for (KeyHash& k : keys) {
      k = KeyAt(i);
      i += threads;
    }
    state.ResumeTiming();
    g_filter->InsertIfNewBatch(keys, is_new);
    benchmark::DoNotOptimize(is_new);
  }
  SetCounters(state, kBatch, g_filter.get());
  if (state.thread_index() == 0) g_filter.reset();
}

// Filters holding keys 0..N-1, built once per N and kept for all lookup runs.
ScalableBloomFilter& FilledFilter(uint64_t n) {
  static std::mutex mu;
  static std::map<uint64_t, std::unique_ptr<ScalableBloomFilter>> filters;
  std::lock_guard<std::mutex> lock(mu);
  auto& f = filters[n];
  if (!f) {
    f = NewFilter(n);
    std::vector<KeyHash> keys(kBatch);
    bool is_new[kBatch];
    for (uint64_t i = 0; i < n; i += kBatch) {
      const size_t count = std::min<uint64_t>(kBatch, n - i);
      for (size_t j = 0; j < count; ++j) keys[j] = KeyAt(i + j);
      f->InsertIfNewBatch(std::span(keys).first(count), is_new);
    }
  }
  return *f;
}

// Present (index < n) and absent keys alternate, scattered over the whole filter.
inline KeyHash LookupKey(uint64_t i, uint64_t n) {
  return (i & 1) ? KeyAt(n + i) : KeyAt((i * 0x9E3779B97F4A7C15ULL) % n);
}

void BM_MayContain(benchmark::State& state) {
  const uint64_t n = static_cast<uint64_t>(state.range(0));
  ScalableBloomFilter& f = FilledFilter(n);
  const uint64_t threads = static_cast<uint64_t>(state.threads());
  uint64_t i = static_cast<uint64_t>(state.thread_index());
  for (auto _ : state) {
    benchmark::DoNotOptimize(f.MayContain(LookupKey(i, n)));
    i += threads;
  }
  SetCounters(state, 1, &f);
}

void BM_MayContainBatch(benchmark::State& state) {
  const uint64_t n = static_cast<uint64_t>(state.range(0));
  ScalableBloomFilter& f = FilledFilter(n);
  const uint64_t threads = static_cast<uint64_t>(state.threads());
  uint64_t i = static_cast<uint64_t>(state.thread_index());
  std::vector<KeyHash> keys(kBatch);
  bool found[kBatch];
  for (auto _ : state) {
    state.PauseTiming();
    for (KeyHash& k : keys) {
      k = LookupKey(i, n);
      i += threads;
    }
    state.ResumeTiming();
    f.MayContainBatch(keys, found);
    benchmark::DoNotOptimize(found);
  }
  SetCounters(state, kBatch, &f);
}

// The price of exactly-one-new, on one layer: test-and-set under the block's spin lock (what
// ScalableBloomFilter does) against the lock-free set that can tell two racing callers "new".
std::unique_ptr<BlockedBloomFilter> g_layer;
const std::atomic<uint32_t> kUnchangedGuard{1};

template <bool kLocked>
void BM_LayerInsert(benchmark::State& state) {
  const uint64_t n = static_cast<uint64_t>(state.range(0));
  if (state.thread_index() == 0) {
    g_layer = std::move(BlockedBloomFilter::Create(ChooseBloomLayout(n, kFpRate))).value();
  }
  const uint64_t threads = static_cast<uint64_t>(state.threads());
  uint64_t i = static_cast<uint64_t>(state.thread_index());
  for (auto _ : state) {
    const KeyHash key = KeyAt(i);
    if constexpr (kLocked) {
      benchmark::DoNotOptimize(g_layer->InsertLockedIf(key, kUnchangedGuard, 1));
    } else {
      benchmark::DoNotOptimize(g_layer->InsertAtomic(key));
    }
    i += threads;
  }
  SetCounters(state, 1, nullptr);
  if (state.thread_index() == 0) g_layer.reset();
}

// One line or two per key, at ε = 1e-5 where ChooseBloomLayout switches to two: lookups in a
// layer holding 10^7 keys (present and absent alternate).
template <uint32_t kLines>
void BM_LinesLookup(benchmark::State& state) {
  constexpr uint64_t kKeys = 10'000'000;
  static std::unique_ptr<BlockedBloomFilter> layer = [] {
    auto f =
        std::move(BlockedBloomFilter::Create(SmallestBloomLayout(kKeys, 1e-5, kLines))).value();
    for (uint64_t i = 0; i < kKeys; ++i) f->InsertAtomic(KeyAt(i));
    return f;
  }();
  uint64_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(layer->MayContain(LookupKey(i++, kKeys)));
  SetCounters(state, 1, nullptr);
  state.counters["bits_per_key"] = static_cast<double>(layer->bytes()) * 8 / kKeys;
}

// The machine's reference: one dependent DRAM miss, a pointer chase through a random cycle over an
// array as large as the 10^8-key filter, in huge pages like the filter. Memory latency on a shared
// VM varies from run to run: read the insert figures as multiples of this one, measured in the
// same run.
void BM_DramLatency(benchmark::State& state) {
  const size_t lines = static_cast<size_t>(state.range(0)) / 64;
  auto layer = BlockedBloomFilter::Create(BloomLayout{lines, 1, 1});  // its huge-page mapping
  uint64_t* words = (*layer)->words().data();
  std::vector<uint32_t> next(lines);
  for (size_t i = 0; i < lines; ++i) next[i] = static_cast<uint32_t>(i);
  uint64_t rng = 1;
  for (size_t i = lines - 1; i > 0; --i) {  // Sattolo: a single cycle through every line
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    std::swap(next[i], next[(rng >> 33) % i]);
  }
  for (size_t i = 0; i < lines; ++i) words[i * 8] = next[i];
  uint64_t at = 0;
  for (auto _ : state) at = words[at * 8];
  benchmark::DoNotOptimize(at);
  SetCounters(state, 1, nullptr);
}

}  // namespace

BENCHMARK(BM_DramLatency)->Arg(int64_t{100'000'000} * 2)->Iterations(20'000'000)->UseRealTime();

// Each insert run performs exactly N inserts in total (the fill from empty to capacity).
#define URLSIEVE_INSERT_BENCH(fn, batch)                                                         \
  BENCHMARK(fn)->Arg(1'000'000)->Iterations(1'000'000 / (batch))->UseRealTime()->Threads(1);     \
  BENCHMARK(fn)->Arg(1'000'000)->Iterations(500'000 / (batch))->UseRealTime()->Threads(2);       \
  BENCHMARK(fn)->Arg(10'000'000)->Iterations(10'000'000 / (batch))->UseRealTime()->Threads(1);   \
  BENCHMARK(fn)->Arg(10'000'000)->Iterations(5'000'000 / (batch))->UseRealTime()->Threads(2);    \
  BENCHMARK(fn)->Arg(100'000'000)->Iterations(100'000'000 / (batch))->UseRealTime()->Threads(1); \
  BENCHMARK(fn)->Arg(100'000'000)->Iterations(50'000'000 / (batch))->UseRealTime()->Threads(2)

URLSIEVE_INSERT_BENCH(BM_InsertIfNew, 1);
URLSIEVE_INSERT_BENCH(BM_InsertIfNewBatch, kBatch);
URLSIEVE_INSERT_BENCH(BM_LayerInsert<true>, 1);
URLSIEVE_INSERT_BENCH(BM_LayerInsert<false>, 1);

#define URLSIEVE_LOOKUP_BENCH(fn, batch)                                                        \
  BENCHMARK(fn)->Arg(1'000'000)->Iterations(10'000'000 / (batch))->UseRealTime()->Threads(1);   \
  BENCHMARK(fn)->Arg(1'000'000)->Iterations(5'000'000 / (batch))->UseRealTime()->Threads(2);    \
  BENCHMARK(fn)->Arg(10'000'000)->Iterations(10'000'000 / (batch))->UseRealTime()->Threads(1);  \
  BENCHMARK(fn)->Arg(10'000'000)->Iterations(5'000'000 / (batch))->UseRealTime()->Threads(2);   \
  BENCHMARK(fn)->Arg(100'000'000)->Iterations(10'000'000 / (batch))->UseRealTime()->Threads(1); \
  BENCHMARK(fn)->Arg(100'000'000)->Iterations(5'000'000 / (batch))->UseRealTime()->Threads(2)

URLSIEVE_LOOKUP_BENCH(BM_MayContain, 1);
URLSIEVE_LOOKUP_BENCH(BM_MayContainBatch, kBatch);

BENCHMARK(BM_LinesLookup<1>)->Iterations(5'000'000);
BENCHMARK(BM_LinesLookup<2>)->Iterations(5'000'000);

}  // namespace urlsieve

BENCHMARK_MAIN();
