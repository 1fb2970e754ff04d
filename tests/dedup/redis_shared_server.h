// SharedRedisServer(): one redis-server for the Redis tests of a test process that need no server
// of their own, started on first use and killed when the process exits. ctest runs each test in a
// process of its own; when one process runs several (or --gtest_repeat), the server is emptied
// (FLUSHALL) before each test, so every test starts from an empty server. It loads the urlsieve
// server module, so that a layered set's inserts there go through URLSIEVE.INSERT (a test that
// wants the Function's sets RedisSeenSetOptions::server_module = false).
//
// Thread-safety: call it from test threads; the start is guarded by a function-local static.
#ifndef URLSIEVE_TESTS_DEDUP_REDIS_SHARED_SERVER_H_
#define URLSIEVE_TESTS_DEDUP_REDIS_SHARED_SERVER_H_

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "tests/support/redis_server.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve::testing {

class SharedRedisServerHolder {
 public:
  SharedRedisServerHolder() : server_(RedisServer::Start(dir_.path(), WithModule())) {}
  ~SharedRedisServerHolder() { server_.reset(); }  // before its directory goes
  RedisServer* server() { return server_.get(); }
  static RedisServer::Options WithModule() {
    RedisServer::Options options;
    options.urlsieve_module = true;
    return options;
  }

 private:
  ScratchDir dir_{"urlsieve_shared_redis"};
  std::unique_ptr<RedisServer> server_;
};

inline SharedRedisServerHolder& SharedRedisServerInstance() {
  static SharedRedisServerHolder holder;
  return holder;
}

// Empties the shared server before each test, if this process started it.
class FlushSharedRedisServer : public ::testing::EmptyTestEventListener {
 public:
  static bool& started() {
    static bool started = false;
    return started;
  }
  void OnTestStart(const ::testing::TestInfo&) override {
    if (!started() || SharedRedisServerInstance().server() == nullptr) return;
    auto connection =
        RedisConnection::Open(SharedRedisServerInstance().server()->address(), {2.0, 10.0});
    if (connection.ok()) (void)(*connection)->Run({{"FLUSHALL"}, -1});
  }
};

inline RedisServer* SharedRedisServer() {
  static const bool registered = [] {
    ::testing::UnitTest::GetInstance()->listeners().Append(new FlushSharedRedisServer);
    return true;
  }();
  (void)registered;
  RedisServer* server = SharedRedisServerInstance().server();
  FlushSharedRedisServer::started() = true;
  return server;
}

}  // namespace urlsieve::testing

#endif  // URLSIEVE_TESTS_DEDUP_REDIS_SHARED_SERVER_H_
