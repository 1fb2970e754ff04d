// RedisSeenSet learns time and forgetting, against a real redis-server on loopback: generational
// sets (revisit_after) under a fake clock and under the server's TIME, generation keys that expire
// by themselves, Forget in exact and deletable (counting) sets across two processes, a plain set's
// refusal, saturated counters, stored parameters, and a Redis that goes away during a Forget
// (docs/features/redis-seen-set.md, "The Redis seen set").
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "dedup/redis/redis_seen_layout.h"
#include "dedup/redis_seen_set.h"
#include "dedup/seen_filter.h"
#include "redis/redis_client.h"
#include "tests/dedup/redis_contract_set.h"
#include "tests/dedup/redis_shared_server.h"
#include "tests/dedup/seen_set_contract.h"
#include "tests/support/redis_server.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve::testing {
namespace {

using std::chrono::seconds;

// The contract over a generational set (server time, a day: nothing ages out during a test) and a
// deletable one, with and without the front cache.
Result<std::unique_ptr<StateSeenSet>> OpenTimed(StateDir* dir, bool saves, const StateParameters& p,
                                                uint64_t cache, bool generational, bool deletable) {
  RedisServer* server = SharedRedisServer();
  if (server == nullptr) return Status::Unavailable("no redis-server");
  StateParameters q = p;
  if (generational) {
    // One generation of the whole capacity: the contract fills a set to a third of it at once.
    q.revisit_after_s = 86400;
    q.generations = 1;
  }
  q.deletable = deletable;
  return OpenContractRedisSet(server->address(), dir, saves, q, cache);
}

INSTANTIATE_TEST_SUITE_P(
    RedisTimed, SeenSetContractTest,
    ::testing::Values(SeenSetImplementation{"RedisGenerational", true, false,
                                            [](StateDir* d, bool s, const StateParameters& p) {
                                              return OpenTimed(d, s, p, 0, true, false);
                                            },
                                            true},
                      SeenSetImplementation{"RedisGenerationalCached", true, false,
                                            [](StateDir* d, bool s, const StateParameters& p) {
                                              return OpenTimed(d, s, p, 1 << 16, true, false);
                                            },
                                            true},
                      SeenSetImplementation{"RedisGenerationalExact", true, true,
                                            [](StateDir* d, bool s, const StateParameters& p) {
                                              return OpenTimed(d, s, p, 0, true, false);
                                            },
                                            true},
                      SeenSetImplementation{"RedisDeletable", true, false,
                                            [](StateDir* d, bool s, const StateParameters& p) {
                                              return OpenTimed(d, s, p, 0, false, true);
                                            },
                                            true},
                      SeenSetImplementation{"RedisDeletableCached", true, false,
                                            [](StateDir* d, bool s, const StateParameters& p) {
                                              return OpenTimed(d, s, p, 1 << 16, false, true);
                                            },
                                            true}),
    SeenSetImplementationName);

std::string Url(int i) {
  return "http://h" + std::to_string(i % 97) + ".example/p/" + std::to_string(i);
}

struct TimedOptions {
  uint64_t revisit_after_s = 0;
  uint32_t generations = 4;
  bool exact = false;
  bool deletable = false;
  uint64_t capacity = 10000;
  uint64_t front_cache_keys = 0;
  const Clock* clock = nullptr;
};

RedisSeenSetOptions Options(const RedisAddress& address, const std::string& name,
                            const TimedOptions& t) {
  RedisSeenSetOptions options;
  options.address = address;
  options.name = name;
  options.requested.capacity = t.capacity;
  options.requested.fp_rate = 1e-3;
  options.requested.exact = t.exact;
  options.requested.revisit_after_s = t.revisit_after_s;
  options.requested.generations = t.generations;
  options.requested.deletable = t.deletable;
  options.front_cache_keys = t.front_cache_keys;
  options.clock = t.clock;
  return options;
}

std::unique_ptr<RedisSeenSet> OpenSet(const RedisSeenSetOptions& options,
                                      std::vector<SeenNotice>* notices = nullptr) {
  auto set = RedisSeenSet::Open(options, notices);
  EXPECT_TRUE(set.ok()) << set.status().ToString();
  return set.ok() ? std::move(set).value() : nullptr;
}

// Inserts Url(from..to-1) in one batch: which were told new.
std::vector<bool> Insert(SeenSet& set, int from, int to) {
  std::vector<std::string> urls;
  for (int i = from; i < to; ++i) urls.push_back(Url(i));
  std::vector<std::string_view> keys(urls.begin(), urls.end());
  std::vector<KeyHash> hashes;
  for (const std::string& url : urls) hashes.push_back(SeenSet::Hash(url));
  std::unique_ptr<bool[]> is_new(new bool[urls.size()]);
  Status status = set.InsertHashedIfNew(keys, hashes, {is_new.get(), urls.size()});
  EXPECT_TRUE(status.ok()) << status.ToString();
  return std::vector<bool>(is_new.get(), is_new.get() + urls.size());
}

// Inserts Url(i) for each of `ids`, in that order, in one batch: which were told new.
std::vector<bool> InsertIds(SeenSet& set, std::span<const int> ids) {
  std::vector<std::string> urls;
  for (int i : ids) urls.push_back(Url(i));
  std::vector<std::string_view> keys(urls.begin(), urls.end());
  std::vector<uint8_t> is_new;
  Status status = set.InsertKeysIfNew(keys, &is_new);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return std::vector<bool>(is_new.begin(), is_new.end());
}

int CountTrue(const std::vector<bool>& v) {
  int n = 0;
  for (bool b : v) n += b ? 1 : 0;
  return n;
}

Result<std::vector<bool>> Forget(SeenSet& set, const std::vector<int>& ids) {
  std::vector<std::string> urls;
  for (int i : ids) urls.push_back(Url(i));
  std::vector<std::string_view> keys(urls.begin(), urls.end());
  std::vector<KeyHash> hashes;
  for (const std::string& url : urls) hashes.push_back(SeenSet::Hash(url));
  std::unique_ptr<bool[]> forgotten(new bool[urls.size()]);
  Status status = set.ForgetHashed(keys, hashes, {forgotten.get(), urls.size()});
  if (!status.ok()) return status;
  return std::vector<bool>(forgotten.get(), forgotten.get() + urls.size());
}

// Keys of the server matching `pattern` (SCAN).
std::vector<std::string> KeysMatching(const RedisAddress& address, const std::string& pattern) {
  std::vector<std::string> keys;
  auto client = RedisClient::Connect(address, RedisTimeouts());
  if (!client.ok()) return keys;
  std::string cursor = "0";
  do {
    auto reply = (*client)->Run({{"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"}, -1});
    if (!reply.ok() || reply->elements.size() != 2) break;
    cursor = reply->elements[0].str;
    for (const RedisReply& key : reply->elements[1].elements) keys.push_back(key.str);
  } while (cursor != "0");
  return keys;
}

class RedisSeenSetTimeTest : public ::testing::TestWithParam<uint64_t> {
 protected:
  void SetUp() override {
    server_ = SharedRedisServer();
    if (server_ == nullptr) GTEST_SKIP() << "no redis-server";
  }
  RedisServer* server_ = nullptr;
};

// Front cache off and on: the cache must not answer "seen" once a key's generation aged out.
INSTANTIATE_TEST_SUITE_P(Cache, RedisSeenSetTimeTest, ::testing::Values(0, 1 << 16),
                         [](const ::testing::TestParamInfo<uint64_t>& param) {
                           return param.param ? "Cached" : "Uncached";
                         });

// revisit_after T = 4000 s in G = 4 generations of L = 1000 s; the clock starts on a generation
// boundary. A key told new at t is seen until between t + T and t + T + L, then new again; a
// sighting does not refresh it.
TEST_P(RedisSeenSetTimeTest, KeysAreNewAgainAfterRevisitAfterUnderAFakeClock) {
  ManualClock clock;
  TimedOptions t;
  t.revisit_after_s = 4000;
  t.generations = 4;
  t.front_cache_keys = GetParam();
  t.clock = &clock;
  auto set = OpenSet(Options(server_->address(), "fake_clock", t));
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(CountTrue(Insert(*set, 0, 300)), 300);  // at t0: generation c
  EXPECT_EQ(CountTrue(Insert(*set, 0, 300)), 0);
  clock.Advance(seconds(2500));
  EXPECT_EQ(CountTrue(Insert(*set, 0, 300)), 0);      // seen: nothing written
  EXPECT_EQ(CountTrue(Insert(*set, 300, 600)), 300);  // at t0 + 2500: generation c + 2
  clock.Advance(seconds(4999 - 2500));                // t0 + 4999: c still live
  EXPECT_EQ(CountTrue(Insert(*set, 0, 300)), 0);
  EXPECT_EQ(CountTrue(Insert(*set, 300, 600)), 0);
  clock.Advance(seconds(1));  // t0 + 5000: c aged out
  EXPECT_EQ(CountTrue(Insert(*set, 0, 300)), 300);
  EXPECT_EQ(CountTrue(Insert(*set, 300, 600)), 0);  // c + 2 lives until t0 + 7000
  clock.Advance(seconds(1999));
  EXPECT_EQ(CountTrue(Insert(*set, 300, 600)), 0);
  auto contained = set->Contains(Url(300));
  ASSERT_TRUE(contained.ok());
  EXPECT_TRUE(*contained);
  clock.Advance(seconds(1));  // t0 + 7000
  contained = set->Contains(Url(300));
  ASSERT_TRUE(contained.ok());
  EXPECT_FALSE(*contained);
  EXPECT_EQ(CountTrue(Insert(*set, 300, 600)), 300);
  EXPECT_EQ(CountTrue(Insert(*set, 0, 300)), 0);  // told new again at t0 + 5000
}

// Two clients with their own (fake) clocks and caches: one's keys age out for the other too, and
// exactly one is told new when both insert again.
TEST_P(RedisSeenSetTimeTest, TwoClientsAgreeOnAge) {
  ManualClock clock;
  TimedOptions t;
  t.revisit_after_s = 60;
  t.generations = 3;
  t.front_cache_keys = GetParam();
  t.clock = &clock;
  auto a = OpenSet(Options(server_->address(), "two_clients", t));
  auto b = OpenSet(Options(server_->address(), "two_clients", t));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(CountTrue(Insert(*a, 0, 100)), 100);
  EXPECT_EQ(CountTrue(Insert(*b, 0, 100)), 0);
  clock.Advance(seconds(80));  // past T + L
  EXPECT_EQ(CountTrue(Insert(*b, 0, 50)), 50);
  EXPECT_EQ(CountTrue(Insert(*a, 0, 100)), 50);
}

// The server's TIME: a short revisit_after (2 s in 2 generations); polls with deadlines, no sleep
// decides anything. The generation keys expire by themselves and the keys are new again.
TEST(RedisSeenSetServerTimeTest, GenerationKeysExpireByThemselvesAndKeysComeBackNew) {
  RedisServer* server = SharedRedisServer();
  if (server == nullptr) GTEST_SKIP() << "no redis-server";
  TimedOptions t;
  t.revisit_after_s = 2;
  t.generations = 2;
  t.front_cache_keys = 1 << 10;
  auto set = OpenSet(Options(server->address(), "server_time", t));
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(CountTrue(Insert(*set, 0, 200)), 200);
  const std::string pattern = "urlsieve:{server_time:*}:gen:*";
  auto keys = KeysMatching(server->address(), pattern);
  ASSERT_FALSE(keys.empty());
  auto client = RedisClient::Connect(server->address(), RedisTimeouts());
  ASSERT_TRUE(client.ok());
  for (const std::string& key : keys) {
    auto ttl = (*client)->Run({{"PTTL", key}, 1});
    ASSERT_TRUE(ttl.ok());
    EXPECT_GT(ttl->integer, 0) << key;     // expires by itself
    EXPECT_LE(ttl->integer, 3000) << key;  // at the end of its liveness: (G + 1) · L at most
  }
  // Poll: every key becomes new again within T + L; the first poll that finds Url(0) gone
  // inserts the batch, so each key's second "new" is counted once.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool again = false;
  while (!again && std::chrono::steady_clock::now() < deadline) {
    auto contained = set->Contains(Url(0));
    ASSERT_TRUE(contained.ok());
    if (!*contained) {
      again = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(again) << "Url(0) still seen after 60 s with revisit_after 2 s";
  // Keys of one generation age out together: all 200 (inserted in one call) are new again.
  EXPECT_EQ(CountTrue(Insert(*set, 0, 200)), 200);
  // The first generation's key is gone from Redis (polled: expiry is lazy or by the cycle).
  bool gone = false;
  while (!gone && std::chrono::steady_clock::now() < deadline) {
    gone = true;
    for (const std::string& key : keys) {
      auto exists = (*client)->Run({{"EXISTS", key}, 1});
      ASSERT_TRUE(exists.ok());
      if (exists->integer != 0) gone = false;
    }
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(gone) << "a generation key outlived its expiry by a minute";
}

// Forgetting, with a reader in another process: its front cache must not answer a key the other
// process forgot.
struct ForgetCase {
  const char* name;
  bool exact;
  bool deletable;
  uint64_t revisit_after_s;
};

class RedisSeenSetForgetTest : public ::testing::TestWithParam<ForgetCase> {};

INSTANTIATE_TEST_SUITE_P(Modes, RedisSeenSetForgetTest,
                         ::testing::Values(ForgetCase{"Exact", true, false, 0},
                                           ForgetCase{"Deletable", false, true, 0},
                                           ForgetCase{"ExactGenerational", true, false, 3600},
                                           ForgetCase{"DeletableGenerational", false, true, 3600}),
                         [](const ::testing::TestParamInfo<ForgetCase>& param) {
                           return std::string(param.param.name);
                         });

TEST_P(RedisSeenSetForgetTest, AForgottenKeyIsNewAgainInAnotherProcess) {
  RedisServer* server = SharedRedisServer();
  if (server == nullptr) GTEST_SKIP() << "no redis-server";
  TimedOptions t;
  t.exact = GetParam().exact;
  t.deletable = GetParam().deletable;
  t.revisit_after_s = GetParam().revisit_after_s;
  t.front_cache_keys = 1 << 16;
  const std::string name = std::string("forget_") + GetParam().name;
  auto set = OpenSet(Options(server->address(), name, t));
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(CountTrue(Insert(*set, 0, 1000)), 1000);
  EXPECT_EQ(CountTrue(Insert(*set, 0, 1000)), 0);  // now in this process's front cache

  // Another process forgets the even keys (and one never inserted) and exits 0 when it was told
  // so for exactly those.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto other = RedisSeenSet::Open(Options(server->address(), name, t), nullptr);
    if (!other.ok()) ::_exit(10);
    std::vector<int> ids;
    for (int i = 0; i < 1000; i += 2) ids.push_back(i);
    ids.push_back(5000);
    auto forgotten = Forget(**other, ids);
    if (!forgotten.ok()) ::_exit(11);
    for (size_t j = 0; j + 1 < ids.size(); ++j) {
      if (!(*forgotten)[j]) ::_exit(12);
    }
    if (forgotten->back()) ::_exit(13);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << "the forgetting process failed (see its exit code)";

  const std::vector<bool> again = Insert(*set, 0, 1000);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(again[i], i % 2 == 0) << "key " << i;
  }
  EXPECT_EQ(CountTrue(Insert(*set, 0, 1000)), 0);
  // A key twice in one call is forgotten once; forgetting again what is not there forgets
  // nothing.
  auto twice = Forget(*set, {1, 1});
  ASSERT_TRUE(twice.ok()) << twice.status().ToString();
  EXPECT_TRUE((*twice)[0] != (*twice)[1]) << "forgotten twice in one call";
  EXPECT_EQ(CountTrue(Insert(*set, 0, 4)), 1);  // key 1
  std::vector<int> ids = {5000, 5001};
  auto forgotten = Forget(*set, ids);
  ASSERT_TRUE(forgotten.ok()) << forgotten.status().ToString();
  EXPECT_EQ(CountTrue(*forgotten), 0);
}

TEST(RedisSeenSetForgetRefusalTest, APlainSetRefusesNamingTheOptionsAndChangesNothing) {
  RedisServer* server = SharedRedisServer();
  if (server == nullptr) GTEST_SKIP() << "no redis-server";
  for (uint64_t revisit : {uint64_t{0}, uint64_t{3600}}) {
    TimedOptions t;
    t.revisit_after_s = revisit;
    auto set = OpenSet(Options(server->address(), "plain" + std::to_string(revisit), t));
    ASSERT_NE(set, nullptr);
    EXPECT_EQ(CountTrue(Insert(*set, 0, 10)), 10);
    auto forgotten = Forget(*set, {0, 1});
    ASSERT_FALSE(forgotten.ok());
    EXPECT_EQ(forgotten.status().code(), StatusCode::kUnsupported);
    EXPECT_NE(forgotten.status().message().find("--exact"), std::string::npos);
    EXPECT_NE(forgotten.status().message().find("--deletable"), std::string::npos);
    EXPECT_NE(forgotten.status().message().find("plain" + std::to_string(revisit)),
              std::string::npos);
    EXPECT_EQ(CountTrue(Insert(*set, 0, 10)), 0);
  }
}

// Saturation, forced: keys chosen so that all share one counter of a one-block counting filter (a
// generational set with G = 1, which does not grow). Once 15 of them are in, the counter is
// saturated; forgetting all but three leaves it at 15 and the three seen (no false negative).
TEST(RedisSeenSetForgetSaturationTest, SaturatedCountersGiveNoFalseNegative) {
  RedisServer* server = SharedRedisServer();
  if (server == nullptr) GTEST_SKIP() << "no redis-server";
  TimedOptions t;
  t.deletable = true;
  t.revisit_after_s = 86400;
  t.generations = 1;
  t.capacity = 20;
  auto set = OpenSet(Options(server->address(), "saturated", t));
  ASSERT_NE(set, nullptr);
  auto client = RedisClient::Connect(server->address(), RedisTimeouts());
  ASSERT_TRUE(client.ok());
  auto table = (*client)->Run({{"HGET", "urlsieve:{saturated}:meta", "layers"}, 1});
  ASSERT_TRUE(table.ok());
  auto layers = RedisSeenLayout::DecodeLayers(table->str);
  ASSERT_TRUE(layers.ok());
  const RedisBloomLayer layer = (*layers)[0];
  ASSERT_EQ(layer.blocks, 1u) << "the test needs a one-block filter";
  // The counter every chosen key sets: the first position of Url(0).
  const uint64_t target = RedisBitOffset(SeenSet::Hash(Url(0)), layer, 0);
  std::vector<int> chosen;
  for (int i = 0; chosen.size() < 24 && i < 1000000; ++i) {
    const KeyHash hash = SeenSet::Hash(Url(i));
    bool hits = false;
    for (uint32_t b = 0; b < layer.bits; ++b) hits |= RedisBitOffset(hash, layer, b) == target;
    if (hits) chosen.push_back(i);
  }
  ASSERT_EQ(chosen.size(), 24u);
  std::vector<int> inserted;
  for (int i : chosen) {
    if (Insert(*set, i, i + 1)[0]) inserted.push_back(i);
  }
  ASSERT_GE(inserted.size(), 18u) << "too many false positives among the chosen keys";
  const std::string gen_key = [&] {
    auto keys = KeysMatching(server->address(), "urlsieve:{saturated:*}:gen:*");
    return keys.size() == 1 ? keys[0] : std::string();
  }();
  ASSERT_FALSE(gen_key.empty());
  auto counter = [&] {
    auto value =
        (*client)->Run({{"BITFIELD_RO", gen_key, "GET", "u4", std::to_string(target * 4)}, 1});
    EXPECT_TRUE(value.ok());
    return value.ok() && !value->elements.empty() ? value->elements[0].integer : -1;
  };
  EXPECT_EQ(counter(), 15);  // more than 15 keys hold it: saturated
  std::vector<int> forget(inserted.begin() + 3, inserted.end());
  auto forgotten = Forget(*set, forget);
  ASSERT_TRUE(forgotten.ok()) << forgotten.status().ToString();
  EXPECT_EQ(CountTrue(*forgotten), static_cast<int>(forget.size()));
  EXPECT_EQ(counter(), 15) << "a saturated counter was decremented";
  for (int j = 0; j < 3; ++j) {
    auto contained = set->Contains(Url(inserted[j]));
    ASSERT_TRUE(contained.ok());
    EXPECT_TRUE(*contained) << "a false negative for key " << inserted[j];
    EXPECT_FALSE(Insert(*set, inserted[j], inserted[j] + 1)[0]);
  }
}

// Below saturation, a counting set forgets exactly: forgetting every key it holds leaves it empty
// (every key new again), and no key forgotten shows up as seen.
TEST(RedisSeenSetForgetSaturationTest, ForgettingEveryKeyEmptiesACountingSet) {
  RedisServer* server = SharedRedisServer();
  if (server == nullptr) GTEST_SKIP() << "no redis-server";
  TimedOptions t;
  t.deletable = true;
  t.capacity = 100000;
  auto set = OpenSet(Options(server->address(), "empties", t));
  ASSERT_NE(set, nullptr);
  ASSERT_EQ(CountTrue(Insert(*set, 0, 2000)), 2000);
  std::vector<int> ids;
  for (int i = 0; i < 2000; ++i) ids.push_back(i);
  auto forgotten = Forget(*set, ids);
  ASSERT_TRUE(forgotten.ok()) << forgotten.status().ToString();
  EXPECT_EQ(CountTrue(*forgotten), 2000);
  auto client = RedisClient::Connect(server->address(), RedisTimeouts());
  ASSERT_TRUE(client.ok());
  for (const std::string& key : KeysMatching(server->address(), "urlsieve:{empties:*}:bloom:*")) {
    auto bits = (*client)->Run({{"BITCOUNT", key}, 1});
    ASSERT_TRUE(bits.ok());
    EXPECT_EQ(bits->integer, 0) << key;
  }
  EXPECT_EQ(CountTrue(Insert(*set, 0, 2000)), 2000);
}

// A counting set that grows past its capacity: its new layers count too, and each key is
// forgotten from the layer it went into. Only keys told new are forgotten: a key told "seen" by a
// false positive was never inserted, and forgetting it would take other keys' counts.
TEST(RedisSeenSetForgetSaturationTest, ACountingSetGrowsAndForgetsAcrossItsLayers) {
  RedisServer* server = SharedRedisServer();
  if (server == nullptr) GTEST_SKIP() << "no redis-server";
  TimedOptions t;
  t.deletable = true;
  t.capacity = 1000;
  auto set = OpenSet(Options(server->address(), "grows", t));
  ASSERT_NE(set, nullptr);
  std::vector<int> inserted;
  for (int from = 0; from < 8000; from += 500) {
    const std::vector<bool> fresh = Insert(*set, from, from + 500);
    for (int j = 0; j < 500; ++j) {
      if (fresh[j]) inserted.push_back(from + j);
    }
  }
  EXPECT_GE(inserted.size(), 7980u);  // a few false positives at ε = 1e-3
  EXPECT_GE(set->Stats().bloom_layers, 3u);
  auto forgotten = Forget(*set, inserted);
  ASSERT_TRUE(forgotten.ok()) << forgotten.status().ToString();
  EXPECT_EQ(CountTrue(*forgotten), static_cast<int>(inserted.size()));
  // Every key is new again, but for the Bloom filter's false positives: the counts stay, so the
  // keys go into the newest layers now (ε there and in the layers after it: ~1e-3 in all).
  int again = 0;
  for (size_t from = 0; from < inserted.size(); from += 500) {
    const size_t count = std::min<size_t>(500, inserted.size() - from);
    again += CountTrue(InsertIds(*set, std::span<const int>(inserted).subspan(from, count)));
  }
  EXPECT_GE(again, static_cast<int>(inserted.size()) - 20);
}

// Clients whose clocks disagree (a clock given by the client): one behind the other still sees
// the keys the other put into a generation it has not reached, so no key is new twice.
TEST(RedisSeenSetStoredTimeTest, AClientBehindSeesTheKeysOfAClientAhead) {
  RedisServer* server = SharedRedisServer();
  if (server == nullptr) GTEST_SKIP() << "no redis-server";
  ManualClock ahead;
  ManualClock behind;
  ahead.Advance(seconds(25));  // a generation (L = 20 s) ahead
  TimedOptions t;
  t.revisit_after_s = 60;
  t.generations = 3;
  t.clock = &ahead;
  auto a = OpenSet(Options(server->address(), "skew", t));
  t.clock = &behind;
  auto b = OpenSet(Options(server->address(), "skew", t));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(CountTrue(Insert(*a, 0, 100)), 100);
  EXPECT_EQ(CountTrue(Insert(*b, 0, 200)), 100);
  EXPECT_EQ(CountTrue(Insert(*a, 0, 200)), 0);
}

TEST(RedisSeenSetStoredTimeTest, AReopenKeepsTheStoredTimeAndCounting) {
  RedisServer* server = SharedRedisServer();
  if (server == nullptr) GTEST_SKIP() << "no redis-server";
  TimedOptions t;
  t.revisit_after_s = 7 * 86400;
  t.generations = 6;
  t.deletable = true;
  {
    auto set = OpenSet(Options(server->address(), "stored", t));
    ASSERT_NE(set, nullptr);
    EXPECT_EQ(set->parameters().revisit_after_s, 7u * 86400);
    EXPECT_EQ(set->parameters().generations, 6u);
    EXPECT_TRUE(set->parameters().deletable);
    EXPECT_EQ(CountTrue(Insert(*set, 0, 10)), 10);
  }
  TimedOptions other;  // asks for a plain set
  std::vector<SeenNotice> notices;
  auto set = OpenSet(Options(server->address(), "stored", other), &notices);
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(set->parameters().revisit_after_s, 7u * 86400);
  EXPECT_EQ(set->parameters().generations, 6u);
  EXPECT_TRUE(set->parameters().deletable);
  EXPECT_EQ(CountTrue(Insert(*set, 0, 10)), 0);
  bool said_time = false;
  bool said_deletable = false;
  for (const SeenNotice& notice : notices) {
    said_time |= notice.text.find("revisit_after 604800") != std::string::npos;
    said_deletable |= notice.text.find("staying deletable") != std::string::npos;
  }
  EXPECT_TRUE(said_time);
  EXPECT_TRUE(said_deletable);
  // A plain set asked for time and counting stays plain, and says so.
  {
    auto plain = OpenSet(Options(server->address(), "stored_plain", other));
    ASSERT_NE(plain, nullptr);
  }
  notices.clear();
  auto plain = OpenSet(Options(server->address(), "stored_plain", t), &notices);
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(plain->parameters().revisit_after_s, 0u);
  EXPECT_FALSE(plain->parameters().deletable);
  EXPECT_EQ(notices.size(), 2u);
  // The meta of a set with time is version 4, of one without 3 (layers made by the first insert;
  // an earlier build refuses both).
  auto client = RedisClient::Connect(server->address(), RedisTimeouts());
  ASSERT_TRUE(client.ok());
  auto version = (*client)->Run({{"HGET", "urlsieve:{stored}:meta", "version"}, 1});
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(version->str, "4");
  version = (*client)->Run({{"HGET", "urlsieve:{stored_plain}:meta", "version"}, 1});
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(version->str, "3");
}

TEST(RedisSeenSetStoredTimeTest, RoutedModeRefusesTimeAndCounting) {
  RedisServer* server = SharedRedisServer();
  if (server == nullptr) GTEST_SKIP() << "no redis-server";
  for (bool deletable : {false, true}) {
    TimedOptions t;
    t.revisit_after_s = deletable ? 0 : 3600;
    t.deletable = deletable;
    RedisSeenSetOptions options = Options(server->address(), "routed_time", t);
    options.routed = true;
    options.shards = 16;
    auto set = RedisSeenSet::Open(options, nullptr);
    ASSERT_FALSE(set.ok());
    EXPECT_EQ(set.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(set.status().message().find("routed"), std::string::npos);
  }
  EXPECT_TRUE(KeysMatching(server->address(), "urlsieve:{routed_time*").empty());
}

// The SeenFilter path: revisit_after, generations, deletable and the clock reach the Redis set.
TEST(RedisSeenSetStoredTimeTest, SeenFilterPassesTimeAndCountingToRedis) {
  RedisServer* server = SharedRedisServer();
  if (server == nullptr) GTEST_SKIP() << "no redis-server";
  ManualClock clock;
  SeenFilterOptions options;
  options.capacity = 1000;
  options.fp_rate = 1e-3;
  options.redis_url = server->url();
  options.redis_name = "filter_time";
  options.revisit_after = seconds(100);
  options.generations = 2;
  options.deletable = true;
  options.clock = &clock;
  auto filter = SeenFilter::Open(options);
  ASSERT_TRUE(filter.ok()) << filter.status().ToString();
  auto first = (*filter)->InsertIfNew("http://a.example/x");
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(*first);
  clock.Advance(seconds(99));
  auto second = (*filter)->InsertIfNew("http://a.example/x");
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(*second);
  clock.Advance(seconds(51));  // 150 s: T + L
  auto third = (*filter)->InsertIfNew("http://a.example/x");
  ASSERT_TRUE(third.ok());
  EXPECT_TRUE(*third);
}

// A Redis that goes away: Forget is an error (never "forgotten"), and the same call after the
// server is back forgets.
TEST(RedisSeenSetForgetFaultTest, ARedisThatGoesAwayMakesForgetAnError) {
  ScratchDir scratch("redis_forget_fault");
  RedisServerOptions server_options;
  server_options.append_only = true;
  auto server = RedisServer::Start(scratch.path() / "redis", server_options);
  ASSERT_NE(server, nullptr);
  TimedOptions t;
  t.deletable = true;
  t.front_cache_keys = 1 << 10;
  RedisSeenSetOptions options = Options(server->address(), "goes_away", t);
  options.timeouts.connect_s = 0.5;
  options.timeouts.command_s = 2;
  auto set = OpenSet(options);
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(CountTrue(Insert(*set, 0, 100)), 100);
  server->Kill();
  std::vector<int> ids = {0, 1, 2};
  std::vector<std::string> urls;
  for (int i : ids) urls.push_back(Url(i));
  std::vector<std::string_view> keys(urls.begin(), urls.end());
  std::vector<KeyHash> hashes;
  for (const std::string& url : urls) hashes.push_back(SeenSet::Hash(url));
  bool forgotten[3] = {true, true, true};
  Status status = set->ForgetHashed(keys, hashes, {forgotten, 3});
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kUnavailable) << status.ToString();
  EXPECT_NE(status.message().find(server->address().ToString()), std::string::npos)
      << status.ToString();
  for (bool f : forgotten) EXPECT_FALSE(f);
  ASSERT_TRUE(server->Restart());
  status = set->ForgetHashed(keys, hashes, {forgotten, 3});
  ASSERT_TRUE(status.ok()) << status.ToString();
  for (bool f : forgotten) EXPECT_TRUE(f);
  EXPECT_EQ(CountTrue(Insert(*set, 0, 100)), 3);
}

}  // namespace
}  // namespace urlsieve::testing
