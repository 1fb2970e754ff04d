// SeenFilter over a Redis seen set (seen_filter.h, "Modes"), against a real redis-server on a
// random loopback port: the options that open it, the stored parameters, read-only opens, and the
// errors (bad combinations, a wrong password, no server, a server killed mid-stream).
#include <gtest/gtest.h>
#include <signal.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dedup/seen_filter.h"
#include "tests/support/redis_server.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

using testing::RedisServer;
using testing::ScratchDir;

class SeenFilterRedisTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = RedisServer::Start(dir_.path() / "redis", server_options_);
    ASSERT_NE(server_, nullptr);
  }

  SeenFilterOptions OverRedis(const std::string& name) const {
    SeenFilterOptions o;
    o.capacity = 10000;
    o.redis_url = server_->url();
    o.redis_name = name;
    return o;
  }
  static std::unique_ptr<SeenFilter> MustOpen(const SeenFilterOptions& o) {
    auto f = SeenFilter::Open(o);
    EXPECT_TRUE(f.ok()) << f.status().ToString();
    return f.ok() ? std::move(*f) : nullptr;
  }
  static bool Insert(SeenFilter& f, std::string_view url) {
    auto r = f.InsertIfNew(url);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() && *r;
  }

  ScratchDir dir_{"seen_filter_redis"};
  RedisServer::Options server_options_;
  std::unique_ptr<RedisServer> server_;
};

TEST_F(SeenFilterRedisTest, TwoFiltersOnOneNameAreOneSet) {
  auto a = MustOpen(OverRedis("crawl"));
  auto b = MustOpen(OverRedis("crawl"));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(Insert(*a, "http://Example.com/a/./b#top"));
  EXPECT_FALSE(Insert(*b, "HTTP://example.com:80/a/b"));  // one canonical key, one set
  EXPECT_TRUE(Insert(*b, "http://example.com/c"));
  EXPECT_FALSE(Insert(*a, "http://example.com/c"));

  std::vector<std::string_view> urls = {"http://example.com/d", "mailto:x@y",
                                        "http://example.com/a/b", "http://example.com/d#x"};
  std::vector<SeenResult> out;
  ASSERT_TRUE(a->InsertIfNewBatch(urls, &out).ok());
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].verdict, Verdict::kNew);
  EXPECT_EQ(out[1].verdict, Verdict::kInvalid);
  EXPECT_EQ(out[2].verdict, Verdict::kSeen);
  EXPECT_EQ(out[3].verdict, Verdict::kSeen);  // repeated within the batch
  auto has = b->Contains("http://example.com/d");
  ASSERT_TRUE(has.ok()) << has.status().ToString();
  EXPECT_TRUE(*has);
  auto hasnt = b->Contains("http://example.com/never");
  ASSERT_TRUE(hasnt.ok());
  EXPECT_FALSE(*hasnt);
  EXPECT_TRUE(Insert(*b, "http://example.com/never"));  // Contains recorded nothing

  // Another name is another set.
  auto other = MustOpen(OverRedis("other"));
  ASSERT_NE(other, nullptr);
  EXPECT_TRUE(Insert(*other, "http://example.com/c"));

  // Redis has every insert already: Save and Checkpoint succeed and do nothing.
  EXPECT_TRUE(a->Save().ok());
  EXPECT_TRUE(a->Checkpoint().ok());
}

TEST_F(SeenFilterRedisTest, ExactModeNeedsNoStateDirectory) {
  SeenFilterOptions o = OverRedis("exact");
  o.exact = true;
  auto f = MustOpen(o);
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(f->options().exact);
  for (int i = 0; i < 500; ++i) {
    EXPECT_TRUE(Insert(*f, "http://x.example/" + std::to_string(i))) << i;
  }
  for (int i = 0; i < 500; ++i) {
    EXPECT_FALSE(Insert(*f, "http://x.example/" + std::to_string(i))) << i;
  }
  EXPECT_TRUE(f->Stats().exact);
}

TEST_F(SeenFilterRedisTest, AnExistingSetKeepsItsStoredParametersWithANotice) {
  SeenFilterOptions created = OverRedis("stored");
  created.capacity = 5000;
  created.fp_rate = 1e-4;
  created.exact = true;
  created.canonicalize.sort_query = true;
  {
    auto f = MustOpen(created);
    ASSERT_NE(f, nullptr);
    EXPECT_TRUE(f->notices().empty());
    EXPECT_TRUE(Insert(*f, "http://s.example/?b=2&a=1"));
  }
  SeenFilterOptions asked = OverRedis("stored");
  asked.capacity = 999999;
  asked.fp_rate = 0.01;
  auto f = MustOpen(asked);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->options().capacity, 5000u);
  EXPECT_EQ(f->options().fp_rate, 1e-4);
  EXPECT_TRUE(f->options().exact);
  EXPECT_TRUE(f->options().canonicalize.sort_query);
  EXPECT_TRUE(f->canonicalizer().options().sort_query);  // keys made by the stored rules
  EXPECT_FALSE(Insert(*f, "http://s.example/?a=1&b=2"));
  ASSERT_FALSE(f->notices().empty());
  for (const SeenNotice& n : f->notices()) {
    EXPECT_EQ(n.kind, SeenNotice::Kind::kStoredParameters) << n.text;
  }
  EXPECT_EQ(f->Stats().capacity, 5000u);
}

