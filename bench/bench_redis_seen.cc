// The Redis seen sets compared end to end on one Redis server (bench/redis_seen.sh starts it and
// passes its address): urlsieve's RedisSeenSet with and without its front cache, scrapy-redis's
// way (pipelined SADD of SHA-1 hex fingerprints) and a Redisson-style Bloom filter (one EVALSHA of
// Redisson's Lua script, k SETBITs, per URL, pipelined), on two workloads:
//  (a) N distinct generated URLs (bench/support_url_generator.h, each made unique by a numbered
//      first path segment), at capacity N;
//  (b) the link stream of a crawl: the page->links structure of bench/gen_static_site.py (nav,
//      8-ary tree children, random pages; 50-100 links a page) replayed in breadth-first order over
//      a site eight times larger than the crawl's page budget, as a crawl that stops at a budget
//      sees it; about 90 % of the links are repeats (the real fraction is printed).
// Every contender gets the same canonical keys (canonicalized once, before any timing) in batches
// of the same size, through one connection from one thread, with the server flushed in between.
// Timed: the client's per-URL work (hashing, SHA-1, building the pipeline) and the round trips.
// Printed per contender: URLs/s, Redis memory per distinct URL (INFO used_memory after minus
// before; MEMORY USAGE of the keys), round trips per URL, client and server CPU, the server's
// busiest commands (INFO commandstats), the number of "new" answers and whether it is right
// (SADD exact; a Bloom may miss at most its ε of the distinct URLs, never report a repeat new),
// then the targets of issue 12.
//
//   bench_redis_seen --redis redis://127.0.0.1:PORT [--urls N] [--links N] [--batch B]
//                    [--fp-rate P] [--workloads ab] [--contenders cnsl] [--shards S]
//   contenders: c urlsieve with front cache, n urlsieve without (through the urlsieve server
//   module when the server loaded it: bench/redis_seen.sh loads it), f / F urlsieve through the
//   Function (server_module off) without / with the front cache, s SADD, l Lua SETBIT Bloom;
//   r (not by default) a probe: the same test-and-set as one plain BITFIELD per batch, no Lua;
//   o (not by default) urlsieve routed, no front cache: a crawl cluster's set (1024 shards, or
//   --shards), each key routed to the partition of its host and appended to that inbox when new.
//   g / G (not by default) urlsieve generational (revisit_after 7 d in 4 generations, the
//   server's TIME), without / with the front cache; d / D urlsieve deletable (4-bit counters),
//   without / with the front cache (which then reads the forgetting epoch each batch), followed by
//   a timed Forget of a tenth of the distinct keys (ns/key in the notes).
//   --shards S: urlsieve's shard count (default: the set chooses).
// Exit status 1 when a contender fails or answers wrongly (the targets only print).
#include <nettle/sha1.h>
#include <sys/resource.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bench/support_url_generator.h"
#include "crawler/cluster/cluster_keys.h"
#include "dedup/redis_seen_set.h"
#include "dedup/seen_set.h"
#include "redis/redis_client.h"
#include "url/url_canonicalizer.h"

