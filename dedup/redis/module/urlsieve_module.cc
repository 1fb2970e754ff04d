// urlsieve's Redis server module (docs/features/redis-seen-set.md, "The server module"): the
// inserts of a layered seen set done in C, on the same keys and with the same answers as the
// Functions `urlsieve_v2_insert` and `urlsieve_v2_insert_routed` (redis_seen_function.lua,
// test_and_set), so that clients with and without it share one set. They take each key's 128-bit
// hash (16 bytes) instead of its bit offsets as decimal strings: the Function's per-bit arguments
// and BITFIELD sub-commands were what made a new key cost the server ~3× a SADD.
//
//   URLSIEVE.INSERT <count key> <exact 0|1> <token> <seq> <claim log> <generation> <hashes>
//                   [<payload> per key, with a claim log]
//   URLSIEVE.INSERT_ROUTED <count key> <inbox> <exact 0|1> <token> <seq> <group> <hashes>
//                   <payload> per key (a crawl cluster's: each new key's payload is appended to
//                   the inbox stream, whose consumer group is made with it)
//
// <hashes>: per key its low then high 64 bits, little-endian. Replies as the Function does:
// [per key '1' new / '0' held, the shard's layers, its count], an earlier run's answer when the
// token and sequence number match it (idempotent retries), or an error reply (NOINIT, LOST,
// IDENTITY, ERR). Layered shards of bits only: a generational or counting shard is refused (its
// clients use the Function).
//
// Replication: the writes are propagated as effects (the layer blocks changed, by SETRANGE; the
// hashes, lists and strings through RedisModule_Call with "!"), so a replica or an AOF needs no
// module, as with the Function.
//
// Thread-safety: Redis runs module commands on its main thread, one at a time.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "dedup/redis/module/redis_module_api.h"
#include "dedup/redis/redis_seen_key_math.h"

namespace urlsieve::redis_module {
namespace {

constexpr size_t kBlockBytes = 64;
constexpr size_t kMaxPushItems = 4096;  // claim records per RPUSH

struct Layer {
  uint64_t capacity = 0;
  uint64_t blocks = 0;
  uint32_t bits = 0;
  uint64_t buckets = 0;
};

struct Hash {
  uint64_t low = 0;
  uint64_t high = 0;
};

std::string_view View(const RedisModuleString* s) {
  size_t len = 0;
  const char* p = api.StringPtrLen(s, &len);
  return {p, len};
}

bool ParseUint(std::string_view text, uint64_t* out) {
  if (text.empty() || text.size() > 19) return false;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  *out = value;
  return true;
}

// "cap,blocks,bits,buckets;..." (redis_seen_layout.h EncodeLayers).
bool ParseTable(std::string_view text, std::vector<Layer>* layers) {
  while (!text.empty()) {
    const size_t end = text.find(';');
    std::string_view entry = text.substr(0, end);
    uint64_t fields[4];
    for (int f = 0; f < 4; ++f) {
      const size_t comma = entry.find(',');
      if ((f < 3) == (comma == std::string_view::npos)) return false;
      if (!ParseUint(entry.substr(0, comma), &fields[f])) return false;
      entry = f < 3 ? entry.substr(comma + 1) : std::string_view();
    }
    if (fields[1] == 0 || fields[2] == 0 || fields[2] > kRedisMaxBitsPerLayer) return false;
    layers->push_back({fields[0], fields[1], static_cast<uint32_t>(fields[2]), fields[3]});
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
  }
  return !layers->empty();
}

std::string Reply(RedisModuleCallReply* reply) {
  if (reply == nullptr || api.CallReplyType(reply) != kReplyString) return {};
  size_t len = 0;
  const char* p = api.CallReplyStringPtr(reply, &len);
  return std::string(p, len);
}

long long Integer(RedisModuleCallReply* reply) {
  return reply != nullptr && api.CallReplyType(reply) == kReplyInteger ? api.CallReplyInteger(reply)
                                                                       : -1;
}

// One call of URLSIEVE.INSERT.
class Insert {
 public:
  Insert(RedisModuleCtx* ctx, RedisModuleString** argv, int argc, bool routed)
      : ctx_(ctx), argv_(argv), argc_(argc), routed_(routed) {}