TEST_F(SeenFilterRedisTest, ReadOnlyOpensAnExistingSetAndWritesNothing) {
  SeenFilterOptions ro = OverRedis("ro");
  ro.read_only = true;
  auto missing = SeenFilter::Open(ro);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound) << missing.status().ToString();
  {
    auto f = MustOpen(OverRedis("ro"));
    ASSERT_NE(f, nullptr);
    EXPECT_TRUE(Insert(*f, "http://r.example/1"));
  }
  auto f = MustOpen(ro);
  ASSERT_NE(f, nullptr);
  auto has = f->Contains("http://r.example/1");
  ASSERT_TRUE(has.ok()) << has.status().ToString();
  EXPECT_TRUE(*has);
  EXPECT_FALSE(f->InsertIfNew("http://r.example/2").ok());
  auto writer = MustOpen(OverRedis("ro"));
  ASSERT_NE(writer, nullptr);
  EXPECT_TRUE(Insert(*writer, "http://r.example/2"));  // the read-only open recorded nothing
}

TEST_F(SeenFilterRedisTest, BadCombinationsAreInvalidArgument) {
  struct Case {
    const char* what;
    SeenFilterOptions options;
  };
  std::vector<Case> cases;
  SeenFilterOptions o = OverRedis("combo");
  o.redis_name.clear();
  cases.push_back({"a URL without a name", o});
  o = SeenFilterOptions();
  o.redis_name = "combo";
  cases.push_back({"a name without a URL", o});
  o = OverRedis("combo");
  o.state_dir = (dir_.path() / "state").string();
  cases.push_back({"a state directory", o});
  o = OverRedis("combo");
  o.checkpointed = true;
  cases.push_back({"checkpointed", o});
  o = OverRedis("combo");
  o.rebuild_bloom = true;
  cases.push_back({"rebuild_bloom", o});
  o = OverRedis("combo");
  o.redis_url = "redis://127.0.0.1:notaport";
  cases.push_back({"a bad URL", o});
  o = OverRedis("combo");
  o.capacity = 0;
  cases.push_back({"capacity 0", o});
  for (const Case& c : cases) {
    auto f = SeenFilter::Open(c.options);
    EXPECT_EQ(f.status().code(), StatusCode::kInvalidArgument) << c.what;
    EXPECT_FALSE(f.status().message().empty()) << c.what;
  }
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "state"));  // nothing created
  // Nothing was written to Redis either: the name is still free for any parameters.
  SeenFilterOptions later = OverRedis("combo");
  later.capacity = 1234;
  auto f = MustOpen(later);
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(f->notices().empty());
  EXPECT_EQ(f->options().capacity, 1234u);
}

TEST_F(SeenFilterRedisTest, NoServerIsUnavailableNamingIt) {
  SeenFilterOptions o = OverRedis("gone");
  const std::string where = server_->address().ToString();
  server_->Kill(SIGKILL);
  auto f = SeenFilter::Open(o);
  EXPECT_EQ(f.status().code(), StatusCode::kUnavailable) << f.status().ToString();
  EXPECT_NE(f.status().message().find(where), std::string::npos) << f.status().ToString();
}

TEST_F(SeenFilterRedisTest, AKilledServerMakesCallsFailNeverSeenThenRecovers) {
  auto f = MustOpen(OverRedis("restart"));
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(Insert(*f, "http://k.example/1"));
  server_->Kill(SIGKILL);  // no AOF: the set is gone with the process
  auto down = f->InsertIfNew("http://k.example/2");
  ASSERT_FALSE(down.ok());  // an error, never "seen"
  EXPECT_NE(down.status().message().find(server_->address().ToString()), std::string::npos)
      << down.status().ToString();
  std::vector<std::string_view> urls = {"http://k.example/3"};
  std::vector<SeenResult> out;
  EXPECT_FALSE(f->InsertIfNewBatch(urls, &out).ok());
  EXPECT_FALSE(f->Contains("http://k.example/never").ok());
  // (k.example/1 may still be answered "seen" from the front cache: it was inserted.)
  ASSERT_TRUE(server_->Restart());
  // The set's metadata went with the server: a call may fail until the set is opened again (a
  // clear error), but it never answers "seen" for a key Redis does not have.
  auto reopened = MustOpen(OverRedis("restart"));
  ASSERT_NE(reopened, nullptr);
  EXPECT_TRUE(Insert(*reopened, "http://k.example/2"));
}

class SeenFilterRedisPasswordTest : public SeenFilterRedisTest {
 protected:
  SeenFilterRedisPasswordTest() { server_options_.password = "sesame"; }
};

TEST_F(SeenFilterRedisPasswordTest, TheRightPasswordOpensAWrongOneIsAClearError) {
  const int port = server_->port();
  SeenFilterOptions o = OverRedis("auth");
  o.redis_url = "redis://:sesame@127.0.0.1:" + std::to_string(port);
  auto f = MustOpen(o);
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(Insert(*f, "http://p.example/"));
  o.redis_url = "redis://:open-sesame@127.0.0.1:" + std::to_string(port);
  auto wrong = SeenFilter::Open(o);
  EXPECT_EQ(wrong.status().code(), StatusCode::kFailedPrecondition) << wrong.status().ToString();
  EXPECT_NE(wrong.status().message().find("127.0.0.1:" + std::to_string(port)), std::string::npos)
      << wrong.status().ToString();
  EXPECT_EQ(wrong.status().message().find("open-sesame"), std::string::npos);
  o.redis_url = "redis://127.0.0.1:" + std::to_string(port);  // none
  auto none = SeenFilter::Open(o);
  EXPECT_EQ(none.status().code(), StatusCode::kFailedPrecondition) << none.status().ToString();
}

}  // namespace
}  // namespace urlsieve
