// SharedRedisServer(): one redis-server for the Redis tests of a test process that need no server
// of their own, started on first use and killed when the process exits. (ctest runs each test in
// a process of its own, so tests never share it across processes; inside one process, tests use
// distinct set names.)
//
// Thread-safety: call it from test threads; the start is guarded by a function-local static.
#ifndef URLSIEVE_TESTS_DEDUP_REDIS_SHARED_SERVER_H_
#define URLSIEVE_TESTS_DEDUP_REDIS_SHARED_SERVER_H_

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "tests/support/redis_server.h"

namespace urlsieve::testing {

class SharedRedisServerHolder {
 public:
  SharedRedisServerHolder()
      : dir_(std::filesystem::temp_directory_path() /
             ("urlsieve_shared_redis_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(dir_);
    server_ = RedisServer::Start(dir_);
  }
  ~SharedRedisServerHolder() {
    server_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  RedisServer* server() { return server_.get(); }

 private:
  std::filesystem::path dir_;
  std::unique_ptr<RedisServer> server_;
};

inline RedisServer* SharedRedisServer() {
  static SharedRedisServerHolder holder;
  return holder.server();
}

}  // namespace urlsieve::testing

#endif  // URLSIEVE_TESTS_DEDUP_REDIS_SHARED_SERVER_H_