namespace urlsieve {
namespace {

[[noreturn]] void Die(const std::string& what, const Status& status) {
  fprintf(stderr, "bench_redis_seen: %s: %s\n", what.c_str(), status.ToString().c_str());
  std::exit(1);
}

template <typename T>
T Check(Result<T> result, const std::string& what) {
  if (!result.ok()) Die(what, result.status());
  return std::move(*result);
}

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

uint64_t Mix(uint64_t x) {  // splitmix64
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// ---------------------------------------------------------------------------------------------
// Workloads: canonical keys in one arena, and the stream of key indexes to insert.

struct Workload {
  std::string name;
  std::string description;
  std::string arena;              // the distinct keys, back to back
  std::vector<uint64_t> offsets;  // key i is arena[offsets[i], offsets[i + 1])
  std::vector<uint32_t> stream;   // key indexes in insertion order; empty: 0, 1, 2, ...
  uint64_t distinct = 0;

  uint64_t size() const { return stream.empty() ? offsets.size() - 1 : stream.size(); }
  std::string_view Key(uint64_t position) const {
    const uint64_t i = stream.empty() ? position : stream[position];
    return std::string_view(arena).substr(offsets[i], offsets[i + 1] - offsets[i]);
  }
};

// (a): `n` distinct URLs. A generated URL gets "/uNUMBER" as its first path segment, so the
// canonical keys are distinct by construction (the canonicalizer keeps such a segment).
Workload DistinctUrls(uint64_t n) {
  Workload w;
  w.name = "(a)";
  w.description = std::to_string(n) + " distinct generated URLs (bench/support_url_generator.h)";
  w.arena.reserve(n * 100);
  w.offsets.reserve(n + 1);
  w.offsets.push_back(0);
  bench::UrlGenerator gen(12);
  UrlCanonicalizer canonicalizer;
  std::string url;
  std::string key;
  for (uint64_t i = 0; i < n;) {
    url = gen.Next();
    const size_t host_end = url.find('/', url.find("://") + 3);
    if (host_end == std::string::npos) continue;
    url.insert(host_end, "/u" + std::to_string(i));
    if (!canonicalizer.CanonicalizeTo(url, &key).ok()) continue;
    w.arena.append(key);
    w.offsets.push_back(w.arena.size());
    ++i;
  }
  w.distinct = n;
  return w;
}

// gen_static_site.py's page_path.
std::string PagePath(uint64_t i) {
  constexpr uint64_t kSections = 10;
  if (i == 0) return "/index.html";
  if (i <= kSections) return "/sec" + std::to_string(i - 1) + "/index.html";
  const uint64_t section = i % kSections;
  const uint64_t sub = (i / kSections) % 8;
  std::string path = "/sec" + std::to_string(section) + "/sub" + std::to_string(sub);
  if (i % 3 == 0) path += "/d" + std::to_string((i / 80) % 4);
  path += "/p" + std::to_string(i) + ".html";
  return path;
}

// (b): the links of a breadth-first crawl of a gen_static_site.py-shaped site of `site_pages`
// pages, page after page, until `links` links were seen (whole pages).
Workload CrawlLinkStream(uint64_t links, uint64_t site_pages) {
  constexpr uint64_t kNav = 11;  // home and the 10 section landings
  constexpr uint64_t kFanout = 8;
  Workload w;
  w.name = "(b)";
  w.arena.reserve(site_pages * 48);
  w.offsets.reserve(site_pages + 1);
  w.offsets.push_back(0);
  UrlCanonicalizer canonicalizer;
  std::string key;
  for (uint64_t i = 0; i < site_pages; ++i) {
    Status s = canonicalizer.CanonicalizeTo("http://site.example" + PagePath(i), &key);
    if (!s.ok()) Die("canonicalizing a site URL", s);
    w.arena.append(key);
    w.offsets.push_back(w.arena.size());
  }
  std::vector<bool> discovered(site_pages);
  std::deque<uint32_t> frontier{0};
  discovered[0] = true;
  uint64_t crawled = 0;
  std::vector<uint32_t> body;
  w.stream.reserve(links + 100);
  while (w.stream.size() < links && !frontier.empty()) {
    const uint32_t page = frontier.front();
    frontier.pop_front();
    ++crawled;
    uint64_t rng = Mix(page ^ 0xC0FFEEULL);
    auto next = [&rng] { return rng = Mix(rng); };
    const uint64_t n_links = 50 + next() % 51;
    body.clear();
    for (uint64_t c = kFanout * page + 1; c <= kFanout * page + kFanout && c < site_pages; ++c) {
      body.push_back(static_cast<uint32_t>(c));
    }
    while (body.size() + kNav < n_links) body.push_back(static_cast<uint32_t>(next() % site_pages));
    for (size_t j = body.size(); j > 1; --j) std::swap(body[j - 1], body[next() % j]);
    for (uint32_t t = 0; t < kNav; ++t) w.stream.push_back(t);
    w.stream.insert(w.stream.end(), body.begin(), body.end());
    for (uint32_t t = 0; t < kNav; ++t) {
      if (!discovered[t]) discovered[t] = true, frontier.push_back(t);
    }
    for (uint32_t t : body) {
      if (!discovered[t]) discovered[t] = true, frontier.push_back(t);
    }
  }
  std::vector<bool> in_stream(site_pages);
  for (uint32_t t : w.stream) {
    if (!in_stream[t]) in_stream[t] = true, ++w.distinct;
  }
  char text[256];
  snprintf(text, sizeof(text),
           "%zu links of a breadth-first crawl of %" PRIu64 " pages of a %" PRIu64
           "-page gen_static_site.py-shaped site: %" PRIu64 " distinct, %.1f %% repeats",
           w.stream.size(), crawled, site_pages, w.distinct,
           100.0 * (1.0 - static_cast<double>(w.distinct) / static_cast<double>(w.stream.size())));
  w.description = text;
  return w;
}

// ---------------------------------------------------------------------------------------------
// Server-side measurements, through the benchmark's admin connection.

class Server {
 public:
  explicit Server(RedisClient* client) : client_(client) {}

  RedisReply Run(std::vector<std::string> argv) {
    RedisCommand command{std::move(argv), -1};
    RedisReply reply = Check(client_->Run(command), "running " + command.argv[0]);
    if (reply.is_error())
      Die("running " + command.argv[0],
          RedisErrorStatus(client_->server(), command.argv[0], reply));
    return reply;
  }
  // A field of INFO `section` ("used_memory", "used_cpu_user", ...).
  double Info(const std::string& section, const std::string& field) {
    const std::string text = Run({"INFO", section}).str;
    const std::string needle = "\n" + field + ":";
    size_t at = ("\n" + text).find(needle);
    if (at == std::string::npos) Die("INFO " + section, Status::NotFound("no field " + field));
    return std::strtod(text.c_str() + at + needle.size() - 1, nullptr);
  }
  double CpuSeconds() { return Info("cpu", "used_cpu_user") + Info("cpu", "used_cpu_sys"); }
  // "cmd calls usec/call, ..." for the commands that took most of the server's time.
  std::string BusiestCommands() {
    const std::string text = Run({"INFO", "commandstats"}).str;
    struct Stat {
      std::string name;
      uint64_t calls;
      uint64_t usec;
    };
    std::vector<Stat> stats;
    size_t at = 0;
    while ((at = text.find("cmdstat_", at)) != std::string::npos) {
      const size_t colon = text.find(':', at);
      Stat s{text.substr(at + 8, colon - at - 8), 0, 0};
      std::sscanf(text.c_str() + colon, ":calls=%" SCNu64 ",usec=%" SCNu64, &s.calls, &s.usec);
      const std::string_view base = std::string_view(s.name).substr(0, s.name.find('|'));
      if (base != "info" && base != "config" && base != "memory" && base != "flushall" &&
          base != "script" && base != "function" && base != "ping") {
        stats.push_back(s);
      }
      at = colon;
    }
    std::sort(stats.begin(), stats.end(),
              [](const Stat& a, const Stat& b) { return a.usec > b.usec; });
    std::string out;
    for (size_t i = 0; i < stats.size() && i < 3; ++i) {
      char line[128];
      snprintf(line, sizeof(line), "%s%s %" PRIu64 " calls %.2f us/call", i ? ", " : "",
               stats[i].name.c_str(), stats[i].calls,
               static_cast<double>(stats[i].usec) /
                   static_cast<double>(std::max<uint64_t>(1, stats[i].calls)));
      out += line;
    }
    return out;
  }
  uint64_t MemoryUsage(const std::string& key) {
    RedisReply r = Run({"MEMORY", "USAGE", key, "SAMPLES", "0"});
    return r.type == RedisReply::Type::kInteger ? static_cast<uint64_t>(r.integer) : 0;
  }

 private:
  RedisClient* client_;
};

// ---------------------------------------------------------------------------------------------
// Contenders.

class Contender {
 public:
  virtual ~Contender() = default;
  virtual const char* name() const = 0;
  // After the server was flushed and its memory read.
  virtual Status Open(uint64_t capacity, double fp_rate) = 0;
  virtual Status Insert(std::span<const std::string_view> keys, bool* is_new) = 0;
  virtual uint64_t round_trips() const = 0;
  // Keys sent to Redis (the baselines send every one).
  virtual uint64_t keys_sent() const = 0;
  // MEMORY USAGE of its keys.
  virtual uint64_t KeyBytes(Server& server) = 0;
  virtual void Close() {}
};

class UrlsieveContender final : public Contender {
 public:
  static constexpr uint32_t kGenerations = 4;
  UrlsieveContender(RedisAddress address, bool front_cache, uint32_t shards, bool routed = false,
                    uint64_t revisit_after_s = 0, bool deletable = false, bool server_module = true)
      : address_(std::move(address)),
        front_cache_(front_cache),
        shards_(shards),
        routed_(routed),
        revisit_after_s_(revisit_after_s),
        deletable_(deletable),
        server_module_(server_module) {
    if (routed_ && shards_ == 0) shards_ = 1024;
    if (!server_module_) {
      name_ = front_cache_ ? "urlsieve Function, front cache" : "urlsieve Function, no cache";
    } else if (routed_) {
      name_ = "urlsieve routed, no cache";
    } else if (revisit_after_s_ > 0 || deletable_) {
      name_ = std::string("urlsieve ") + (revisit_after_s_ > 0 ? "7d/4 gens" : "") +
              (revisit_after_s_ > 0 && deletable_ ? "+" : "") + (deletable_ ? "deletable" : "") +
              (front_cache_ ? ", cache" : ", no cache");
    } else {
      name_ = front_cache_ ? "urlsieve, front cache" : "urlsieve, no front cache";
    }
  }
  const char* name() const override { return name_.c_str(); }
  bool deletable() const { return deletable_; }
  // Forgets keys (a deletable set): the bench times it after the inserts.
  Status Forget(std::span<const std::string_view> keys) {
    hashes_.resize(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) hashes_[i] = SeenSet::Hash(keys[i]);
    std::unique_ptr<bool[]> forgotten(new bool[keys.size()]);
    return set_->ForgetHashed(keys, hashes_, std::span<bool>(forgotten.get(), keys.size()));
  }
  Status Open(uint64_t capacity, double fp_rate) override {
    RedisSeenSetOptions options;
    options.address = address_;
    options.name = "bench";
    options.requested.capacity = capacity;
    options.requested.fp_rate = fp_rate;
    // A generational set is sized for `capacity` keys per revisit_after, capacity/G per
    // generation; the bench inserts the whole workload within one generation, so it asks for G
    // times the workload: one generation then holds it at ε/(G+1), and the memory printed is one
    // generation's. In the steady state (capacity keys per revisit_after) G+1 generations are
    // live for G generations' keys: (G+1)/G times that per key.
    if (revisit_after_s_ > 0) options.requested.capacity = capacity * kGenerations;
    if (!front_cache_) options.front_cache_keys = 0;
    options.shards = shards_;
    options.routed = routed_;
    options.server_module = server_module_;
    options.new_key_stream = {std::string(kClusterInboxSuffix), std::string(kClusterInboxGroup)};
    options.requested.revisit_after_s = revisit_after_s_;
    options.requested.generations = kGenerations;
    options.requested.deletable = deletable_;
    std::vector<SeenNotice> notices;
    Result<std::unique_ptr<RedisSeenSet>> set = RedisSeenSet::Open(options, &notices);
    if (!set.ok()) return set.status();
    set_ = std::move(*set);
    return Status::Ok();
  }
  Status Insert(std::span<const std::string_view> keys, bool* is_new) override {
    hashes_.resize(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) hashes_[i] = SeenSet::Hash(keys[i]);
    if (routed_) {
      // The partition of the key's host, as a crawl cluster routes it; the key is its payload.
      routes_.resize(keys.size());
      for (size_t i = 0; i < keys.size(); ++i) {
        std::string_view host = keys[i];
        const size_t scheme = host.find("://");
        if (scheme != std::string_view::npos) host.remove_prefix(scheme + 3);
        host = host.substr(0, host.find('/'));
        routes_[i] = static_cast<uint32_t>(SeenSet::Hash(host).low % shards_);
      }
      return set_->InsertRouted(routes_, keys, hashes_, keys, std::span<bool>(is_new, keys.size()));
    }
    return set_->InsertHashedIfNew(keys, hashes_, std::span<bool>(is_new, keys.size()));
  }
  uint64_t round_trips() const override { return set_->round_trips(); }
  uint64_t keys_sent() const override { return set_->keys_sent(); }
  uint64_t KeyBytes(Server&) override {
    Result<RedisSeenSetUsage> usage = set_->Usage();
    return usage.ok() ? usage->bytes : 0;
  }
  void Close() override { set_.reset(); }
  std::string Shape() const {
    const SeenStats s = set_->Stats();
    char text[160];
    snprintf(text, sizeof(text), "%" PRIu64 " bytes of filter, %u layer(s), %.2f bits/capacity",
             s.bloom_bytes, s.bloom_layers,
             8.0 * static_cast<double>(s.bloom_bytes) /
                 static_cast<double>(std::max<uint64_t>(1, s.capacity)));
    return text;
  }

 private:
  RedisAddress address_;
  bool front_cache_;
  uint32_t shards_;
  bool routed_;
  uint64_t revisit_after_s_;
  bool deletable_;
  bool server_module_;
  std::string name_;
  std::unique_ptr<RedisSeenSet> set_;
  std::vector<KeyHash> hashes_;
  std::vector<uint32_t> routes_;
};

// Base of the two baselines: one connection, one pipeline per batch of preallocated commands
// whose per-URL arguments are overwritten in place.
class PipelinedContender : public Contender {
 public:
  explicit PipelinedContender(RedisAddress address) : address_(std::move(address)) {}
  uint64_t round_trips() const override { return pipelines_; }
  uint64_t keys_sent() const override { return keys_; }
  void Close() override { client_.reset(); }

 protected:
  Status Connect() {
    Result<std::unique_ptr<RedisClient>> client = RedisClient::Connect(address_);
    if (!client.ok()) return client.status();
    client_ = std::move(*client);
    pipelines_ = 0;
    keys_ = 0;
    return Status::Ok();
  }
  // Sends commands_[0, n); is_new[i] = reply i is the integer 1.
  Status Send(size_t n, bool* is_new) {
    ++pipelines_;
    keys_ += n;
    Status s = client_->Pipeline(std::span(commands_.data(), n), &replies_);
    if (!s.ok()) return s;
    for (size_t i = 0; i < n; ++i) {
      const RedisReply& r = replies_[i];
      if (r.type != RedisReply::Type::kInteger) {
        return r.is_error() ? RedisErrorStatus(client_->server(), commands_[i].argv[0], r)
                            : Status::Corruption("unexpected reply to " + commands_[i].argv[0]);
      }
      is_new[i] = r.integer == 1;
    }
    return Status::Ok();
  }

  RedisAddress address_;
  std::unique_ptr<RedisClient> client_;
  std::vector<RedisCommand> commands_;
  std::vector<RedisReply> replies_;
  uint64_t pipelines_ = 0;
  uint64_t keys_ = 0;
};

// scrapy-redis's RFPDupeFilter: SADD spider:dupefilter <40 hex digits of SHA-1>; 1 means new.
class SaddContender final : public PipelinedContender {
 public:
  using PipelinedContender::PipelinedContender;
  const char* name() const override { return "SADD sha1 (scrapy-redis)"; }
  Status Open(uint64_t, double) override { return Connect(); }
  Status Insert(std::span<const std::string_view> keys, bool* is_new) override {
    if (commands_.size() < keys.size())
      commands_.resize(keys.size(), RedisCommand{{"SADD", kKey, ""}, 1});
    for (size_t i = 0; i < keys.size(); ++i) {
      sha1_ctx ctx;
      uint8_t digest[SHA1_DIGEST_SIZE];
      sha1_init(&ctx);
      sha1_update(&ctx, keys[i].size(), reinterpret_cast<const uint8_t*>(keys[i].data()));
      sha1_digest(&ctx, SHA1_DIGEST_SIZE, digest);
      std::string& hex = commands_[i].argv[2];
      hex.resize(2 * SHA1_DIGEST_SIZE);
      static constexpr char kHex[] = "0123456789abcdef";
      for (size_t j = 0; j < SHA1_DIGEST_SIZE; ++j) {
        hex[2 * j] = kHex[digest[j] >> 4];
        hex[2 * j + 1] = kHex[digest[j] & 15];
      }
    }
    return Send(keys.size(), is_new);
  }
  uint64_t KeyBytes(Server& server) override { return server.MemoryUsage(kKey); }

 private:
  static constexpr const char* kKey = "bench:dupefilter";
};

// Redisson's RBloomFilter (RedissonBloomFilter.java, 3.2x): m = -n ln ε / ln² 2 bits
// (optimalNumOfBits), k = round(m / n ln 2) (optimalNumOfHashFunctions), kept with n and ε in a
// config hash; the k bit indexes of an object by double hashing from the two 64-bit halves of its
// 128-bit hash (Redisson: HighwayHash; here XXH3-128), and add(object) as one script call: check
// that the config hash still holds m and k, SETBIT the k bits, answer 1 when any was 0. Redisson's
// add(Collection) puts many objects in one call but answers only how many were new, which a
// dupefilter cannot use; so one EVALSHA per URL, pipelined in the batches the others use.
class LuaBloomContender final : public PipelinedContender {
 public:
  using PipelinedContender::PipelinedContender;
  const char* name() const override { return "Lua SETBIT Bloom (Redisson)"; }
  Status Open(uint64_t capacity, double fp_rate) override {
    if (Status s = Connect(); !s.ok()) return s;
    const double ln2 = std::log(2.0);
    bits_ = static_cast<uint64_t>(-static_cast<double>(capacity) * std::log(fp_rate) / (ln2 * ln2));
    k_ = std::max<int>(1, static_cast<int>(std::lround(static_cast<double>(bits_) /
                                                       static_cast<double>(capacity) * ln2)));
    RedisCommand config{{"HSET", kConfigKey, "size", std::to_string(bits_), "hashIterations",
                         std::to_string(k_), "expectedInsertions", std::to_string(capacity),
                         "falseProbability", std::to_string(fp_rate)},
                        1};
    Result<RedisReply> set = client_->Run(config);
    if (!set.ok()) return set.status();
    if (set->is_error()) return RedisErrorStatus(client_->server(), "HSET", *set);
    Result<RedisReply> sha = client_->Run(RedisCommand{{"SCRIPT", "LOAD", kScript}, -1});
    if (!sha.ok()) return sha.status();
    if (sha->type != RedisReply::Type::kString) {
      return Status::Corruption("SCRIPT LOAD answered no SHA");
    }
    proto_ = RedisCommand{{"EVALSHA", sha->str, "2", kConfigKey, kKey, std::to_string(bits_),
                           std::to_string(k_), std::to_string(k_)},
                          3};
    proto_.argv.resize(kFixedArgs + k_);
    commands_.clear();
    return Status::Ok();
  }
  Status Insert(std::span<const std::string_view> keys, bool* is_new) override {
    if (commands_.size() < keys.size()) commands_.resize(keys.size(), proto_);
    for (size_t i = 0; i < keys.size(); ++i) {
      const KeyHash h = SeenSet::Hash(keys[i]);
      uint64_t hash = h.low;
      for (int j = 0; j < k_; ++j) {  // Redisson's hash(hash1, hash2, iterations, size)
        const uint64_t index = (hash & 0x7FFFFFFFFFFFFFFFULL) % bits_;
        char buf[24];
        const auto end = std::to_chars(buf, buf + sizeof(buf), index).ptr;
        commands_[i].argv[kFixedArgs + j].assign(buf, end);
        hash += (j % 2 == 0) ? h.high : h.low;
      }
    }
    return Send(keys.size(), is_new);
  }
  uint64_t KeyBytes(Server& server) override {
    return server.MemoryUsage(kKey) + server.MemoryUsage(kConfigKey);
  }
  std::string Shape() const {
    char text[96];
    snprintf(text, sizeof(text), "m = %" PRIu64 " bits (%.1f MB), k = %d", bits_,
             static_cast<double>(bits_) / 8e6, k_);
    return text;
  }

 private:
  static constexpr const char* kKey = "{bench:bloom}";
  static constexpr const char* kConfigKey = "{bench:bloom}:config";
  static constexpr size_t kFixedArgs = 8;  // EVALSHA sha 2 config bits m k k-per-object
  // KEYS: config, bits. ARGV: m, k, indexes per object, then the indexes of each object. Answers
  // how many objects had a bit at 0 (were new).
  static constexpr const char* kScript =
      "if redis.call('hget', KEYS[1], 'size') ~= ARGV[1] or\n"
      "   redis.call('hget', KEYS[1], 'hashIterations') ~= ARGV[2] then\n"
      "  return redis.error_reply('bloom filter config changed')\n"
      "end\n"
      "local per, zeros, added = tonumber(ARGV[3]), 0, 0\n"
      "for i = 4, #ARGV do\n"
      "  if redis.call('setbit', KEYS[2], ARGV[i], 1) == 0 then zeros = zeros + 1 end\n"
      "  if (i - 3) % per == 0 then\n"
      "    if zeros > 0 then added = added + 1 end\n"
      "    zeros = 0\n"
      "  end\n"
      "end\n"
      "return added\n";
  RedisCommand proto_;
  uint64_t bits_ = 0;
  int k_ = 0;
};

// Not a peer: what the test-and-set itself costs Redis without Lua. A blocked Bloom filter in one
// string key, sized at `kBitsPerKey` bits per key of capacity, k bits per key in one 512-bit
// block, and per batch one BITFIELD of "SET u1 offset 1" for every bit, whose old bits answer
// (a key is new when any was 0; a key repeated in the batch is new at its first occurrence only).
// Atomic per batch, like one call of urlsieve's Function per shard; no growth, no claim log.
class BitfieldContender final : public PipelinedContender {
 public:
  using PipelinedContender::PipelinedContender;
  const char* name() const override { return "BITFIELD Bloom, no Lua (probe)"; }
  Status Open(uint64_t capacity, double fp_rate) override {
    (void)fp_rate;
    if (Status s = Connect(); !s.ok()) return s;
    blocks_ = std::max<uint64_t>(
        1, static_cast<uint64_t>(std::ceil(static_cast<double>(capacity) * kBitsPerKey / 512.0)));
    Result<RedisReply> r = client_->Run(RedisCommand{
        {"SETRANGE", kKey, std::to_string(blocks_ * 64 - 1), std::string(1, '\0')}, 1});
    if (!r.ok()) return r.status();
    commands_.assign(1, RedisCommand{{"BITFIELD", kKey}, 1});
    return Status::Ok();
  }
  Status Insert(std::span<const std::string_view> keys, bool* is_new) override {
    std::vector<std::string>& argv = commands_[0].argv;
    argv.resize(2);
    for (size_t i = 0; i < keys.size(); ++i) {
      const KeyHash h = SeenSet::Hash(keys[i]);
      const uint64_t base = (h.low % blocks_) * 512;
      for (int j = 0; j < kK; ++j) {
        const uint64_t offset = base + ((h.high >> (6 * j)) & 511);
        argv.insert(argv.end(), {"SET", "u1", std::to_string(offset), "1"});
      }
    }
    ++pipelines_;
    keys_ += keys.size();
    if (Status s = client_->Pipeline(std::span(commands_.data(), 1), &replies_); !s.ok()) return s;
    const RedisReply& r = replies_[0];
    if (r.type != RedisReply::Type::kArray || r.elements.size() != keys.size() * kK) {
      return r.is_error() ? RedisErrorStatus(client_->server(), "BITFIELD", r)
                          : Status::Corruption("unexpected reply to BITFIELD");
    }
    for (size_t i = 0; i < keys.size(); ++i) {
      is_new[i] = false;
      for (int j = 0; j < kK; ++j) is_new[i] = is_new[i] || r.elements[i * kK + j].integer == 0;
    }
    return Status::Ok();
  }
  uint64_t KeyBytes(Server& server) override { return server.MemoryUsage(kKey); }

 private:
  static constexpr const char* kKey = "bench:bitfield";
  static constexpr double kBitsPerKey = 16;
  static constexpr int kK = 10;
  uint64_t blocks_ = 0;
};

// ---------------------------------------------------------------------------------------------

struct Row {
  std::string contender;
  double urls_per_s = 0;
  double info_bytes_per_url = 0;
  double usage_bytes_per_url = 0;
  double round_trips_per_url = 0;
  double keys_sent_per_url = 0;
  double us_per_round_trip = 0;
  double client_cpu_s = 0;
  double server_cpu_s = 0;
  uint64_t new_answers = 0;
  std::string check;
  bool wrong = false;
};

struct Options {
  std::string redis;
  uint64_t urls = 10'000'000;
  uint64_t links = 5'000'000;
  size_t batch = 512;
  double fp_rate = 1e-3;
  std::string workloads = "ab";
  std::string contenders = "cnsl";
  uint32_t shards = 0;  // urlsieve's: 0 lets it choose
};

Row Measure(Contender& contender, const Workload& w, Server& server, const Options& o,
            std::string* notes) {
  Row row;
  row.contender = contender.name();
  server.Run({"FLUSHALL", "SYNC"});
  server.Run({"CONFIG", "RESETSTAT"});
  const double memory_before = server.Info("memory", "used_memory");
  if (Status s = contender.Open(w.distinct, o.fp_rate); !s.ok())
    Die(std::string("opening ") + contender.name(), s);
  const double server_cpu_before = server.CpuSeconds();
  const double cpu_before = CpuSeconds();
  std::vector<std::string_view> keys(o.batch);
  std::unique_ptr<bool[]> is_new(new bool[o.batch]);
  const auto start = std::chrono::steady_clock::now();
  const uint64_t n = w.size();
  for (uint64_t at = 0; at < n; at += o.batch) {
    const size_t count = static_cast<size_t>(std::min<uint64_t>(o.batch, n - at));
    for (size_t i = 0; i < count; ++i) keys[i] = w.Key(at + i);
    Status s = contender.Insert(std::span(keys.data(), count), is_new.get());
    if (!s.ok()) Die(std::string(contender.name()) + " inserting on " + w.name, s);
    for (size_t i = 0; i < count; ++i) row.new_answers += is_new[i];
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  row.client_cpu_s = CpuSeconds() - cpu_before;
  row.server_cpu_s = server.CpuSeconds() - server_cpu_before;
  row.urls_per_s = static_cast<double>(n) / seconds;
  const double distinct = static_cast<double>(w.distinct);
  row.info_bytes_per_url = (server.Info("memory", "used_memory") - memory_before) / distinct;
  row.usage_bytes_per_url = static_cast<double>(contender.KeyBytes(server)) / distinct;
  row.round_trips_per_url = static_cast<double>(contender.round_trips()) / static_cast<double>(n);
  row.keys_sent_per_url = static_cast<double>(contender.keys_sent()) / static_cast<double>(n);
  row.us_per_round_trip =
      seconds * 1e6 / static_cast<double>(std::max<uint64_t>(1, contender.round_trips()));
  const bool exact = std::string_view(contender.name()).starts_with("SADD");
  const uint64_t missed = w.distinct > row.new_answers ? w.distinct - row.new_answers : 0;
  char check[96];
  if (row.new_answers > w.distinct) {
    snprintf(check, sizeof(check), "WRONG: %" PRIu64 " more than distinct",
             row.new_answers - w.distinct);
    row.wrong = true;
  } else if (exact ? missed != 0 : static_cast<double>(missed) > o.fp_rate * distinct) {
    snprintf(check, sizeof(check), "WRONG: %" PRIu64 " missed (%.2e)", missed,
             static_cast<double>(missed) / distinct);
    row.wrong = true;
  } else {
    snprintf(check, sizeof(check), "ok, %" PRIu64 " fp (%.1e)", missed,
             static_cast<double>(missed) / distinct);
  }
  row.check = check;
  std::string shape;
  if (auto* u = dynamic_cast<UrlsieveContender*>(&contender)) shape = u->Shape() + "; ";
  if (auto* l = dynamic_cast<LuaBloomContender*>(&contender)) shape = l->Shape() + "; ";
  // A deletable set: forget the first tenth of the distinct keys (untimed above), timed here.
  if (auto* u = dynamic_cast<UrlsieveContender*>(&contender); u != nullptr && u->deletable()) {
    const uint64_t forget = std::max<uint64_t>(1, w.distinct / 10);
    std::vector<std::string_view> batch;
    const auto forget_start = std::chrono::steady_clock::now();
    for (uint64_t i = 0; i < forget; i += o.batch) {
      batch.clear();
      for (uint64_t j = i; j < std::min(forget, i + o.batch); ++j) {
        const std::string_view key =
            std::string_view(w.arena).substr(w.offsets[j], w.offsets[j + 1] - w.offsets[j]);
        batch.push_back(key);
      }
      if (Status s = u->Forget(batch); !s.ok()) Die(std::string(u->name()) + " forgetting", s);
    }
    const double forget_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - forget_start).count();
    char line[160];
    snprintf(line, sizeof(line), "  %s: Forget of %" PRIu64 " keys: %.0f ns/key\n", u->name(),
             forget, forget_s * 1e9 / static_cast<double>(forget));
    *notes += line;
  }
  const long long keys_in_db = server.Run({"DBSIZE"}).integer;
  *notes += "  " + row.contender + ": " + shape + std::to_string(keys_in_db) +
            " Redis keys; server: " + server.BusiestCommands() + "\n";
  contender.Close();
  return row;
}

void PrintTable(const Workload& w, const std::vector<Row>& rows, const std::string& notes) {
  printf("%s %s\n", w.name.c_str(), w.description.c_str());
  printf("%-29s %10s %8s %8s %9s %8s %9s %7s %7s %9s  %s\n", "contender", "URLs/s", "B/URL",
         "B/URL", "round", "keys to", "us/round", "client", "server", "\"new\"", "check");
  printf("%-29s %10s %8s %8s %9s %8s %9s %7s %7s %9s\n", "", "", "(INFO)", "(MEMORY)", "trips/URL",
         "Redis/URL", "trip", "cpu s", "cpu s", "answers");
  for (const Row& r : rows) {
    printf("%-29s %10.0f %8.2f %8.2f %9.5f %8.3f %9.1f %7.2f %7.2f %9" PRIu64 "  %s\n",
           r.contender.c_str(), r.urls_per_s, r.info_bytes_per_url, r.usage_bytes_per_url,
           r.round_trips_per_url, r.keys_sent_per_url, r.us_per_round_trip, r.client_cpu_s,
           r.server_cpu_s, r.new_answers, r.check.c_str());
  }
  printf("%s\n", notes.c_str());
}

const Row* Find(const std::vector<Row>& rows, std::string_view prefix) {
  for (const Row& r : rows) {
    if (std::string_view(r.contender).starts_with(prefix)) return &r;
  }
  return nullptr;
}

void Target(const char* what, double value, const char* op, double goal) {
  const bool met = std::string_view(op) == ">=" ? value >= goal : value <= goal;
  printf("  %-58s %8.2f  (target %s %g: %s)\n", what, value, op, goal, met ? "met" : "MISSED");
}

int Main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Die(std::string(arg), Status::InvalidArgument("needs a value"));
      return argv[++i];
    };
    if (arg == "--redis")
      o.redis = value();
    else if (arg == "--urls")
      o.urls = std::stoull(value());
    else if (arg == "--links")
      o.links = std::stoull(value());
    else if (arg == "--batch")
      o.batch = std::stoul(value());
    else if (arg == "--fp-rate")
      o.fp_rate = std::stod(value());
    else if (arg == "--workloads")
      o.workloads = value();
    else if (arg == "--shards")
      o.shards = static_cast<uint32_t>(std::stoul(value()));
    else if (arg == "--contenders")
      o.contenders = value();
    else
      Die(std::string(arg), Status::InvalidArgument(
                                "unknown argument (see the header of bench/bench_redis_seen.cc)"));
  }
  if (o.redis.empty()) Die("--redis", Status::InvalidArgument("missing: redis://127.0.0.1:PORT"));
  if (o.batch == 0 || o.urls == 0 || o.links == 0)
    Die("arguments", Status::InvalidArgument("--urls, --links and --batch must be positive"));
  const RedisAddress address = Check(RedisAddress::Parse(o.redis), "--redis");
  // FLUSHALL SYNC of 10^7 SADD members takes seconds (more on a busy machine).
  RedisTimeouts admin_timeouts;
  admin_timeouts.command_s = 600;
  std::unique_ptr<RedisClient> admin =
      Check(RedisClient::Connect(address, admin_timeouts), "connecting to " + o.redis);
  Server server(admin.get());
  printf(
      "Redis %s at %s; batches of %zu keys; fp-rate %g; one client thread and connection each\n\n",
      [&] {
        const std::string t = server.Run({"INFO", "server"}).str;
        const size_t at = t.find("redis_version:");
        return at == std::string::npos ? std::string("?")
                                       : t.substr(at + 14, t.find('\r', at) - at - 14);
      }()
          .c_str(),
      address.ToString().c_str(), o.batch, o.fp_rate);

