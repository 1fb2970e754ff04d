// RedisContentSeenSet (redis_content_seen_set.h): the client side of the Function in
// redis_content_function.lua. It computes every bucket and entry, does the near lookup over the
// buckets it reads, and retries; the Function decides and stores.
#include "dedup/content/redis_content_seen_set.h"

#include <sys/random.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdio>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "dedup/content/redis_content_function_lua.h"
#include "redis/redis_client.h"
#include "redis/redis_reply.h"

namespace urlsieve {

namespace {

constexpr const char* kFormat = "urlsieve-redis-content-set";
constexpr const char* kVersion = "1";
constexpr const char* kCreate = "urlsieve_content_v1_create";
constexpr const char* kTest = "urlsieve_content_v1_test";
constexpr const char* kForget = "urlsieve_content_v1_forget";
constexpr size_t kMaxId = 4096;
constexpr size_t kMaxData = 4096;
// Back-off before each retry of a call whose connection failed (same token and sequence number).
constexpr int kRetryDelaysMs[] = {25, 100, 300, 500};
// Reads again when the near buckets changed between the client's read and the Function's call
// (another page stored in one of them, a Forget): at most this many times per Test.
constexpr int kMaxRereads = 100;
constexpr auto kPendingLifetime = std::chrono::seconds(240);
constexpr size_t kMaxPending = 256;
constexpr size_t kPipelineChunk = 2048;

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}
bool TextHas(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

RedisCommand Command(std::vector<std::string> argv, int key_index = 1) {
  return RedisCommand{std::move(argv), key_index};
}

std::string Hex4(uint64_t bucket) {
  char buffer[8];
  std::snprintf(buffer, sizeof(buffer), "%04x", static_cast<unsigned>(bucket));
  return buffer;
}

// `bytes` big-endian bytes of the low bits of v.
std::string BigEndian(uint64_t v, int bytes) {
  std::string out(static_cast<size_t>(bytes), '\0');
  for (int i = bytes - 1; i >= 0; --i) {
    out[static_cast<size_t>(i)] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
  return out;
}

uint64_t ReadBigEndian(std::string_view s, size_t pos, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v = (v << 8) | static_cast<uint8_t>(s[pos + static_cast<size_t>(i)]);
  return v;
}

Result<std::string> RandomHex(size_t bytes) {
  std::string raw(bytes, '\0');
  size_t filled = 0;
  while (filled < bytes) {
    const ssize_t n = getrandom(raw.data() + filled, bytes - filled, 0);
    if (n < 0) return Status::IoError("getrandom (a content set's identity)");
    filled += static_cast<size_t>(n);
  }
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (char c : raw) {
    hex += kDigits[static_cast<uint8_t>(c) >> 4];
    hex += kDigits[static_cast<uint8_t>(c) & 15];
  }
  return hex;
}

// Table j of the near index (NearDuplicateIndex's blocks): block j is `width` bits starting
// `start` bits from the top; the fingerprint rotated left by `start` puts it on top, its top `b`
// bits address the bucket, the other 64 - b bits (in `bytes` bytes) are the entry.
struct NearTable {
  int start = 0;
  int width = 0;
  int b = 0;
  int bytes = 0;
  uint64_t Rotated(uint64_t f) const { return std::rotl(f, start); }
  uint64_t Bucket(uint64_t f) const { return Rotated(f) >> (64 - b); }
  uint64_t Rest(uint64_t f) const { return Rotated(f) & ((uint64_t{1} << (64 - b)) - 1); }
  uint64_t Whole(uint64_t bucket, uint64_t rest) const {
    return std::rotr((bucket << (64 - b)) | rest, start);
  }
};

std::vector<NearTable> NearTables(int k) {
  std::vector<NearTable> tables;
  const int blocks = k + 1;
  int start = 0;
  for (int j = 0; j < blocks; ++j) {
    NearTable t;
    t.start = start;
    t.width = 64 / blocks + (j < 64 % blocks ? 1 : 0);
    t.b = std::min(16, t.width);
    t.bytes = (64 - t.b + 7) / 8;
    start += t.width;
    tables.push_back(t);
  }
  return tables;
}

struct Pooled {
  std::unique_ptr<RedisClient> client;
  std::string token;
  uint64_t seq = 0;
};

// A call that failed after its retries: its token and number, for the caller's retry.
struct Pending {
  std::string key;  // what the call was about (fingerprint, id, data)
  std::string token;
  uint64_t seq = 0;
  std::chrono::steady_clock::time_point failed_at;
};

}  // namespace

struct RedisContentSeenSet::Impl {
  RedisContentSeenSetOptions options;
  std::string identity;
  std::string instance;
  std::vector<NearTable> tables;
  std::atomic<uint64_t> pages{0};
  std::atomic<uint64_t> next_slot{0};
  std::mutex pool_mu;
  std::vector<std::unique_ptr<Pooled>> idle;
  std::mutex pending_mu;
  std::deque<Pending> pending;

  std::string Prefix() const { return "urlsieve:{" + options.name + ":content}:"; }
  std::string MetaKey() const { return Prefix() + "meta"; }
  std::string What() const { return "the Redis content-seen set \"" + options.name + "\""; }
  std::string NewToken() {
    return identity + "/" + instance + ":" + std::to_string(next_slot.fetch_add(1));
  }

  Result<std::unique_ptr<Pooled>> Acquire() {
    {
      std::lock_guard<std::mutex> lock(pool_mu);
      if (!idle.empty()) {
        std::unique_ptr<Pooled> p = std::move(idle.back());
        idle.pop_back();
        return p;
      }
    }
    auto connected = RedisClient::Connect(options.address, options.timeouts);
    if (!connected.ok()) {
      const Status& s = connected.status();
      return Status(s.code(), What() + ": " + s.message());
    }
    auto p = std::make_unique<Pooled>();
    p->client = std::move(connected).value();
    p->token = NewToken();
    return p;
  }
  void Release(std::unique_ptr<Pooled> p) {
    std::lock_guard<std::mutex> lock(pool_mu);
    idle.push_back(std::move(p));
  }

  bool TakePending(const std::string& key, Pooled& p) {
    std::lock_guard<std::mutex> lock(pending_mu);
    const auto now = std::chrono::steady_clock::now();
    for (auto it = pending.begin(); it != pending.end(); ++it) {
      if (it->key == key && now - it->failed_at <= kPendingLifetime) {
        p.token = it->token;
        p.seq = it->seq;
        pending.erase(it);
        return true;
      }
    }
    return false;
  }
  // The call failed: kept for the caller's retry; the connection goes on under a new token, so
  // that its next calls do not overwrite the answer kept under the old one.
  void KeepFailed(std::unique_ptr<Pooled> p, std::string key) {
    {
      std::lock_guard<std::mutex> lock(pending_mu);
      const auto now = std::chrono::steady_clock::now();
      while (!pending.empty() && (pending.size() >= kMaxPending ||
                                  now - pending.front().failed_at > kPendingLifetime)) {
        pending.pop_front();
      }
      pending.push_back({std::move(key), p->token, p->seq, now});
    }
    p->token = NewToken();
    p->seq = 0;
    Release(std::move(p));
  }

  Status LoadLibrary(RedisClient& client) {
    std::vector<RedisReply> replies;
    URLSIEVE_RETURN_IF_ERROR(client.OnEveryMaster(
        Command({"FUNCTION", "LOAD", "REPLACE", std::string(kRedisContentFunctionLua)}, -1),
        &replies));
    for (const RedisReply& reply : replies) {
      if (!reply.is_error()) continue;
      if (TextHas(reply.str, "unknown command") || TextHas(reply.str, "unknown subcommand")) {
        return Status::FailedPrecondition(client.server() + ": this Redis has no Functions (" +
                                          reply.str + "); " + What() + " needs Redis 7 or later");
      }
      return RedisErrorStatus(client.server(), "loading " + What() + "'s function library", reply);
    }
    return Status::Ok();
  }

  Status Adopt(RedisClient& client, const RedisReply& reply) {
    std::map<std::string, std::string, std::less<>> meta;
    for (size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
      meta[reply.elements[i].str] = reply.elements[i + 1].str;
    }
    if (meta.empty()) {
      return Status::NotFound(client.server() + ": there is no " + What() + " (no key " +
                              MetaKey() + ")");
    }
    if (meta["format"] != kFormat) {
      return Status::Unsupported(client.server() + ": " + MetaKey() +
                                 " is not the metadata of a urlsieve content-seen set (format \"" +
                                 meta["format"] + "\")");
    }
    if (meta["version"] != kVersion) {
      return Status::Unsupported(client.server() + ": " + What() + " is of version " +
                                 meta["version"] + "; this build reads version " + kVersion);
    }
    const int stored_k = std::atoi(meta["max_distance"].c_str());
    const bool stored_near = meta["near"] == "1";
    if (options.read_only) {
      options.max_distance = stored_k;
      options.near = stored_near;
    } else if (stored_k != options.max_distance) {
      return Status::FailedPrecondition(
          client.server() + ": " + What() + " was created with max_distance " +
          std::to_string(stored_k) + ", but it was opened with max_distance " +
          std::to_string(options.max_distance) + " (a set's near index is built for one)");
    } else if (stored_near != options.near) {
      return Status::FailedPrecondition(
          client.server() + ": " + What() + " was created " + (stored_near ? "with" : "without") +
          " its near index, but it was opened " + (options.near ? "with" : "without") + " one");
    }
    identity = meta["identity"];
    pages.store(std::strtoull(meta["pages"].c_str(), nullptr, 10));
    tables = NearTables(options.max_distance);
    return Status::Ok();
  }

  Status OpenSet() {
    if (!IsValidRedisSetName(options.name)) {
      return Status::InvalidArgument("Redis content-seen set name \"" + options.name +
                                     "\": use 1-64 characters of A-Z a-z 0-9 _ . -");
    }
    if (options.max_distance < 0 || options.max_distance > 7) {
      return Status::InvalidArgument("opening " + What() + ": max_distance " +
                                     std::to_string(options.max_distance) + " is outside 0..7");
    }
    auto random = RandomHex(8);
    if (!random.ok()) return random.status();
    instance = *random;
    auto acquired = Acquire();
    if (!acquired.ok()) return acquired.status();
    std::unique_ptr<Pooled> p = std::move(acquired).value();
    RedisClient& client = *p->client;
    if (options.read_only) {
      auto meta = client.Run(Command({"HGETALL", MetaKey()}));
      if (!meta.ok()) return meta.status();
      if (meta->is_error()) return RedisErrorStatus(client.server(), "HGETALL " + MetaKey(), *meta);
      URLSIEVE_RETURN_IF_ERROR(Adopt(client, *meta));
    } else {
      URLSIEVE_RETURN_IF_ERROR(LoadLibrary(client));
      auto fresh = RandomHex(16);
      if (!fresh.ok()) return fresh.status();
      // Atomic: of two processes creating the set at once, one writes it and both adopt it.
      auto meta = client.Run(Command({"FCALL",
                                      kCreate,
                                      "1",
                                      MetaKey(),
                                      "format",
                                      kFormat,
                                      "version",
                                      kVersion,
                                      "identity",
                                      *fresh,
                                      "max_distance",
                                      std::to_string(options.max_distance),
                                      "near",
                                      options.near ? "1" : "0",
                                      "pages",
                                      "0",
                                      "chunk",
                                      "0",
                                      "coff",
                                      "0",
                                      "epoch",
                                      "0"},
                                     3));
      if (!meta.ok()) return meta.status();
      if (meta->is_error()) {
        return RedisErrorStatus(client.server(), "creating " + What() + " (" + MetaKey() + ")",
                                *meta);
      }
      URLSIEVE_RETURN_IF_ERROR(Adopt(client, *meta));
    }
    p->token = NewToken();  // made before the identity was known
    Release(std::move(p));
    return Status::Ok();
  }

  // The error of an error reply to `what`.
  Status CallError(RedisClient& client, const std::string& what, const RedisReply& reply) const {
    if (StartsWith(reply.str, "NOINIT") || StartsWith(reply.str, "IDENTITY") ||
        StartsWith(reply.str, "LOST")) {
      return Status::Corruption(client.server() + ": " + What() + ": " + what + ": " + reply.str);
    }
    return RedisErrorStatus(client.server(), what + " of " + What(), reply);
  }

  // Runs the FCALL `build()` until it has an answer: connection faults and transient error
  // replies retried (same token and sequence number), the library reloaded once when missing.
  Status RunCall(Pooled& p, const std::function<RedisCommand()>& build, const std::string& what,
                 RedisReply* out) {
    RedisClient& client = *p.client;
    bool reloaded = false;
    size_t failures = 0;
    while (true) {
      const RedisCommand command = build();
      std::vector<RedisReply> replies;
      Status status = client.Pipeline(std::span<const RedisCommand>(&command, 1), &replies);
      if (status.ok() && replies.size() != 1) {
        status = Status::Unavailable(client.server() + ": " + what + " got no reply");
      }
      if (status.ok() && replies[0].is_error()) {
        const RedisReply& reply = replies[0];
        if (TextHas(reply.str, "Function not found") && !reloaded) {
          reloaded = true;
          URLSIEVE_RETURN_IF_ERROR(LoadLibrary(client));
          continue;
        }
        status = CallError(client, what, reply);
        if (status.code() != StatusCode::kUnavailable) return status;
      }
      if (status.ok()) {
        *out = std::move(replies[0]);
        return Status::Ok();
      }
      if (failures >= std::size(kRetryDelaysMs)) {
        return Status(status.code(), what + " of " + What() + ": " + status.message());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(kRetryDelaysMs[failures]));
      ++failures;
    }
  }

  // The near lookup's reading (one pipelined round trip): the epoch, and per table the bucket.
  struct NearReading {
    std::string epoch;
    std::vector<std::string> buckets;
  };
  Status ReadNear(RedisClient& client, uint64_t simhash, NearReading* reading) {
    std::vector<RedisCommand> commands;
    commands.push_back(Command({"HGET", MetaKey(), "epoch"}));
    for (size_t j = 0; j < tables.size(); ++j) {
      // Bucket HHLL: field floor(LL / 4) of hash n:J:HH (redis_content_function.lua).
      const uint64_t bucket = tables[j].Bucket(simhash);
      commands.push_back(
          Command({"HGET", Prefix() + "n:" + std::to_string(j) + ":" + Hex4(bucket).substr(0, 2),
                   Hex4((bucket & 0xff) >> 2).substr(2)}));
    }
    std::vector<RedisReply> replies;
    Status status = client.Pipeline(commands, &replies);
    if (status.ok() && replies.size() != commands.size()) {
      status = Status::Unavailable(client.server() + ": reading near buckets got " +
                                   std::to_string(replies.size()) + " replies");
    }
    if (!status.ok()) return status;
    for (const RedisReply& r : replies) {
      if (r.is_error()) return CallError(client, "reading the near buckets", r);
    }
    reading->epoch = replies[0].type == RedisReply::Type::kNil ? "0" : replies[0].str;
    reading->buckets.clear();
    for (size_t j = 1; j < replies.size(); ++j) reading->buckets.push_back(replies[j].str);
    return Status::Ok();
  }

  // The fingerprints at the smallest distance <= max_distance in the buckets read.
  std::vector<uint64_t> Nearest(uint64_t simhash, const NearReading& reading, int* distance) const {
    std::vector<uint64_t> best;
    int best_distance = options.max_distance + 1;
    for (size_t j = 0; j < tables.size(); ++j) {
      const NearTable& t = tables[j];
      const std::string& s = reading.buckets[j];
      const size_t width = static_cast<size_t>(t.bytes) + (j == 0 ? 6 : 0);
      const uint64_t want = t.Rest(simhash);
      // The field: 4 entry counts (2 bytes each), then the 4 sub-buckets; ours is bucket % 4.
      if (s.size() < 8) continue;
      const uint64_t sub = t.Bucket(simhash) & 3;
      size_t begin = 8;
      for (uint64_t q = 0; q < sub; ++q) begin += ReadBigEndian(s, 2 * q, 2) * width;
      const size_t end = std::min(s.size(), begin + ReadBigEndian(s, 2 * sub, 2) * width);
      for (size_t pos = begin; pos + width <= end; pos += width) {
        const uint64_t rest = ReadBigEndian(s, pos, t.bytes);
        const int d = std::popcount(rest ^ want);
        if (d > options.max_distance || d > best_distance) continue;
        const uint64_t whole = t.Whole(t.Bucket(simhash), rest);
        if (d < best_distance) {
          best_distance = d;
          best.clear();
        }
        if (std::find(best.begin(), best.end(), whole) == best.end()) best.push_back(whole);
      }
    }
    *distance = best_distance;
    return best;
  }

  Result<ContentVerdict> Test(const ContentFingerprint& fp, const ContentCopy& page) {
    if (page.id.empty() || page.id.size() > kMaxId || page.id.find('\0') != std::string::npos ||
        page.data.size() > kMaxData) {
      return Status::InvalidArgument(What() +
                                     ": a page's id must be 1-4096 bytes without NUL "
                                     "and its data at most 4096 bytes");
    }
    if (options.read_only) {
      return Status::FailedPrecondition(What() + " was opened read-only");
    }
    auto acquired = Acquire();
    if (!acquired.ok()) return acquired.status();
    std::unique_ptr<Pooled> p = std::move(acquired).value();
    const bool near = options.near && fp.simhash.has_value();
    std::string pending_key = "T" + std::to_string(fp.digest) + "/" +
                              (near ? std::to_string(*fp.simhash) : "-") + "/" + page.id + "\n" +
                              page.data;
    if (!TakePending(pending_key, *p)) ++p->seq;
    RedisClient& client = *p->client;
    const std::string what = "testing a page (" + page.id + ")";
    RedisReply reply;
    for (int attempt = 0;; ++attempt) {
      NearReading reading;
      std::vector<uint64_t> claims;
      int distance = 0;
      if (near) {
        Status read = Status::Ok();
        for (size_t failures = 0;; ++failures) {
          read = ReadNear(client, *fp.simhash, &reading);
          if (read.ok() || read.code() != StatusCode::kUnavailable ||
              failures >= std::size(kRetryDelaysMs)) {
            break;
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(kRetryDelaysMs[failures]));
        }
        if (!read.ok()) {
          KeepFailed(std::move(p), std::move(pending_key));
          return Status(read.code(), what + " of " + What() + ": " + read.message());
        }
        claims = Nearest(*fp.simhash, reading, &distance);
      }
      auto build = [&] {
        std::vector<std::string> argv = {"FCALL",
                                         kTest,
                                         "1",
                                         MetaKey(),
                                         identity,
                                         p->token,
                                         std::to_string(p->seq),
                                         Hex4(fp.digest >> 48),
                                         BigEndian(fp.digest, 6),
                                         page.id,
                                         page.data,
                                         near ? "1" : "0"};
        if (near) {
          argv.push_back(reading.epoch);
          argv.push_back(std::to_string(tables.size()));
          for (size_t j = 0; j < tables.size(); ++j) {
            argv.push_back(Hex4(tables[j].Bucket(*fp.simhash)));
            argv.push_back(BigEndian(tables[j].Rest(*fp.simhash), tables[j].bytes));
            argv.push_back(std::to_string(reading.buckets[j].size()));
          }
          argv.push_back(std::to_string(claims.size()));
          for (uint64_t f : claims) {
            argv.push_back(Hex4(tables[0].Bucket(f)));
            argv.push_back(BigEndian(tables[0].Rest(f), tables[0].bytes));
            argv.push_back(std::to_string(distance));
          }
        }
        return Command(std::move(argv), 3);
      };
      Status status = RunCall(*p, build, what, &reply);
      if (!status.ok()) {
        if (status.code() == StatusCode::kUnavailable) {
          KeepFailed(std::move(p), std::move(pending_key));
        } else {
          Release(std::move(p));
        }
        return status;
      }
      if (reply.type != RedisReply::Type::kArray || reply.elements.empty()) break;
      if (reply.elements[0].str != "A") break;
      if (attempt >= kMaxRereads) {
        KeepFailed(std::move(p), std::move(pending_key));
        return Status::Unavailable(client.server() + ": " + what + " of " + What() +
                                   ": its near buckets kept changing while it was read");
      }
    }
    Release(std::move(p));
    if (reply.type != RedisReply::Type::kArray || reply.elements.size() != 6) {
      return Status::Corruption(options.address.ToString() + ": " + what + " of " + What() +
                                ": the function answered something else than a verdict");
    }
    ContentVerdict verdict;
    const std::string& kind = reply.elements[0].str;
    verdict.kind = kind == "E"   ? ContentVerdict::Kind::kExact
                   : kind == "N" ? ContentVerdict::Kind::kNear
                                 : ContentVerdict::Kind::kFirst;
    verdict.refetch = reply.elements[1].integer != 0;
    verdict.distance = static_cast<int>(reply.elements[2].integer);
    verdict.first.id = std::move(reply.elements[3].str);
    verdict.first.data = std::move(reply.elements[4].str);
    pages.store(static_cast<uint64_t>(std::max(0LL, reply.elements[5].integer)));
    return verdict;
  }

  Result<bool> Forget(const ContentFingerprint& fp, std::string_view id) {
    if (id.empty() || id.size() > kMaxId || id.find('\0') != std::string_view::npos) {
      return Status::InvalidArgument(What() + ": a page's id must be 1-4096 bytes without NUL");
    }
    if (options.read_only) {
      return Status::FailedPrecondition(What() + " was opened read-only");
    }
    auto acquired = Acquire();
    if (!acquired.ok()) return acquired.status();
    std::unique_ptr<Pooled> p = std::move(acquired).value();
    const bool near = options.near && fp.simhash.has_value();
    std::string pending_key = "F" + std::to_string(fp.digest) + "/" +
                              (near ? std::to_string(*fp.simhash) : "-") + "/" + std::string(id);
    if (!TakePending(pending_key, *p)) ++p->seq;
    const std::string what = "forgetting a page (" + std::string(id) + ")";
    auto build = [&] {
      std::vector<std::string> argv = {"FCALL",
                                       kForget,
                                       "1",
                                       MetaKey(),
                                       identity,
                                       p->token,
                                       std::to_string(p->seq),
                                       Hex4(fp.digest >> 48),
                                       BigEndian(fp.digest, 6),
                                       std::string(id),
                                       near ? "1" : "0"};
      if (near) {
        argv.push_back(std::to_string(tables.size()));
        for (const NearTable& t : tables) {
          argv.push_back(Hex4(t.Bucket(*fp.simhash)));
          argv.push_back(BigEndian(t.Rest(*fp.simhash), t.bytes));
        }
      }
      return Command(std::move(argv), 3);
    };
    RedisReply reply;
    Status status = RunCall(*p, build, what, &reply);
    if (!status.ok()) {
      if (status.code() == StatusCode::kUnavailable) {
        KeepFailed(std::move(p), std::move(pending_key));
      } else {
        Release(std::move(p));
      }
      return status;
    }
    Release(std::move(p));
    if (reply.type != RedisReply::Type::kArray || reply.elements.size() != 2) {
      return Status::Corruption(options.address.ToString() + ": " + what + " of " + What() +
                                ": the function answered something else than [removed, pages]");
    }
    pages.store(static_cast<uint64_t>(std::max(0LL, reply.elements[1].integer)));
    return reply.elements[0].integer != 0;
  }

  // Every key the set may have, by kind (0 meta, 1 exact, 2 near, 3 copies), given its last chunk.
  std::vector<std::pair<int, std::string>> KeyNames(uint64_t chunks) const {
    std::vector<std::pair<int, std::string>> names;
    names.push_back({0, MetaKey()});
    // A bucket HHLL is field LL of the hash HH.
    for (uint64_t b = 0; b < 256; ++b) names.push_back({1, Prefix() + "x:" + Hex4(b).substr(2)});
    if (options.near) {
      for (size_t j = 0; j < tables.size(); ++j) {
        for (uint64_t b = 0; b < (uint64_t{1} << (tables[j].b - 8)); ++b) {
          names.push_back({2, Prefix() + "n:" + std::to_string(j) + ":" + Hex4(b).substr(2)});
        }
      }
    }
    for (uint64_t c = 0; c < chunks; ++c) {
      names.push_back({3, Prefix() + "c:" + std::to_string(c)});
    }
    return names;
  }

  // The set's chunk count (the meta's last chunk + 1), or 0 when it has no meta.
  Result<uint64_t> Chunks(RedisClient& client) {
    auto chunk = client.Run(Command({"HMGET", MetaKey(), "chunk", "pages"}));
    if (!chunk.ok()) return chunk.status();
    if (chunk->is_error()) return RedisErrorStatus(client.server(), "HMGET " + MetaKey(), *chunk);
    if (chunk->elements.size() != 2 || chunk->elements[0].type == RedisReply::Type::kNil) {
      return uint64_t{0};
    }
    pages.store(std::strtoull(chunk->elements[1].str.c_str(), nullptr, 10));
    return std::strtoull(chunk->elements[0].str.c_str(), nullptr, 10) + 1;
  }

  Result<RedisContentSeenSetStats> Stats() {
    auto acquired = Acquire();
    if (!acquired.ok()) return acquired.status();
    std::unique_ptr<Pooled> p = std::move(acquired).value();
    RedisClient& client = *p->client;
    auto chunks = Chunks(client);
    if (!chunks.ok()) return chunks.status();
    const auto names = KeyNames(*chunks);
    RedisContentSeenSetStats stats;
    stats.pages = pages.load();
    for (size_t begin = 0; begin < names.size(); begin += kPipelineChunk) {
      const size_t end = std::min(names.size(), begin + kPipelineChunk);
      std::vector<RedisCommand> commands;
      for (size_t i = begin; i < end; ++i) {
        commands.push_back(Command({"MEMORY", "USAGE", names[i].second, "SAMPLES", "0"}, 2));
      }
      std::vector<RedisReply> replies;
      Status status = client.Pipeline(commands, &replies);
      if (!status.ok())
        return Status(status.code(), "measuring " + What() + ": " + status.message());
      for (size_t i = begin; i < end; ++i) {
        const RedisReply& r = replies[i - begin];
        if (r.is_error()) return RedisErrorStatus(client.server(), "MEMORY USAGE of " + What(), r);
        if (r.type != RedisReply::Type::kInteger) continue;  // no such key
        const auto bytes = static_cast<uint64_t>(r.integer);
        ++stats.keys;
        switch (names[i].first) {
          case 1:
            stats.exact_bytes += bytes;
            break;
          case 2:
            stats.near_bytes += bytes;
            break;
          case 3:
            stats.copy_bytes += bytes;
            ++stats.copy_chunks;
            break;
          default:
            break;
        }
      }
    }
    Release(std::move(p));
    return stats;
  }

  Result<uint64_t> Delete() {
    auto acquired = Acquire();
    if (!acquired.ok()) return acquired.status();
    std::unique_ptr<Pooled> p = std::move(acquired).value();
    RedisClient& client = *p->client;
    auto chunks = Chunks(client);
    if (!chunks.ok()) return chunks.status();
    // The meta last, so that a Delete cut short can be run again (it finds the chunks from it).
    auto names = KeyNames(*chunks);
    std::rotate(names.begin(), names.begin() + 1, names.end());
    uint64_t deleted = 0;
    constexpr size_t kKeysPerCommand = 256;  // one slot: a multi-key UNLINK is fine on a cluster
    for (size_t begin = 0; begin < names.size(); begin += kKeysPerCommand * 64) {
      std::vector<RedisCommand> commands;
      const size_t stop = std::min(names.size(), begin + kKeysPerCommand * 64);
      for (size_t i = begin; i < stop; i += kKeysPerCommand) {
        std::vector<std::string> argv = {"UNLINK"};
        for (size_t j = i; j < std::min(stop, i + kKeysPerCommand); ++j) {
          argv.push_back(names[j].second);
        }
        commands.push_back(Command(std::move(argv)));
      }
      std::vector<RedisReply> replies;
      Status status = client.Pipeline(commands, &replies);
      if (!status.ok())
        return Status(status.code(), "deleting " + What() + ": " + status.message());
      for (const RedisReply& r : replies) {
        if (r.is_error()) return RedisErrorStatus(client.server(), "deleting " + What(), r);
        deleted += static_cast<uint64_t>(std::max(0LL, r.integer));
      }
    }
    Release(std::move(p));
    pages.store(0);
    return deleted;
  }
};

RedisContentSeenSet::RedisContentSeenSet(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RedisContentSeenSet::~RedisContentSeenSet() = default;

Result<std::unique_ptr<RedisContentSeenSet>> RedisContentSeenSet::Open(
    const RedisContentSeenSetOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  URLSIEVE_RETURN_IF_ERROR(impl->OpenSet());
  return std::unique_ptr<RedisContentSeenSet>(new RedisContentSeenSet(std::move(impl)));
}

Result<ContentVerdict> RedisContentSeenSet::Test(const ContentFingerprint& fingerprint,
                                                 const ContentCopy& page) {
  return impl_->Test(fingerprint, page);
}

Result<bool> RedisContentSeenSet::Forget(const ContentFingerprint& fingerprint,
                                         std::string_view id) {
  return impl_->Forget(fingerprint, id);
}

int RedisContentSeenSet::max_distance() const { return impl_->options.max_distance; }
uint64_t RedisContentSeenSet::size() const { return impl_->pages.load(); }
Result<RedisContentSeenSetStats> RedisContentSeenSet::Stats() { return impl_->Stats(); }
Result<uint64_t> RedisContentSeenSet::Delete() { return impl_->Delete(); }

}  // namespace urlsieve
