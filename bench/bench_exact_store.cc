// bench_exact_store: the exact store v2 (128-bit fingerprints sharded over seen-NN.db,
// dedup/exact_store.h, through ExactSeenSet) against v1 (one seen_urls table of URLs in state.db,
// kept as bench/support_exact_store_v1.h, behind one lock as v1's ExactSeenSet held it), in one
// run:
//  - new keys/s with 1, 2, 4 ... threads (up to the cores, at most 16; --threads picks) inserting
//    distinct new canonical keys in batches of 4096
//    (keys and their XXH3-128 made before the timed region; the timed work is the seen set's:
//    Bloom test-and-set, confirmation, insert), in crawl mode (checkpointed: every shard keeps a
//    transaction open; a checkpoint every 1M keys and at the end, timed), and the N/1 ratios next
//    to what the machine gives N threads of pure computation at that moment (the ceiling);
//  - bytes per key on disk after --size-keys keys (1 thread, closed, WAL checkpointed): the store's
//    files (v1 state.db, v2 seen-NN.db) and the whole directory but the Bloom snapshot.
// Each rate also shows the CPU time per key (user + system, the whole process): on a loaded
// machine the wall-clock ratio says how many cores were free, the CPU per key whether the second
// thread added work (contention) of its own.
// Usage: bench_exact_store [--scaling-keys N (2000000)] [--size-keys N (10000000)] [--dir D]
//        [--only-scaling | --only-size] [--version 1|2] [--threads N,M,...] [--memstatus]
// (--memstatus: SQLite's global allocation statistics on, as before urlsieve turned them off
// (base/sqlite_process.h), to see what their process-wide mutex costs.)
#include <sqlite3.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/sqlite_db.h"
#include "bench/support_exact_store_v1.h"
#include "bench/support_url_generator.h"
#include "dedup/bloom/key_hash.h"
#include "dedup/bloom/scalable_bloom_filter.h"
#include "dedup/bloom_seen_set.h"
#include "dedup/state_dir.h"

namespace urlsieve::bench {
namespace {

namespace fs = std::filesystem;
constexpr size_t kBatch = 4096;
constexpr uint64_t kCheckpointEvery = 1'000'000;

void Check(const Status& status, const char* what) {
  if (status.ok()) return;
  std::fprintf(stderr, "%s: %s\n", what, status.ToString().c_str());
  std::exit(1);
}

// One thread's keys: canonical URLs made unique by a path segment, with their digests.
struct Keys {
  std::vector<std::string> keys;
  std::vector<std::string_view> views;
  std::vector<KeyHash> hashes;
};

Keys MakeKeys(uint64_t seed, uint64_t count) {
  Keys k;
  UrlGenerator gen(seed);
  k.keys.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    std::string url = gen.Next();
    url.insert(url.find('/', 8), "/n" + std::to_string(seed) + "_" + std::to_string(i));
    k.keys.push_back(std::move(url));
  }
  for (const std::string& key : k.keys) {
    k.views.push_back(key);
    k.hashes.push_back(HashKey(key));
  }
  return k;
}

// The set under test: a batch insert and a checkpoint, whatever the version.
class Store {
 public:
  virtual ~Store() = default;
  virtual void Insert(std::span<const std::string_view> keys, std::span<const KeyHash> hashes,
                      bool* is_new) = 0;
  // Timed: the seconds spent in checkpoints go to checkpoint_seconds.
  void TimedCheckpoint() {
    const auto start = std::chrono::steady_clock::now();
    Checkpoint();
    checkpoint_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  double checkpoint_seconds = 0;

 protected:
  virtual void Checkpoint() = 0;
};

// v1: ExactSeenSet as at 5d01c04: one exclusive lock across Bloom, lookup and insert, the rows in
// state.db's open transaction, committed at a checkpoint.
class StoreV1 final : public Store {
 public:
  StoreV1(const std::string& dir, uint64_t capacity) {
    fs::create_directories(dir);
    auto db = SqliteDb::Open(dir + "/state.db");
    Check(db.status(), "open v1 state.db");
    db_ = std::move(*db);
    Check(db_->Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA cache_size=-65536"),
          "v1 pragmas");
    auto store = ExactStoreV1::Open(db_.get());
    Check(store.status(), "open v1 store");
    store_ = std::move(*store);
    auto bloom = ScalableBloomFilter::Create({capacity, 1e-3});
    Check(bloom.status(), "bloom");
    bloom_ = std::move(*bloom);
    Check(db_->Begin(), "begin");
  }
  ~StoreV1() override {
    store_.reset();
    db_.reset();
  }
  void Insert(std::span<const std::string_view> keys, std::span<const KeyHash> hashes,
              bool* is_new) override {
    std::lock_guard lock(mu_);
    bloom_->InsertIfNewBatch(hashes, is_new);
    entries_.clear();
    for (size_t i = 0; i < keys.size(); ++i)
      entries_.push_back({hashes[i].low, keys[i], !is_new[i]});
    Check(store_->InsertIfAbsent(entries_, &inserted_), "v1 insert");
    for (size_t i = 0; i < keys.size(); ++i) is_new[i] = inserted_[i] != 0;
  }
  void Checkpoint() override {
    std::lock_guard lock(mu_);
    Check(db_->Commit(), "v1 commit");
    Check(db_->Begin(), "v1 begin");
  }

