// RedisServer: a real Debian redis-server for one test, on 127.0.0.1 at a free port, its files in a
// directory of the test's. Kill() and Restart() (same port, same files) let a test take Redis away
// mid-stream. The destructor kills it.
//
// A free port is found by binding port 0 and closing it; another process may take it before
// redis-server binds, so a server that exits at start is tried again on another port. A cluster
// node also needs its bus port, port + 10000, free (so its port is at most 55535).
// The server dies with the test process (PR_SET_PDEATHSIG), even when the test crashes.
//
// Thread-safety: a test fixture; one thread.
#ifndef URLSIEVE_TESTS_SUPPORT_REDIS_SERVER_H_
#define URLSIEVE_TESTS_SUPPORT_REDIS_SERVER_H_

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "redis/redis_address.h"
#include "redis/redis_connection.h"

namespace urlsieve::testing {

struct RedisServerOptions {
  bool append_only = false;      // appendonly yes, appendfsync always: survives kill -9
  std::string password;          // requirepass
  bool cluster = false;          // cluster-enabled yes (a test assembles the nodes into a cluster)
  bool urlsieve_module = false;  // --loadmodule the urlsieve module (URLSIEVE_REDIS_MODULE)
  std::vector<std::string> extra_args;
};

class RedisServer {
 public:
  using Options = RedisServerOptions;

  // Starts a server whose files live in `dir` (created). Null, with a test failure, when it cannot.
  static std::unique_ptr<RedisServer> Start(const std::filesystem::path& dir,
                                            Options options = Options()) {
    std::unique_ptr<RedisServer> server(new RedisServer(dir, std::move(options)));
    std::filesystem::create_directories(dir);
    for (int attempt = 0; attempt < 8; ++attempt) {
      server->port_ = server->options_.cluster ? FreeClusterPort() : FreePort();
      if (server->Launch()) return server;
    }
    ADD_FAILURE() << "could not start redis-server in " << dir << " (is it installed? "
                  << "scripts/setup.sh installs redis-server)";
    return nullptr;
  }

  ~RedisServer() { Kill(SIGKILL); }

  int port() const { return port_; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  RedisAddress address() const { return *RedisAddress::Parse(url()); }
  pid_t pid() const { return pid_; }

  // Sends `signal` and waits for the process to end.
  void Kill(int signal = SIGKILL) {
    if (pid_ <= 0) return;
    ::kill(pid_, signal);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }
  // Starts it again on the same port with the same files (its AOF or RDB, if any).
  bool Restart() {
    Kill(SIGKILL);
    for (int attempt = 0; attempt < 50; ++attempt) {  // the port may linger for a moment
      if (Launch()) return true;
    }
    ADD_FAILURE() << "redis-server did not restart on port " << port_;
    return false;
  }

 private:
  RedisServer(std::filesystem::path dir, Options options)
      : dir_(std::move(dir)), options_(std::move(options)) {}

  static int FreePort() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof(addr);
    int port = 0;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      port = ntohs(addr.sin_port);
    }
    ::close(fd);
    return port;
  }

  // A free port whose cluster bus port (port + 10000) is free too.
  static int FreeClusterPort() {
    for (int attempt = 0; attempt < 200; ++attempt) {
      int port = FreePort();
      if (port <= 0 || port > 65535 - 10000) continue;
      int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      addr.sin_port = htons(static_cast<uint16_t>(port + 10000));
      bool bus_free = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
      ::close(fd);
      if (bus_free) return port;
    }
    return 0;
  }

  // Starts redis-server and waits until it answers PING or exits.
  bool Launch() {
    std::vector<std::string> args = {"redis-server",
                                     "--port",
                                     std::to_string(port_),
                                     "--bind",
                                     "127.0.0.1",
                                     "--dir",
                                     dir_.string(),
                                     "--save",
                                     "",
                                     "--daemonize",
                                     "no",
                                     "--logfile",
                                     (dir_ / "redis.log").string(),
                                     "--protected-mode",
                                     "no"};
    if (options_.append_only) {
      args.insert(args.end(), {"--appendonly", "yes", "--appendfsync", "always"});
    }
    if (!options_.password.empty()) args.insert(args.end(), {"--requirepass", options_.password});
    if (options_.cluster) {
      args.insert(args.end(), {"--cluster-enabled", "yes", "--cluster-config-file",
                               "nodes-" + std::to_string(port_) + ".conf"});
    }
#ifdef URLSIEVE_REDIS_MODULE
    if (options_.urlsieve_module) args.insert(args.end(), {"--loadmodule", URLSIEVE_REDIS_MODULE});
#endif
    args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the test
      std::vector<char*> argv;
      for (std::string& arg : args) argv.push_back(arg.data());
      argv.push_back(nullptr);
      ::execvp("redis-server", argv.data());
      ::_exit(127);
    }
    RedisAddress address = *RedisAddress::Parse(url());
    address.password = options_.password;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {  // exited: the port was taken, or worse
        pid_ = -1;
        return false;
      }
      auto connection = RedisConnection::Open(address, {0.5, 2.0});
      if (connection.ok()) {
        auto pong = (*connection)->Run({{"PING"}, -1});
        if (pong.ok() && !pong->is_error()) return true;  // not LOADING
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // polling for readiness
    }
    Kill(SIGKILL);
    return false;
  }

  std::filesystem::path dir_;
  Options options_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace urlsieve::testing

#endif  // URLSIEVE_TESTS_SUPPORT_REDIS_SERVER_H_
