// bench_content_index: the content-seen indexes (dedup/content/exact_content_index.h,
// near_duplicate_index.h) at 10^7 stored fingerprints (and 10^8 with --large): lookups/s of Find
// (a stored fingerprint, and for the near index one 0 .. 3 bits away; a random absent one) and of
// FindOrInsert (new random fingerprints, stored as they come), one thread; and the bytes per page:
// memory_bytes() / size(); the heap in use grown by building the index (mallinfo2: with the
// allocator's per-block overhead); and the resident memory grown (with the holes that reallocating
// the buckets leaves: true only for the first index a process builds, so run the exact and the
// near benchmarks in separate processes, --benchmark_filter=Exact and =Near, for that figure).
// Fingerprints are random 64-bit values, as SHA-1 prefixes and SimHashes of distinct pages are;
// building is not timed. Usage: bench_content_index [--large] [Google Benchmark flags, e.g.
// --benchmark_filter=Near]
// (--large adds 10^8: about 1.4 GB for the exact index and 3.4 GB for the near one, built one at a
// time; building the 10^8 exact index takes about a minute.)
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "dedup/content/exact_content_index.h"
#include "dedup/content/near_duplicate_index.h"

namespace urlsieve::bench {
namespace {

uint64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * 4096;
}

uint64_t HeapBytes() {
  const struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;  // in use, with the allocator's per-chunk overhead
}

uint64_t SplitMix(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The index under test, built once per (kind, size) and kept until the next kind or size: only
// one large index lives at a time.
struct Built {
  std::string kind;
  uint64_t n = 0;
  std::unique_ptr<ExactContentIndex> exact;
  std::unique_ptr<NearDuplicateIndex> near;
  uint64_t seed = 0;            // the fingerprints are SplitMix(seed) ... in order
  uint64_t resident_grown = 0;  // bytes
  uint64_t heap_grown = 0;      // bytes
};

Built& Index(const std::string& kind, uint64_t n) {
  static Built built;
  if (built.kind == kind && built.n == n) return built;
  built = Built();
  const uint64_t before = ResidentBytes();
  const uint64_t heap_before = HeapBytes();
  built.kind = kind;
  built.n = n;
  built.seed = 0x5eed0000 + n;
  uint64_t x = built.seed;
  if (kind == "exact") {
    built.exact = std::make_unique<ExactContentIndex>();
    for (uint64_t i = 0; i < n; ++i) built.exact->FindOrInsert(SplitMix(x), i + 1);
  } else {
    built.near = std::make_unique<NearDuplicateIndex>(3);
    for (uint64_t i = 0; i < n; ++i) built.near->Insert(SplitMix(x), i + 1);
  }
  built.resident_grown = ResidentBytes() - before;
  built.heap_grown = HeapBytes() - heap_before;
  return built;
}

void Report(benchmark::State& state, const Built& built) {
  const uint64_t size = built.exact ? built.exact->size() : built.near->size();
  const uint64_t memory = built.exact ? built.exact->memory_bytes() : built.near->memory_bytes();
  state.counters["stored"] = static_cast<double>(size);
  state.counters["B_per_page"] = static_cast<double>(memory) / static_cast<double>(size);
  state.counters["heap_B_per_page"] =
      static_cast<double>(built.heap_grown) / static_cast<double>(built.n);
  state.counters["rss_B_per_page"] =
      static_cast<double>(built.resident_grown) / static_cast<double>(built.n);
  state.SetItemsProcessed(state.iterations());
}

// Stored fingerprints, in a random order (the i-th of SplitMix's sequence for random i).
std::vector<uint64_t> StoredSample(const Built& built, size_t count) {
  std::vector<uint64_t> sample;
  std::mt19937_64 rng(1);
  const uint64_t stride = built.n / count;
  uint64_t x = built.seed;
  for (uint64_t i = 0; i < built.n && sample.size() < count; ++i) {
    const uint64_t fp = SplitMix(x);
    if (stride <= 1 || i % stride == 0) sample.push_back(fp);
  }
  std::shuffle(sample.begin(), sample.end(), rng);
  return sample;
}

void BM_ExactFindStored(benchmark::State& state) {
  Built& built = Index("exact", static_cast<uint64_t>(state.range(0)));
  const std::vector<uint64_t> sample = StoredSample(built, 1 << 20);
  size_t i = 0, found = 0;
  for (auto _ : state) {
    found += built.exact->Find(sample[i++ & (sample.size() - 1)]).has_value();
  }
  if (found != static_cast<size_t>(state.iterations()))
    state.SkipWithError("a stored digest was not found");
  Report(state, built);
}

void BM_ExactFindAbsent(benchmark::State& state) {
  Built& built = Index("exact", static_cast<uint64_t>(state.range(0)));
  uint64_t x = 0xabcdef;
  size_t found = 0;
  for (auto _ : state) found += built.exact->Find(SplitMix(x)).has_value();
  benchmark::DoNotOptimize(found);
  Report(state, built);
}

void BM_ExactFindOrInsert(benchmark::State& state) {
  Built& built = Index("exact", static_cast<uint64_t>(state.range(0)));
  uint64_t x = 0x1234567;
  for (auto _ : state) benchmark::DoNotOptimize(built.exact->FindOrInsert(SplitMix(x), 1));
  Report(state, built);
}

void BM_NearFindNear(benchmark::State& state) {
  Built& built = Index("near", static_cast<uint64_t>(state.range(0)));
  std::vector<uint64_t> sample = StoredSample(built, 1 << 20);
  std::mt19937_64 rng(2);
  for (uint64_t& fp : sample) {
    const int flips = static_cast<int>(rng() % 4);  // distance 0 .. 3
    for (int f = 0; f < flips; ++f) fp ^= uint64_t{1} << (rng() % 64);
  }
  size_t i = 0, found = 0;
  for (auto _ : state) found += built.near->Find(sample[i++ & (sample.size() - 1)]).has_value();
  if (found != static_cast<size_t>(state.iterations()))
    state.SkipWithError("a near fingerprint was not found");
  Report(state, built);
}

void BM_NearFindAbsent(benchmark::State& state) {
  Built& built = Index("near", static_cast<uint64_t>(state.range(0)));
  uint64_t x = 0xabcdef;
  size_t found = 0;
  for (auto _ : state) found += built.near->Find(SplitMix(x)).has_value();
  benchmark::DoNotOptimize(found);
  Report(state, built);
}

void BM_NearFindOrInsert(benchmark::State& state) {
  Built& built = Index("near", static_cast<uint64_t>(state.range(0)));
  uint64_t x = 0x7654321;
  for (auto _ : state) benchmark::DoNotOptimize(built.near->FindOrInsert(SplitMix(x), 1));
  Report(state, built);
}

}  // namespace
}  // namespace urlsieve::bench

int main(int argc, char** argv) {
  using namespace urlsieve::bench;
  bool large = false;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--large") == 0) {
      large = true;
    } else {
      args.push_back(argv[i]);
    }
  }
  std::vector<int64_t> sizes = {10'000'000};
  if (large) sizes.push_back(100'000'000);
  struct Named {
    const char* name;
    void (*fn)(benchmark::State&);
  };
  const Named benchmarks[] = {
      {"ExactFindStored", BM_ExactFindStored},     {"ExactFindAbsent", BM_ExactFindAbsent},
      {"ExactFindOrInsert", BM_ExactFindOrInsert}, {"NearFindNear", BM_NearFindNear},
      {"NearFindAbsent", BM_NearFindAbsent},       {"NearFindOrInsert", BM_NearFindOrInsert}};
  // Grouped by index and size, so that each index is built once.
  for (int64_t n : sizes) {
    for (const Named& b : benchmarks) {
      benchmark::RegisterBenchmark(b.name, b.fn)->Arg(n)->Unit(benchmark::kNanosecond);
    }
  }
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