  int Run();

 private:
  int Error(const std::string& message) { return api.ReplyWithError(ctx_, message.c_str()); }
  int Lost(const std::string& key, const std::string& what) {
    return Error("LOST urlsieve: " + key + " " + what +
                 " (deleted, evicted, overwritten, or the server restarted without it)");
  }
  std::string LayerKey(size_t l) const { return prefix_ + "bloom:" + std::to_string(l); }
  RedisModuleKey* Open(const std::string& name, int mode) {
    return api.OpenKey(ctx_, api.CreateString(ctx_, name.data(), name.size()), mode);
  }
  // An error message when layer l's string is not its full size, else empty.
  std::string CheckLayer(size_t l);
  // The layer string made at its full size (zeroed), replaced if something else is there.
  void MakeLayer(size_t l);
  // Key i's bits in `block` (kBlockBytes at its block); with `set`, sets them. Whether all were
  // set before.
  bool Probe(char* data, size_t l, size_t i, bool set);
  // The keys of `pending` that layer l does not hold (exact: confirmed in its buckets).
  std::vector<size_t> AbsentFrom(size_t l, const std::vector<size_t>& pending);
  std::string Field(size_t i) const {
    char field[kRedisKeyFieldBytes];
    RedisKeyFieldBytes(hashes_[i].low, hashes_[i].high, field);
    return std::string(field, sizeof(field));
  }
  std::string BucketKey(size_t l, size_t i) const {
    return prefix_ + "fp:" + std::to_string(l) + ":" +
           std::to_string(RedisBucketOfLow(hashes_[i].low, layers_[l].buckets));
  }
  void LogClaims(const std::vector<size_t>& fresh);

  // Appends each new key's payload to the inbox (routed).
  void Append(const std::string& inbox, bool made, const std::vector<size_t>& fresh);