  std::vector<std::unique_ptr<Contender>> contenders;
  for (char c : o.contenders) {
    if (c == 'c')
      contenders.push_back(std::make_unique<UrlsieveContender>(address, true, o.shards));
    else if (c == 'n')
      contenders.push_back(std::make_unique<UrlsieveContender>(address, false, o.shards));
    else if (c == 'o')
      contenders.push_back(std::make_unique<UrlsieveContender>(address, false, o.shards, true));
    else if (c == 'g' || c == 'G')  // generational: revisit_after 7 d in 4 generations
      contenders.push_back(
          std::make_unique<UrlsieveContender>(address, c == 'G', o.shards, false, 7 * 86400));
    else if (c == 'd' || c == 'D')  // deletable (counting)
      contenders.push_back(
          std::make_unique<UrlsieveContender>(address, c == 'D', o.shards, false, 0, true));
    else if (c == 'f' || c == 'F')
      contenders.push_back(
          std::make_unique<UrlsieveContender>(address, c == 'F', o.shards, false, 0, false, false));
    else if (c == 's')
      contenders.push_back(std::make_unique<SaddContender>(address));
    else if (c == 'r')
      contenders.push_back(std::make_unique<BitfieldContender>(address));
    else if (c == 'l')
      contenders.push_back(std::make_unique<LuaBloomContender>(address));
    else
      Die("--contenders", Status::InvalidArgument(std::string("unknown contender '") + c +
                                                  "' (c n f F s l r o g G d D)"));
  }