 private:
  std::mutex mu_;
  std::unique_ptr<SqliteDb> db_;
  std::unique_ptr<ExactStoreV1> store_;
  std::unique_ptr<ScalableBloomFilter> bloom_;
  std::vector<ExactStoreV1::Entry> entries_;
  std::vector<uint8_t> inserted_;
};

// v2: the library's ExactSeenSet in a checkpointed state directory, as the crawl opens it.
class StoreV2 final : public Store {
 public:
  StoreV2(const std::string& dir, uint64_t capacity) {
    StateDir::Options options;
    options.path = dir;
    options.requested.capacity = capacity;
    options.requested.fp_rate = 1e-3;
    options.requested.exact = true;
    options.checkpointed = true;
    std::vector<SeenNotice> notices;
    auto state = StateDir::Open(options, &notices);
    Check(state.status(), "open v2 state");
    dir_ = std::move(*state);
    StateSeenSetOptions set_options;
    set_options.saves = false;
    auto set = OpenStateSeenSet(dir_.get(), set_options, &notices);
    Check(set.status(), "open v2 set");
    set_ = std::move(*set);
    Check(dir_->OpenFirstTransaction(), "v2 first transaction");
  }
  ~StoreV2() override {
    set_.reset();
    dir_.reset();
  }
  void Insert(std::span<const std::string_view> keys, std::span<const KeyHash> hashes,
              bool* is_new) override {
    Check(set_->InsertHashedIfNew(keys, hashes, {is_new, keys.size()}), "v2 insert");
  }
  void Checkpoint() override {
    Check(dir_->Checkpoint(
              [this](SqliteDb& db, uint64_t g) { return set_->PrepareCheckpoint(db, g); },
              [this](uint64_t g) { return set_->CheckpointCommitted(g); }),
          "v2 checkpoint");
  }