  RedisModuleCtx* ctx_;
  RedisModuleString** argv_;
  int argc_;
  bool routed_;
  std::string count_key_;
  std::string prefix_;
  bool exact_ = false;
  std::vector<Hash> hashes_;
  std::vector<Layer> layers_;
  long long maybe_ = 0;
  long long fp_ = 0;
  std::string failed_;  // a confirmation that could not be asked (the call is answered an error)
};

std::string Insert::CheckLayer(size_t l) {
  const std::string key = LayerKey(l);
  RedisModuleKey* handle = Open(key, kRead);
  const int type = api.KeyType(handle);
  if (type == kKeyTypeEmpty) return "is missing";
  if (type != kKeyTypeString) return "is no longer a string";
  const size_t want = layers_[l].blocks * kBlockBytes;
  const size_t have = api.ValueLength(handle);
  if (have != want) {
    return "holds " + std::to_string(have) + " bytes, not its " + std::to_string(want);
  }
  return {};
}

void Insert::MakeLayer(size_t l) {
  const std::string key = LayerKey(l);
  RedisModuleKey* handle = Open(key, kRead | kWrite);
  if (api.KeyType(handle) != kKeyTypeEmpty) {
    api.DeleteKey(handle);
    api.Replicate(ctx_, "DEL", "c", key.c_str());
  }
  const size_t bytes = layers_[l].blocks * kBlockBytes;
  api.StringTruncate(handle, bytes);
  api.Replicate(ctx_, "SETRANGE", "clb", key.c_str(), static_cast<long long>(bytes - 1), "\0",
                size_t{1});
}

bool Insert::Probe(char* data, size_t l, size_t i, bool set) {
  const Layer& layer = layers_[l];
  unsigned char* block = reinterpret_cast<unsigned char*>(data) +
                         RedisBlockOf(hashes_[i].low, layer.blocks) * kBlockBytes;
  bool all = true;
  for (uint32_t b = 0; b < layer.bits; ++b) {
    // BITFIELD's bit order: bit 0 is the most significant bit of byte 0.
    const uint32_t position = RedisPositionOf(hashes_[i].high, b);
    const unsigned char mask = static_cast<unsigned char>(0x80u >> (position & 7));
    if ((block[position >> 3] & mask) == 0) {
      all = false;
      if (set) block[position >> 3] |= mask;
    }
  }
  return all;
}

std::vector<size_t> Insert::AbsentFrom(size_t l, const std::vector<size_t>& pending) {
  RedisModuleKey* handle = Open(LayerKey(l), kRead);
  size_t len = 0;
  char* data = api.StringDMA(handle, &len, kRead);
  std::vector<size_t> rest;
  for (size_t i : pending) {
    bool found = Probe(data, l, i, false);
    if (found && exact_) {
      ++maybe_;
      const std::string field = Field(i);
      const long long held = Integer(
          api.Call(ctx_, "HEXISTS", "cb", BucketKey(l, i).c_str(), field.data(), field.size()));
      if (held < 0) failed_ = "HEXISTS " + BucketKey(l, i);
      found = held == 1;
      if (!found) ++fp_;
    }
    if (!found) rest.push_back(i);
  }
  return rest;
}

void Insert::LogClaims(const std::vector<size_t>& fresh) {
  const std::string list = prefix_ + "claims:" + std::string(View(argv_[5]));
  const std::string generation(View(argv_[6]));
  std::vector<RedisModuleString*> items;
  for (size_t start = 0; start < fresh.size(); start += kMaxPushItems) {
    items.clear();
    for (size_t r = start; r < fresh.size() && r < start + kMaxPushItems; ++r) {
      const std::string item = generation + " " + std::string(View(argv_[8 + fresh[r]]));
      items.push_back(api.CreateString(ctx_, item.data(), item.size()));
    }
    api.Call(ctx_, "RPUSH", "!cv", list.c_str(), items.data(), items.size());
  }
}

void Insert::Append(const std::string& inbox, bool made, const std::vector<size_t>& fresh) {
  if (!made) api.Call(ctx_, "XGROUP", "!ccscc", "CREATE", inbox.c_str(), argv_[6], "0", "MKSTREAM");
  for (size_t i : fresh) api.Call(ctx_, "XADD", "!cccs", inbox.c_str(), "*", "c", argv_[8 + i]);
}

int Insert::Run() {
  if (argc_ < 8) return api.WrongArity(ctx_);
  api.AutoMemory(ctx_);
  count_key_ = std::string(View(argv_[1]));
  if (count_key_.size() < 5 || count_key_.compare(count_key_.size() - 5, 5, "count") != 0) {
    return Error("ERR urlsieve: " + count_key_ + " is not a shard's count hash");
  }
  prefix_ = count_key_.substr(0, count_key_.size() - 5);
  const int at = routed_ ? 1 : 0;  // a routed call names the inbox second
  exact_ = View(argv_[2 + at]) == "1";
  const std::string_view token = View(argv_[3 + at]);
  const std::string_view seq = View(argv_[4 + at]);
  const bool claims = !routed_ && !View(argv_[5]).empty();
  const std::string_view blob = View(argv_[7]);
  if (blob.size() % 16 != 0) return Error("ERR urlsieve: the hashes are not 16 bytes each");
  const size_t n = blob.size() / 16;
  if (static_cast<size_t>(argc_) != 8 + (claims || routed_ ? n : 0)) {
    return Error("ERR urlsieve: " + std::to_string(argc_ - 8) + " payloads for " +
                 std::to_string(n) + " keys");
  }
  hashes_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    std::memcpy(&hashes_[i].low, blob.data() + 16 * i, 8);
    std::memcpy(&hashes_[i].high, blob.data() + 16 * i + 8, 8);
  }

  // writing_call: the set's identity, then an earlier run's answer.
  if (const size_t slash = token.find('/'); slash != std::string_view::npos) {
    const std::string identity =
        Reply(api.Call(ctx_, "HGET", "cc", count_key_.c_str(), "identity"));
    if (!identity.empty() && identity != token.substr(0, slash)) {
      return Error("IDENTITY urlsieve: " + count_key_ + " now belongs to set " + identity +
                   ", not " + std::string(token.substr(0, slash)) +
                   ": the set was deleted and made again");
    }
  }
  std::string done_key;
  if (!token.empty()) {
    done_key = prefix_ + "done:" + std::string(token);
    const std::string done = Reply(api.Call(ctx_, "GET", "c", done_key.c_str()));
    const size_t bar = done.find('|');
    if (bar != std::string::npos && std::string_view(done).substr(0, bar) == seq) {
      api.ReplyWithArray(ctx_, 3);
      api.ReplyWithStringBuffer(ctx_, done.data() + bar + 1, done.size() - bar - 1);
      api.ReplyWithLongLong(ctx_, 0);
      api.ReplyWithLongLong(ctx_, 0);
      return kOk;
    }
  }