  std::map<char, std::vector<Row>> results;
  bool wrong = false;
  for (char wl : o.workloads) {
    const auto t0 = std::chrono::steady_clock::now();
    Workload w;
    if (wl == 'a')
      w = DistinctUrls(o.urls);
    else if (wl == 'b')
      w = CrawlLinkStream(o.links, std::max<uint64_t>(100, o.links / 75 * 8));
    else
      Die("--workloads",
          Status::InvalidArgument(std::string("unknown workload '") + wl + "' (a b)"));
    printf("(%.1f s to generate and canonicalize the keys, untimed)\n",
           std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    std::string notes;
    std::vector<Row>& rows = results[wl];
    for (auto& c : contenders) {
      rows.push_back(Measure(*c, w, server, o, &notes));
      wrong = wrong || rows.back().wrong;
    }
    PrintTable(w, rows, notes);
    fflush(stdout);
  }
  printf("targets (issue 12, at fp-rate %g; urlsieve = its default, with the front cache):\n",
         o.fp_rate);
  const Row* sadd_a = results.count('a') ? Find(results['a'], "SADD") : nullptr;
  const Row* lua_a = results.count('a') ? Find(results['a'], "Lua") : nullptr;
  const Row* sadd_b = results.count('b') ? Find(results['b'], "SADD") : nullptr;
  for (const char* variant : {"urlsieve, front", "urlsieve, no"}) {
    const Row* ua = results.count('a') ? Find(results['a'], variant) : nullptr;
    const Row* ub = results.count('b') ? Find(results['b'], variant) : nullptr;
    const std::string who =
        std::string(variant) == "urlsieve, front" ? "urlsieve" : "urlsieve no cache";
    if (ua)
      Target((who + ": (a) Redis memory, B/URL (INFO)").c_str(), ua->info_bytes_per_url, "<=", 2);
    if (ua && sadd_a)
      Target((who + ": (a) memory, SADD / urlsieve").c_str(),
             sadd_a->info_bytes_per_url / ua->info_bytes_per_url, ">=", 30);
    if (ub && sadd_b)
      Target((who + ": (b) URLs/s, urlsieve / SADD").c_str(), ub->urls_per_s / sadd_b->urls_per_s,
             ">=", 3);
    if (ua && lua_a)
      Target((who + ": (a) URLs/s, urlsieve / Lua SETBIT Bloom").c_str(),
             ua->urls_per_s / lua_a->urls_per_s, ">=", 1.5);
  }
  // Issue 27: server CPU per distinct URL at most SADD's, and the speed ratios.
  printf("targets (issue 27: the server's cost; urlsieve through the module where loaded):\n");
  const Row* na = results.count('a') ? Find(results['a'], "urlsieve, no") : nullptr;
  const Row* nb = results.count('b') ? Find(results['b'], "urlsieve, no") : nullptr;
  const Row* cb = results.count('b') ? Find(results['b'], "urlsieve, front") : nullptr;
  if (na && sadd_a) {
    Target("(a) URLs/s, urlsieve no cache / SADD", na->urls_per_s / sadd_a->urls_per_s, ">=", 1);
    Target("(a) server CPU per URL, urlsieve no cache / SADD",
           na->server_cpu_s / std::max(1e-9, sadd_a->server_cpu_s), "<=", 1);
    Target("(a) Redis memory, B/URL (MEMORY USAGE)", na->usage_bytes_per_url, "<=", 2.1);
  }
  if (cb && sadd_b) {
    Target("(b) URLs/s, urlsieve / SADD", cb->urls_per_s / sadd_b->urls_per_s, ">=", 3);
  }
  if (nb && sadd_b) {
    Target("(b) URLs/s, urlsieve no cache / SADD", nb->urls_per_s / sadd_b->urls_per_s, ">=", 1.5);
  }
  if (wrong) printf("\nA contender answered wrongly (see the check column).\n");
  return wrong ? 1 : 0;
}

}  // namespace
}  // namespace urlsieve

int main(int argc, char** argv) { return urlsieve::Main(argc, argv); }