 private:
  std::unique_ptr<StateDir> dir_;
  std::unique_ptr<StateSeenSet> set_;
};

std::unique_ptr<Store> OpenStore(int version, const std::string& dir, uint64_t capacity) {
  if (version == 1) return std::make_unique<StoreV1>(dir, capacity);
  return std::make_unique<StoreV2>(dir, capacity);
}

// New keys per second, `threads` threads sharing `total` keys.
// User + system CPU time of the process so far.
double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

double MeasureRate(int version, const std::string& dir, uint64_t total, int threads,
                   double* cpu_per_key_ns, double* checkpoint_seconds) {
  fs::remove_all(dir);
  std::vector<Keys> keys;
  for (int t = 0; t < threads; ++t) keys.push_back(MakeKeys(100 + t, total / threads));
  auto store = OpenStore(version, dir, total);
  std::atomic<uint64_t> fresh{0};
  std::atomic<uint64_t> done{0};
  std::mutex checkpoint_mu;
  uint64_t next_checkpoint = kCheckpointEvery;
  const double cpu_start = CpuSeconds();
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      const Keys& k = keys[t];
      std::unique_ptr<bool[]> is_new(new bool[kBatch]);
      uint64_t mine = 0;
      for (size_t at = 0; at < k.keys.size(); at += kBatch) {
        const size_t n = std::min(kBatch, k.keys.size() - at);
        store->Insert({k.views.data() + at, n}, {k.hashes.data() + at, n}, is_new.get());
        for (size_t i = 0; i < n; ++i) mine += is_new[i] ? 1 : 0;
        // A checkpoint every kCheckpointEvery keys overall, by whichever thread passes the mark
        // (the crawl's gate keeps the others out: here the store's own lock for v1, and for v2
        // the set's exclusive lock in PrepareCheckpoint).
        if (done.fetch_add(n) + n >= next_checkpoint) {
          std::lock_guard lock(checkpoint_mu);
          if (done.load() >= next_checkpoint) {
            store->TimedCheckpoint();
            next_checkpoint += kCheckpointEvery;
          }
        }
      }
      fresh += mine;
    });
  }
  for (auto& w : workers) w.join();
  store->TimedCheckpoint();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  *cpu_per_key_ns = (CpuSeconds() - cpu_start) * 1e9 / static_cast<double>(total);
  *checkpoint_seconds = store->checkpoint_seconds;
  if (fresh.load() != (total / threads) * threads) {
    std::fprintf(stderr, "v%d: %llu new of %llu\n", version,
                 static_cast<unsigned long long>(fresh.load()),
                 static_cast<unsigned long long>(total));
    std::exit(1);
  }
  store.reset();
  fs::remove_all(dir);
  // Inserts only: the checkpoints (during which no insert runs) are reported apart.
  return static_cast<double>(fresh.load()) / (seconds - *checkpoint_seconds);
}

// What the machine gives `threads` threads of pure computation (no shared data) against 1, at
// this moment: the ceiling of any N/1 ratio measured next to it (1.99 for 2 on an idle 2-core
// machine).
double MachineRatio(int threads) {
  const auto run = [](int spinning) {
    constexpr uint64_t kWork = 300'000'000;
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> spinners;
    for (int t = 0; t < spinning; ++t) {
      spinners.emplace_back([spinning] {
        volatile uint64_t x = 0;
        for (uint64_t i = 0; i < kWork / static_cast<uint64_t>(spinning); ++i) x = x + i;
      });
    }
    for (auto& s : spinners) s.join();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  return run(1) / run(threads);
}

// "1,2,4" -> {1, 2, 4}; empty when malformed.
std::vector<int> ParseThreads(const std::string& text) {
  std::vector<int> threads;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const int n = std::atoi(text.substr(at, comma - at).c_str());
    if (n < 1 || n > 256) return {};
    threads.push_back(n);
    at = comma + 1;
  }
  return threads;
}

// 1, 2, 4 ... up to the machine's cores (at least 2), at most 16.
std::vector<int> DefaultThreads() {
  const int cores = std::max(2, static_cast<int>(std::thread::hardware_concurrency()));
  std::vector<int> threads;
  for (int n = 1; n <= std::min(cores, 16); n *= 2) threads.push_back(n);
  return threads;
}

struct Size {
  uint64_t store_bytes = 0;  // v1: state.db; v2: seen-NN.db
  uint64_t other_bytes = 0;  // the rest but bloom.snap / bloom.delta / LOCK
};

Size MeasureSize(int version, const std::string& dir, uint64_t total) {
  fs::remove_all(dir);
  {
    auto store = OpenStore(version, dir, total);
    std::unique_ptr<bool[]> is_new(new bool[kBatch]);
    uint64_t seed = 7;
    for (uint64_t at = 0; at < total; at += kBatch) {
      const Keys k = MakeKeys(seed++, std::min<uint64_t>(kBatch, total - at));
      store->Insert(k.views, k.hashes, is_new.get());
      if ((at / kBatch) % (kCheckpointEvery / kBatch) == 0) store->TimedCheckpoint();
    }
    store->TimedCheckpoint();
  }
  Size size;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename();
    const uint64_t bytes = e.file_size();
    if (name.starts_with("bloom.") || name == "LOCK") continue;
    const bool store_file = version == 1 ? name.starts_with("state.db") : name.starts_with("seen-");
    (store_file ? size.store_bytes : size.other_bytes) += bytes;
  }
  fs::remove_all(dir);
  return size;
}

}  // namespace
}  // namespace urlsieve::bench

