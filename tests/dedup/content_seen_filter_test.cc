// ContentSeenFilter (dedup/content_seen_filter.h): the embedders' facade opens a set from plain
// options, refuses bad ones before touching anything, passes verdicts through, and is an error in
// a fork() child. Its Redis side is exercised from C and Python (tests/c_api/
// c_api_content_test.c, tests/python/test_content_seen.py) against a real redis-server.
#include "dedup/content_seen_filter.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>

namespace urlsieve {
namespace {

std::unique_ptr<ContentSeenFilter> OpenLocal(int max_distance = 3, bool near = true) {
  ContentSeenFilterOptions o;
  o.max_distance = max_distance;
  o.near = near;
  auto opened = ContentSeenFilter::Open(o);
  EXPECT_TRUE(opened.ok()) << opened.status().ToString();
  return opened.ok() ? std::move(opened).value() : nullptr;
}

ContentFingerprint Fp(uint64_t digest, std::optional<uint64_t> simhash = std::nullopt) {
  ContentFingerprint f;
  f.digest = digest;
  f.simhash = simhash;
  return f;
}

TEST(ContentSeenFilterTest, BadOptionsAreRefused) {
  ContentSeenFilterOptions o;
  o.max_distance = 8;
  auto r = ContentSeenFilter::Open(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("max_distance"), std::string::npos);
  o.max_distance = 3;
  o.redis_name = "pages";  // a name without a server
  r = ContentSeenFilter::Open(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  o.redis_url = "http://not-redis/";
  r = ContentSeenFilter::Open(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
}

TEST(ContentSeenFilterTest, LocalVerdictsPassThrough) {
  auto f = OpenLocal();
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(f->shared());
  auto v = f->Test(Fp(1, 0xF0), {"http://a.example/", "one"});
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->kind, ContentVerdict::Kind::kFirst);
  v = f->Test(Fp(1), {"http://b.example/", ""});
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->kind, ContentVerdict::Kind::kExact);
  EXPECT_EQ(v->first.id, "http://a.example/");
  EXPECT_EQ(v->first.data, "one");
  v = f->Test(Fp(2, 0xF1), {"http://c.example/", ""});
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->kind, ContentVerdict::Kind::kNear);
  EXPECT_EQ(v->distance, 1);
  EXPECT_EQ(f->size(), 2u);
  auto forgotten = f->Forget(Fp(1, 0xF0), "http://a.example/");
  ASSERT_TRUE(forgotten.ok());
  EXPECT_TRUE(*forgotten);
  EXPECT_EQ(f->size(), 1u);
  v = f->Test(Fp(3), {"", ""});  // an empty id
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kInvalidArgument);
}

TEST(ContentSeenFilterTest, NearOffIgnoresSimhashes) {
  auto f = OpenLocal(3, false);
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(f->Test(Fp(1, 7), {"http://a.example/", ""}).ok());
  auto v = f->Test(Fp(2, 7), {"http://b.example/", ""});
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->kind, ContentVerdict::Kind::kFirst);
}

TEST(ContentSeenFilterTest, AForkChildGetsAnErrorAndTheParentKeepsItsSet) {
  auto f = OpenLocal();
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(f->Test(Fp(1), {"http://a.example/", ""}).ok());
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto v = f->Test(Fp(2), {"http://b.example/", ""});
    bool refused = !v.ok() && v.status().code() == StatusCode::kFailedPrecondition &&
                   v.status().message().find("fork()") != std::string::npos;
    f.reset();  // drops the parent's set unclosed
    _exit(refused ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  auto v = f->Test(Fp(1), {"http://c.example/", ""});
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->kind, ContentVerdict::Kind::kExact);
}

}  // namespace
}  // namespace urlsieve
