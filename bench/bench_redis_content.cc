// RedisContentSeenSet measured on one Redis server (bench/redis_content.sh starts it and passes its
// address; docs/features/content-seen.md, "Shared"):
//  load:    N distinct pages (random 64-bit digests and simhashes, an id of ~60 bytes and data of
//           ~60 bytes, the size of a crawl's URL and WARC reference), each Tested once: all firsts;
//  lookups: M Tests against the loaded set, a third exact copies of a loaded page (another id), a
//           third near copies (a new digest, the simhash 2 bits away), a third new pages.
// Every verdict is checked (kind, and the first's id). Printed per phase: Tests/s from T client
// threads (each with its own connection), and the server's microseconds per Test: its CPU time
// (INFO cpu, user + sys: the Function, the reads of the near buckets, the network), and the
// Function calls' own time (INFO commandstats, cmdstat_fcall usec), after minus before, divided
// by the Tests; and the same for plain HGETs, one per round trip, as a yardstick of what the
// server spends per round trip on this machine at this time. Then the set's memory in
// Redis per page (RedisContentSeenSet::Stats: MEMORY USAGE of each key), the exact index, the near
// index and the copies apart, and INFO used_memory after minus before the load.
//
//   bench_redis_content --redis redis://127.0.0.1:PORT [--pages N] [--lookups M] [--threads T]
// Exit status 1 when a call fails or a verdict is wrong.
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dedup/content/redis_content_seen_set.h"
#include "redis/redis_client.h"

namespace urlsieve {
namespace {

uint64_t SplitMix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::string Id(uint64_t i) {
  return "https://www.example-" + std::to_string(i % 1000) + ".org/articles/2024/" +
         std::to_string(i) + "/index.html";
}
std::string Data(uint64_t i) {
  return "crawl-20240101-" + std::to_string(i % 97) + ".warc.gz:" + std::to_string(i * 7919) +
         ":<urn:uuid:0000" + std::to_string(i) + ">";
}
ContentFingerprint Page(uint64_t i) { return {SplitMix(i), SplitMix(i + (1ULL << 40))}; }

// The server's CPU time (INFO cpu: user + sys of the main thread and its I/O, seconds) and the
// Function calls' own time (INFO commandstats: cmdstat_fcall's usec, which includes the commands
// the Function runs).
struct ServerTime {
  double cpu_s = 0;
  double fcall_usec = 0;
  uint64_t fcalls = 0;
};
double InfoField(const std::string& s, const char* field) {
  const size_t pos = s.find(field);
  return pos == std::string::npos ? 0 : std::strtod(s.c_str() + pos + std::strlen(field), nullptr);
}
ServerTime ReadServerTime(RedisClient& client) {
  ServerTime t;
  auto cpu = client.Run({{"INFO", "cpu"}, -1});
  if (cpu.ok()) {
    t.cpu_s = InfoField(cpu->str, "used_cpu_sys:") + InfoField(cpu->str, "used_cpu_user:");
  }
  auto stats = client.Run({{"INFO", "commandstats"}, -1});
  if (stats.ok()) {
    const size_t pos = stats->str.find("cmdstat_fcall:");
    if (pos != std::string::npos) {
      unsigned long long calls = 0;
      double usec = 0;
      if (std::sscanf(stats->str.c_str() + pos, "cmdstat_fcall:calls=%llu,usec=%lf", &calls,
                      &usec) == 2) {
        t.fcalls = calls;
        t.fcall_usec = usec;
      }
    }
  }
  return t;
}
uint64_t UsedMemory(RedisClient& client) {
  auto info = client.Run({{"INFO", "memory"}, -1});
  if (!info.ok()) return 0;
  const size_t pos = info->str.find("used_memory:");
  return pos == std::string::npos ? 0 : std::strtoull(info->str.c_str() + pos + 12, nullptr, 10);
}

int Main(int argc, char** argv) {
  std::string url;
  uint64_t pages = 1000000;
  uint64_t lookups = 300000;
  int threads = 4;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--redis") url = argv[i + 1];
    if (flag == "--pages") pages = std::strtoull(argv[i + 1], nullptr, 10);
    if (flag == "--lookups") lookups = std::strtoull(argv[i + 1], nullptr, 10);
    if (flag == "--threads") threads = std::atoi(argv[i + 1]);
  }
  auto address = RedisAddress::Parse(url);
  if (!address.ok()) {
    std::fprintf(stderr, "--redis: %s\n", address.status().ToString().c_str());
    return 2;
  }
  auto client = RedisClient::Connect(*address);
  if (!client.ok()) {
    std::fprintf(stderr, "%s\n", client.status().ToString().c_str());
    return 1;
  }
  const uint64_t memory_before = UsedMemory(**client);
  RedisContentSeenSetOptions options;
  options.address = *address;
  options.name = "bench";
  auto opened = RedisContentSeenSet::Open(options);
  if (!opened.ok()) {
    std::fprintf(stderr, "%s\n", opened.status().ToString().c_str());
    return 1;
  }
  RedisContentSeenSet& set = **opened;
  std::atomic<uint64_t> wrong{0};
  std::atomic<uint64_t> failed{0};

