// Frontier throughput and memory: Next()+Done() pairs per second with 1e5 keys and 1e7 pending
// URLs (delay 0, so the clock never blocks), and the same with a RAM budget of 1e5 URLs (the
// rest spilled to SQLite). Run one scenario per process to read its peak RSS:
//   bench_frontier --benchmark_filter=InMemory
//   bench_frontier --benchmark_filter=Spill
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>

#include "frontier/frontier.h"

namespace urlsieve {
namespace {

// URLSIEVE_BENCH_SCALE=N divides both sizes (e.g. 100 for a quick callgrind profile).
int Scale() {
  const char* scale = std::getenv("URLSIEVE_BENCH_SCALE");
  return scale != nullptr && std::atoi(scale) > 0 ? std::atoi(scale) : 1;
}
const int kKeys = 100'000 / Scale();
const int kPending = 10'000'000 / Scale();

// Peak and current resident set size in bytes, from /proc/self/status.
double ProcStatusKb(const char* field) {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return 0;
  char line[256];
  double kb = 0;
  const size_t n = std::strlen(field);
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::strncmp(line, field, n) == 0) kb = std::atof(line + n + 1);
  }
  std::fclose(f);
  return kb;
}

struct Setup {
  ManualClock clock;
  std::unique_ptr<Frontier> frontier;
  double push_seconds = 0;
};

Setup* Build(size_t ram_budget) {
  auto* setup = new Setup();
  FrontierOptions options;
  options.obey_robots = false;
  options.delay = Clock::Duration::zero();
  options.checkpoints = false;
  options.max_pending_in_memory = ram_budget;
  options.spill_batch = 64;
  setup->frontier = std::move(Frontier::Open(options, &setup->clock).value());
  std::string url;
  // CPU time, not wall time: the machine running this may be shared.
  const std::clock_t start = std::clock();
  for (int i = 0; i < kPending; ++i) {
    url.assign("http://host").append(std::to_string(i % kKeys)).append(".example.com/section/");
    url.append(std::to_string(i / kKeys)).append("/page.html");
    setup->frontier->Push(url, static_cast<uint32_t>(i / (kPending / 4)));
  }
  setup->push_seconds = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
  return setup;
}

void Report(benchmark::State& state, Setup& setup) {
  const FrontierStats stats = setup.frontier->Stats();
  state.SetItemsProcessed(state.iterations());
  state.counters["pushes_per_cpu_s"] = kPending / setup.push_seconds;
  state.counters["pending"] = static_cast<double>(stats.pending);
  state.counters["in_ram"] = static_cast<double>(stats.pending_in_memory);
  state.counters["ram_bytes_per_url"] =
      static_cast<double>(stats.memory_bytes) / static_cast<double>(stats.pending_in_memory);
  state.counters["disk_bytes_per_url"] =
      stats.spill_bytes > 0 ? static_cast<double>(stats.spill_bytes) /
                                  static_cast<double>(stats.pending - stats.pending_in_memory)
                            : 0;
  state.counters["rss_MB"] = ProcStatusKb("VmRSS:") / 1024;
  state.counters["peak_rss_MB"] = ProcStatusKb("VmHWM:") / 1024;
}

void NextDone(benchmark::State& state, size_t ram_budget) {
  static Setup* setup = nullptr;
  if (setup == nullptr) setup = Build(ram_budget);
  Frontier& frontier = *setup->frontier;
  Lease lease;
  const FetchOutcome ok{200, {}, {}, {}};
  for (auto _ : state) {
    if (!frontier.Next(&lease)) {
      state.SkipWithError("frontier ran dry");
      break;
    }
    frontier.Done(lease, ok);
  }
  Report(state, *setup);
}

void BM_NextDoneInMemory(benchmark::State& state) { NextDone(state, 0); }
void BM_NextDoneSpill(benchmark::State& state) { NextDone(state, 100'000 / Scale()); }

// One incremental checkpoint of 1e6 new URLs (and 1e5 finished ones) into a state database.
void BM_Checkpoint(benchmark::State& state) {
  const int urls = 1'000'000 / Scale();
  const std::string path = "/tmp/urlsieve_bench_frontier_" + std::to_string(getpid()) + ".db";
  for (auto _ : state) {
    state.PauseTiming();
    std::remove(path.c_str());
    ManualClock clock;
    FrontierOptions options;
    options.obey_robots = false;
    options.delay = Clock::Duration::zero();
    std::unique_ptr<Frontier> frontier = std::move(Frontier::Open(options, &clock).value());
    for (int i = 0; i < urls; ++i) {
      frontier->Push(
          "http://host" + std::to_string(i % 1000) + ".example.com/p/" + std::to_string(i), 0);
    }
    Lease lease;
    for (int i = 0; i < urls / 10 && frontier->Next(&lease); ++i) {
      frontier->Done(lease, FetchOutcome{200, {}, {}, {}});
    }
    std::unique_ptr<SqliteDb> db = std::move(SqliteDb::Open(path).value());
    state.ResumeTiming();
    if (!db->Begin().ok() || !frontier->Checkpoint(*db).ok() || !db->Commit().ok()) {
      state.SkipWithError("checkpoint failed");
    }
  }
  state.counters["rows_per_s"] =
      benchmark::Counter(static_cast<double>(urls) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
  std::remove(path.c_str());
  std::remove((path + "-wal").c_str());
  std::remove((path + "-shm").c_str());
}

BENCHMARK(BM_Checkpoint)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_NextDoneInMemory)->Iterations(3'000'000 / Scale())->Unit(benchmark::kNanosecond);
BENCHMARK(BM_NextDoneSpill)->Iterations(1'000'000 / Scale())->Unit(benchmark::kNanosecond);

}  // namespace
}  // namespace urlsieve

BENCHMARK_MAIN();
