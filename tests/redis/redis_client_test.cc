// RedisAddress, RedisConnection and RedisClient against a real redis-server on loopback.
#include "redis/redis_client.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "redis/redis_waits.h"
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

// The password off the command line: from the environment when the URL has none (the URL's
// wins), or from a file.
TEST(RedisAddressTest, APasswordComesFromTheEnvironmentOrAFile) {
  ::setenv("REDISCLI_AUTH", "from-redis-cli", 1);
  EXPECT_EQ(RedisAddress::Parse("redis://h:1")->password, "from-redis-cli");
  ::setenv(kRedisPasswordVariable, "from-urlsieve", 1);
  EXPECT_EQ(RedisAddress::Parse("redis://h:1")->password, "from-urlsieve");
  EXPECT_EQ(RedisAddress::Parse("redis://:given@h:1")->password, "given");
  ::unsetenv(kRedisPasswordVariable);
  ::unsetenv("REDISCLI_AUTH");
  EXPECT_EQ(RedisAddress::Parse("redis://h:1")->password, "");

  ScratchDir dir("redis_password_file");
  const std::string file = (dir.path() / "pass").string();
  std::ofstream(file) << "s3cret\r\nignored\n";
  EXPECT_EQ(*ReadRedisPasswordFile(file), "s3cret");
  std::ofstream(file, std::ios::trunc) << "\n";
  auto empty = ReadRedisPasswordFile(file);
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(empty.status().message().find(file), std::string::npos);
  auto missing = ReadRedisPasswordFile(file + ".none");
  EXPECT_EQ(missing.status().code(), StatusCode::kIoError);
  EXPECT_NE(missing.status().message().find(file + ".none"), std::string::npos);
}

// A server that stops answering (SIGSTOP) is told once, naming it and what was being done, however
// often the calls time out; its return once.
TEST(RedisWaitsTest, AServerThatStopsAnsweringIsToldOnceAndItsReturnOnce) {
  ScratchDir dir("redis_waits");
  auto server = RedisServer::Start(dir.path() / "redis");
  ASSERT_NE(server, nullptr);
  std::mutex mu;
  std::vector<std::string> lines;
  RedisWaitSink previous = SetRedisWaitSink([&](const std::string& line) {
    std::lock_guard<std::mutex> lock(mu);
    lines.push_back(line);
  });
  const RedisTimeouts quick{1.0, 0.3};
  ASSERT_EQ(::kill(server->pid(), SIGSTOP), 0);
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto stopped = RedisClient::Connect(server->address(), quick);
    EXPECT_EQ(stopped.status().code(), StatusCode::kUnavailable) << stopped.status().ToString();
  }
  ASSERT_EQ(::kill(server->pid(), SIGCONT), 0);
  auto back = RedisClient::Connect(server->address(), quick);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_TRUE((*back)->Run({{"PING"}, -1}).ok());
  SetRedisWaitSink(std::move(previous));
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(lines.size(), 2u) << ::testing::PrintToString(lines);
  EXPECT_EQ(lines[0].rfind(server->address().ToString() + ": no answer to running ", 0), 0u)
      << lines[0];
  EXPECT_NE(lines[0].find("within 0.3 s"), std::string::npos) << lines[0];
  EXPECT_EQ(lines[1].rfind(server->address().ToString() + ": answers again", 0), 0u) << lines[1];
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
