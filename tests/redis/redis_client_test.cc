// RedisAddress, RedisConnection and RedisClient against a real redis-server on loopback.
#include "redis/redis_client.h"

#include <gtest/gtest.h>

#include "tests/support/redis_server.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

using testing::RedisServer;
using testing::ScratchDir;

TEST(RedisAddressTest, ParsesTheForms) {
  auto a = RedisAddress::Parse("redis://:secret@127.0.0.1:7000/3");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 7000);
  EXPECT_EQ(a->password, "secret");
  EXPECT_EQ(a->db, 3);
  EXPECT_EQ(a->ToString(), "redis://127.0.0.1:7000/3");
  auto b = RedisAddress::Parse("redis://alice:pw@localhost");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->user, "alice");
  EXPECT_EQ(b->port, 6379);
  auto v6 = RedisAddress::Parse("redis://[::1]:7001");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 7001);
}

TEST(RedisAddressTest, RejectsBadOnesWithoutShowingThePassword) {
  for (const char* url : {"http://x:1", "redis://", "redis://h:0", "redis://h:70000",
                          "redis://h:1/x", "redis://h:p", "redis://[::1"}) {
    auto a = RedisAddress::Parse(url);
    EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument) << url;
  }
  auto secret = RedisAddress::Parse("redis://:hunter2@h:bad");
  EXPECT_EQ(secret.status().message().find("hunter2"), std::string::npos)
      << secret.status().message();
}

TEST(RedisClientTest, PipelinesAndReconnectsAfterARestart) {
  ScratchDir dir("redis_client");
  RedisServer::Options options;
  options.append_only = true;
  auto server = RedisServer::Start(dir.path() / "redis", options);
  ASSERT_NE(server, nullptr);
  auto client = RedisClient::Connect(server->address());
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  EXPECT_FALSE((*client)->is_cluster());
  std::vector<RedisCommand> commands = {{{"SET", "k", "v"}}, {{"GET", "k"}}, {{"INCR", "k"}}};
  std::vector<RedisReply> replies;
  ASSERT_TRUE((*client)->Pipeline(commands, &replies).ok());
  ASSERT_EQ(replies.size(), 3u);
  EXPECT_EQ(replies[1].str, "v");
  EXPECT_TRUE(replies[2].is_error());
  Status wrong = RedisErrorStatus((*client)->server(), "INCR k", replies[2]);
  EXPECT_EQ(wrong.code(), StatusCode::kFailedPrecondition);

  server->Kill(SIGKILL);
  auto down = (*client)->Run({{"GET", "k"}});
  EXPECT_EQ(down.status().code(), StatusCode::kUnavailable) << down.status().ToString();
  EXPECT_NE(down.status().message().find(server->address().ToString()), std::string::npos);
  ASSERT_TRUE(server->Restart());
  auto back = (*client)->Run({{"GET", "k"}});
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->str, "v");  // appendfsync always kept it across kill -9
}

TEST(RedisClientTest, WrongPasswordAndNonRedisPeerAreClearErrors) {
  ScratchDir dir("redis_client_auth");
  RedisServer::Options options;
  options.password = "right";
  auto server = RedisServer::Start(dir.path() / "redis", options);
  ASSERT_NE(server, nullptr);
  RedisAddress address = server->address();
  address.password = "wrong";
  auto refused = RedisClient::Connect(address);
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition)
      << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("authenticating"), std::string::npos);
  EXPECT_EQ(refused.status().message().find("wrong"), std::string::npos);

  // Nothing listens on a port just freed: unavailable, naming the address.
  RedisAddress nobody = server->address();
  server->Kill();
  auto closed = RedisClient::Connect(nobody, {0.5, 0.5});
  EXPECT_EQ(closed.status().code(), StatusCode::kUnavailable) << closed.status().ToString();
  EXPECT_NE(closed.status().message().find(nobody.ToString()), std::string::npos);
}

}  // namespace
}  // namespace urlsieve