  // Runs f(i) for i in [0, n) over the threads; prints the phase's figures.
  auto phase = [&](const char* name, uint64_t n, const std::function<void(uint64_t)>& f) {
    const ServerTime before = ReadServerTime(**client);
    const auto start = std::chrono::steady_clock::now();
    std::atomic<uint64_t> next{0};
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&] {
        for (uint64_t i; (i = next.fetch_add(1)) < n;) f(i);
      });
    }
    for (std::thread& w : workers) w.join();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const ServerTime after = ReadServerTime(**client);
    std::printf("%-8s %9" PRIu64
                " Tests  %7.0f Tests/s  server CPU %6.2f us/Test  FCALL %6.2f "
                "us/Test (%.2f calls/Test)  (%d threads)\n",
                name, n, static_cast<double>(n) / seconds,
                (after.cpu_s - before.cpu_s) * 1e6 / static_cast<double>(n),
                (after.fcall_usec - before.fcall_usec) / static_cast<double>(n),
                static_cast<double>(after.fcalls - before.fcalls) / static_cast<double>(n),
                threads);
    std::fflush(stdout);
  };

  phase("load", pages, [&](uint64_t i) {
    auto v = set.Test(Page(i), {Id(i), Data(i)});
    if (!v.ok()) {
      if (failed.fetch_add(1) == 0) std::fprintf(stderr, "%s\n", v.status().ToString().c_str());
      return;
    }
    if (v->kind != ContentVerdict::Kind::kFirst) wrong.fetch_add(1);
  });
  const uint64_t memory_loaded = UsedMemory(**client);
  auto stats = set.Stats();
  if (stats.ok()) {
    const double n = static_cast<double>(stats->pages);
    std::printf("memory   %" PRIu64
                " pages: exact index %.1f B/page, near index %.1f B/page, "
                "copies %.1f B/page (%" PRIu64 " chunks), %" PRIu64
                " keys; INFO used_memory "
                "%.1f B/page\n",
                stats->pages, static_cast<double>(stats->exact_bytes) / n,
                static_cast<double>(stats->near_bytes) / n,
                static_cast<double>(stats->copy_bytes) / n, stats->copy_chunks, stats->keys,
                static_cast<double>(memory_loaded - memory_before) / n);
  } else {
    std::fprintf(stderr, "Stats: %s\n", stats.status().ToString().c_str());
    failed.fetch_add(1);
  }

  phase("lookups", lookups, [&](uint64_t i) {
    const uint64_t j = SplitMix(i + 77) % pages;
    ContentFingerprint fp = Page(j);
    ContentVerdict::Kind want = ContentVerdict::Kind::kExact;
    if (i % 3 == 1) {
      fp.digest = SplitMix(i + (3ULL << 40));
      *fp.simhash ^= (1ULL << (i % 64)) ^ (1ULL << ((i * 7 + 3) % 64));
      want = ContentVerdict::Kind::kNear;
    } else if (i % 3 == 2) {
      fp = Page(pages + 1000 + i * 3);
      want = ContentVerdict::Kind::kFirst;
    }
    auto v = set.Test(fp, {"lookup:" + std::to_string(i), "d"});
    if (!v.ok()) {
      if (failed.fetch_add(1) == 0) std::fprintf(stderr, "%s\n", v.status().ToString().c_str());
      return;
    }
    if (v->kind != want || (want != ContentVerdict::Kind::kFirst && v->first.id != Id(j))) {
      wrong.fetch_add(1);
    }
  });
  // The yardstick, measured in the same conditions: one HGET per round trip (what the server
  // spends on the least a client can ask of it), from as many threads.
  phase("HGET", lookups, [&](uint64_t) {
    thread_local std::unique_ptr<RedisClient> own;
    if (own == nullptr) {
      auto connected = RedisClient::Connect(*address);
      if (!connected.ok()) {
        failed.fetch_add(1);
        return;
      }
      own = std::move(connected).value();
    }
    auto reply = own->Run({{"HGET", "urlsieve:{bench:content}:meta", "pages"}, 1});
    if (!reply.ok()) failed.fetch_add(1);
  });
  std::printf("verdicts: %" PRIu64 " wrong, %" PRIu64 " failed calls\n", wrong.load(),
              failed.load());
  return wrong.load() == 0 && failed.load() == 0 ? 0 : 1;
}

}  // namespace
}  // namespace urlsieve

int main(int argc, char** argv) { return urlsieve::Main(argc, argv); }