  // Checked before any write: a failing XADD would leave keys seen and not queued.
  const std::string inbox = routed_ ? std::string(View(argv_[2])) : std::string();
  bool inbox_made = false;
  if (routed_) {
    const std::string type = Reply(api.Call(ctx_, "TYPE", "c", inbox.c_str()));
    if (type != "none" && type != "stream") {
      return Error("WRONGTYPE urlsieve: " + inbox + " holds a " + type + ", not an inbox stream");
    }
    inbox_made = type == "stream";
  }

  // layered_state.
  RedisModuleKey* count_handle = Open(count_key_, kRead);
  if (api.KeyType(count_handle) == kKeyTypeEmpty) {
    return Error("NOINIT urlsieve: shard " + count_key_ + " is not initialized");
  }
  RedisModuleString *f_layers = nullptr, *f_count = nullptr, *f_table = nullptr, *f_maybe = nullptr,
                    *f_fp = nullptr, *f_unit = nullptr, *f_unmade = nullptr, *f_span = nullptr;
  if (api.HashGet(count_handle, kHashCFields, "layers", &f_layers, "count", &f_count, "table",
                  &f_table, "maybe", &f_maybe, "fp", &f_fp, "unit", &f_unit, "unmade", &f_unmade,
                  "span", &f_span, nullptr) != kOk) {
    return Error("ERR urlsieve: " + count_key_ + " is not a shard's count hash");
  }
  if (f_layers == nullptr || f_table == nullptr) {
    return Error("NOINIT urlsieve: shard " + count_key_ + " is not initialized");
  }
  if (f_span != nullptr || (f_unit != nullptr && View(f_unit) != "1")) {
    return Error("ERR urlsieve: " + count_key_ +
                 " is a generational or counting shard: its inserts are the Function's");
  }
  uint64_t nlayers = 0;
  uint64_t count = 0;
  if (!ParseTable(View(f_table), &layers_)) {
    return Lost(count_key_, "has an unreadable layer table");
  }
  if (!ParseUint(View(f_layers), &nlayers) || nlayers < 1 || nlayers > layers_.size() ||
      f_count == nullptr || !ParseUint(View(f_count), &count)) {
    return Lost(count_key_, "says " + std::string(View(f_layers)) + " layers and count " +
                                (f_count ? std::string(View(f_count)) : "nil") +
                                " (its table has " + std::to_string(layers_.size()) + " layers)");
  }
  uint64_t value = 0;
  if (f_maybe != nullptr && ParseUint(View(f_maybe), &value))
    maybe_ = static_cast<long long>(value);
  if (f_fp != nullptr && ParseUint(View(f_fp), &value)) fp_ = static_cast<long long>(value);
  const long long maybe_before = maybe_;
  const bool unmade = f_unmade != nullptr && View(f_unmade) == "1";
  for (size_t l = unmade ? 1 : 0; l < nlayers; ++l) {
    if (std::string what = CheckLayer(l); !what.empty()) return Lost(LayerKey(l), what);
  }