int main(int argc, char** argv) {
  using namespace urlsieve::bench;
  uint64_t scaling_keys = 2'000'000;
  uint64_t size_keys = 10'000'000;
  std::string dir = "/tmp/urlsieve_bench_exact_store_" + std::to_string(getpid());
  bool scaling = true;
  bool size = true;
  int only_version = 0;  // 0: both
  std::vector<int> thread_counts = DefaultThreads();
  bool memstatus = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--scaling-keys" && i + 1 < argc) {
      scaling_keys = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--size-keys" && i + 1 < argc) {
      size_keys = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else if (arg == "--only-scaling") {
      size = false;
    } else if (arg == "--version" && i + 1 < argc) {
      only_version = std::atoi(argv[++i]);
    } else if (arg == "--threads" && i + 1 < argc) {
      thread_counts = ParseThreads(argv[++i]);
      if (thread_counts.empty()) {
        std::fprintf(stderr, "--threads: a list such as 1,2,4 (each 1..256)\n");
        return 2;
      }
    } else if (arg == "--memstatus") {
      memstatus = true;
    } else if (arg == "--only-size") {
      scaling = false;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--scaling-keys N] [--size-keys N] [--dir D] "
                   "[--only-scaling|--only-size] [--version 1|2] [--threads N,M,...] "
                   "[--memstatus]\n",
                   argv[0]);
      return 2;
    }
  }
  if (memstatus) {
    // Configured and initialized before urlsieve's first open, which then keeps it.
    if (sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 1) != SQLITE_OK ||
        sqlite3_initialize() != SQLITE_OK) {
      std::fprintf(stderr, "could not turn SQLite's memory statistics on\n");
      return 1;
    }
  }
  std::printf("cores: %u; SQLite memory statistics %s\n", std::thread::hardware_concurrency(),
              memstatus ? "on (--memstatus)" : "off (as urlsieve configures SQLite)");
  if (scaling) {
    for (int version : {1, 2}) {
      if (only_version != 0 && version != only_version) continue;
      std::map<int, double> rate;
      for (int threads : thread_counts) {
        double cpu_ns = 0;
        double checkpoint_s = 0;
        rate[threads] = MeasureRate(version, dir, scaling_keys, threads, &cpu_ns, &checkpoint_s);
        std::printf(
            "v%d %2d thread%s: %.0f new keys/s (%llu keys; %.0f ns CPU per key; "
            "checkpoints %.2f s, not in the rate)\n",
            version, threads, threads == 1 ? " " : "s", rate[threads],
            static_cast<unsigned long long>(scaling_keys), cpu_ns, checkpoint_s);
        std::fflush(stdout);
      }
      if (rate.count(1) == 0) continue;
      for (const auto& [threads, r] : rate) {
        if (threads == 1) continue;
        const double ceiling = MachineRatio(threads);
        std::printf("v%d %d/1 threads: %.2fx; the machine now: %.2fx (the ceiling); %.2f of it\n",
                    version, threads, r / rate[1], ceiling, r / rate[1] / ceiling);
      }
    }
  }
  if (size) {
    for (int version : {1, 2}) {
      const Size s = MeasureSize(version, dir, size_keys);
      std::printf(
          "v%d at %llu keys: store %.1f bytes/key, whole directory but Bloom %.1f\n", version,
          static_cast<unsigned long long>(size_keys),
          static_cast<double>(s.store_bytes) / static_cast<double>(size_keys),
          static_cast<double>(s.store_bytes + s.other_bytes) / static_cast<double>(size_keys));
      std::fflush(stdout);
    }
  }
  return 0;
}