  // test_and_set, every layer of the table provided.
  std::vector<size_t> pending(n);
  for (size_t i = 0; i < n; ++i) pending[i] = i;
  size_t newest = nlayers - 1;
  for (size_t l = 0; l < newest; ++l) pending = AbsentFrom(l, pending);
  if (!failed_.empty()) return Error("ERR urlsieve: " + failed_ + " failed");
  std::string answer(n, '0');
  std::vector<size_t> fresh;
  bool changed = false;
  if (unmade && !pending.empty()) {
    MakeLayer(0);
    api.Call(ctx_, "HDEL", "!cc", count_key_.c_str(), "unmade");
  }
  size_t q = 0;
  while (q < pending.size()) {
    uint64_t space = layers_[newest].capacity > count ? layers_[newest].capacity - count : 0;
    if (space < 1 && newest + 1 < layers_.size()) {
      // Full: the keys left that it holds are repeats; grow only for one that is not.
      pending = AbsentFrom(newest, std::vector<size_t>(pending.begin() + q, pending.end()));
      if (!failed_.empty()) return Error("ERR urlsieve: " + failed_ + " failed");
      q = 0;
      if (pending.empty()) break;
      MakeLayer(newest + 1);
      api.Call(ctx_, "HSET", "!ccl", count_key_.c_str(), ("n" + std::to_string(newest)).c_str(),
               static_cast<long long>(count));
      ++newest;
      count = 0;
      changed = true;
      space = layers_[newest].capacity;
    }
    if (space < 1) space = pending.size();
    const size_t last = std::min<size_t>(pending.size(), q + space);
    const std::string layer_key = LayerKey(newest);
    RedisModuleKey* handle = Open(layer_key, kRead | kWrite);
    size_t len = 0;
    char* data = api.StringDMA(handle, &len, kRead | kWrite);
    for (size_t r = q; r < last; ++r) {
      const size_t i = pending[r];
      const bool was = Probe(data, newest, i, true);
      if (!was) {
        const uint64_t block = RedisBlockOf(hashes_[i].low, layers_[newest].blocks);
        api.Replicate(ctx_, "SETRANGE", "clb", layer_key.c_str(),
                      static_cast<long long>(block * kBlockBytes), data + block * kBlockBytes,
                      kBlockBytes);
      }
      bool is_new = !was;
      if (exact_) {
        if (was) ++maybe_;
        const std::string field = Field(i);
        const long long added = Integer(api.Call(
            ctx_, "HSETNX", "!cbc", BucketKey(newest, i).c_str(), field.data(), field.size(), ""));
        if (added < 0) return Error("ERR urlsieve: HSETNX " + BucketKey(newest, i) + " failed");
        is_new = added == 1;
        if (was && is_new) ++fp_;
      }
      if (is_new) {
        answer[i] = '1';
        ++count;
        fresh.push_back(i);
      }
    }
    q = last;
  }
  if (changed || !fresh.empty() || maybe_ != maybe_before) {
    api.Call(ctx_, "HSET", "!cclclclcl", count_key_.c_str(), "layers",
             static_cast<long long>(newest + 1), "count", static_cast<long long>(count), "maybe",
             maybe_, "fp", fp_);
  }
  if (claims && !fresh.empty()) LogClaims(fresh);
  if (routed_ && !fresh.empty()) Append(inbox, inbox_made, fresh);
  if (!done_key.empty()) {
    const std::string record = std::string(seq) + "|" + answer;
    api.Call(ctx_, "SET", "!cbcl", done_key.c_str(), record.data(), record.size(), "EX", 300LL);
  }
  api.ReplyWithArray(ctx_, 3);
  api.ReplyWithStringBuffer(ctx_, answer.data(), answer.size());
  api.ReplyWithLongLong(ctx_, static_cast<long long>(newest + 1));
  api.ReplyWithLongLong(ctx_, static_cast<long long>(count));
  return kOk;
}

int InsertCommand(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  return Insert(ctx, argv, argc, false).Run();
}
int InsertRoutedCommand(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  return Insert(ctx, argv, argc, true).Run();
}

}  // namespace
}  // namespace urlsieve::redis_module

extern "C" __attribute__((visibility("default"))) int RedisModule_OnLoad(RedisModuleCtx* ctx,
                                                                         RedisModuleString**, int) {
  using namespace urlsieve::redis_module;
  if (RedisModuleInit(ctx, "urlsieve", 1) != kOk) return kErr;
  if (api.CreateCommand(ctx, "urlsieve.insert", InsertCommand, "write deny-oom", 1, 1, 1) != kOk) {
    return kErr;
  }
  return api.CreateCommand(ctx, "urlsieve.insert_routed", InsertRoutedCommand, "write deny-oom", 1,
                           2, 1);
}
