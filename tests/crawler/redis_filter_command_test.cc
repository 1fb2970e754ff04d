// `urlsieve filter --redis` and `urlsieve stats --redis`: the real binary against a real
// redis-server on a random loopback port (tests/support/redis_server.h).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "dedup/redis_seen_set.h"
#include "redis/redis_client.h"
#include "tests/support/child_process.h"
#include "tests/support/file_contents.h"
#include "tests/support/jsonl.h"
#include "tests/support/redis_server.h"
#include "tests/support/scratch_dir.h"

extern char** environ;

namespace urlsieve {
namespace {

namespace fs = std::filesystem;
using testing::Lines;
using testing::ReadFile;
using testing::RedisServer;
using testing::ScratchDir;

// The distinct lines of `input`, at their first occurrence (what one filter run prints, when
// every line is its own canonical key).
std::string FirstOccurrences(const std::string& input) {
  std::set<std::string> seen;
  std::string out;
  for (const std::string& line : Lines(input)) {
    if (!line.empty() && seen.insert(line).second) out += line + "\n";
  }
  return out;
}

using CommandRun = testing::ProgramRun;

// A `urlsieve` child with stdin, stdout and stderr on files dir/<tag>.in, .out, .err (or stdin on
// a pipe the test writes, when `input` is null).
class Child : public testing::ChildProcess {
 public:
  Child(const fs::path& dir, const std::string& tag, const std::vector<std::string>& args,
        const std::string* input)
      : ChildProcess(Argv(args), Streams(dir, tag, input)) {}

  void Write(const std::string& text) { WriteStdin(text); }
  CommandRun Wait() { return Finish(); }

 private:
  static std::vector<std::string> Argv(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {URLSIEVE_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
  static testing::ChildStreams Streams(const fs::path& dir, const std::string& tag,
                                       const std::string* input) {
    testing::ChildStreams streams{dir / (tag + ".in"), dir / (tag + ".out"), dir / (tag + ".err"),
                                  /*stdin_pipe=*/input == nullptr};
    if (input != nullptr) testing::WriteFile(streams.in, *input);
    return streams;
  }
};

class RedisFilterCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::make_unique<ScratchDir>("redis_filter");
    RedisServer::Options options;
    options.append_only = true;
    server_ = RedisServer::Start(dir_->path() / "redis", options);
    ASSERT_NE(server_, nullptr);
  }

  CommandRun Urlsieve(const std::vector<std::string>& args, const std::string& input = "") {
    Child child(dir_->path(), "run" + std::to_string(runs_++), args, &input);
    return child.Wait();
  }
  CommandRun Filter(const std::string& name, const std::string& input,
                    std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"filter", "--redis", server_->url(), "--name", name};
    args.insert(args.end(), extra.begin(), extra.end());
    return Urlsieve(args, input);
  }
  // Redis keys whose name mentions `name` (the set's keys all do).
  long long KeysOf(const std::string& name, const std::string& password = "") {
    RedisAddress address = server_->address();
    address.password = password;
    auto client = RedisClient::Connect(address);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    if (!client.ok()) return -1;
    auto reply = (*client)->Run({{"KEYS", "*" + name + "*"}});
    EXPECT_TRUE(reply.ok());
    return reply.ok() ? static_cast<long long>(reply->elements.size()) : -1;
  }

  std::unique_ptr<ScratchDir> dir_;
  std::unique_ptr<RedisServer> server_;
  int runs_ = 0;
};

TEST_F(RedisFilterCommandTest, PrintsNewUrlsOnceAcrossRunsOnTheSharedSet) {
  const std::string input =
      "http://b.example/1\n"
      "HTTP://A.EXAMPLE/x\n"
      "http://b.example/1\n"
      "http://a.example/x#frag\n"
      "http://c.example:80/\n"
      "http://a.example/y";
  for (const char* mode : {"", "--exact"}) {
    SCOPED_TRACE(mode);
    const std::string name = std::string("runs") + (*mode ? "-exact" : "");
    std::vector<std::string> extra;
    if (*mode) extra.push_back(mode);
    CommandRun first = Filter(name, input, extra);
    EXPECT_EQ(first.exit_code, 0) << first.err;
    EXPECT_EQ(first.out,
              "http://b.example/1\nHTTP://A.EXAMPLE/x\nhttp://c.example:80/\nhttp://a.example/y\n");
    CommandRun second = Filter(name, input, extra);
    EXPECT_EQ(second.exit_code, 0) << second.err;
    EXPECT_EQ(second.out, "");
    CommandRun third = Filter(name, input + "\nhttp://d.example/\n", extra);
    EXPECT_EQ(third.out, "http://d.example/\n");
    CommandRun canonical =
        Filter(name, "http://E.example/./a\nhttp://e.example/a\n", {"--canonical"});
    EXPECT_EQ(canonical.out, "http://e.example/a\n");
  }
}

TEST_F(RedisFilterCommandTest, TwoConcurrentProcessesPrintEachUrlOnceInTotal) {
  // Overlapping streams: every URL of 0..N-1 appears in both, in different orders, repeated.
  constexpr int kUrls = 20000;
  std::string a, b;
  for (int i = 0; i < kUrls; ++i) {
    a += "http://h" + std::to_string(i % 7) + ".example/" + std::to_string(i) + "\n";
    const int j = kUrls - 1 - i;
    b += "http://h" + std::to_string(j % 7) + ".example/" + std::to_string(j) + "\n";
    if (i % 3 == 0) a += "http://h0.example/" + std::to_string(i / 2) + "\n";
  }
  const std::vector<std::string> args = {"filter", "--redis", server_->url(), "--name",
                                         "both",   "--batch", "256"};
  Child first(dir_->path(), "a", args, &a);
  Child second(dir_->path(), "b", args, &b);
  CommandRun ra = first.Wait();
  CommandRun rb = second.Wait();
  ASSERT_EQ(ra.exit_code, 0) << ra.err;
  ASSERT_EQ(rb.exit_code, 0) << rb.err;
  std::map<std::string, int> printed;
  for (const std::string& line : Lines(ra.out)) ++printed[line];
  for (const std::string& line : Lines(rb.out)) ++printed[line];
  std::set<std::string> distinct;
  for (const std::string& line : Lines(a + b)) distinct.insert(line);
  EXPECT_EQ(printed.size(), distinct.size());
  for (const auto& [url, count] : printed) {
    EXPECT_EQ(count, 1) << url;
    EXPECT_TRUE(distinct.count(url)) << url;
  }
  // Each output is in its input's order: a subsequence of first occurrences.
  EXPECT_GT(Lines(ra.out).size(), 0u);
  EXPECT_GT(Lines(rb.out).size(), 0u);
}

TEST_F(RedisFilterCommandTest, RetriesThroughARedisRestartAndPrintsEachUrlOnce) {
  // Three chunks of 2000 URLs, each overlapping the one before; Redis is killed after the first
  // chunk has reached it and restarted (its AOF kept every write) once the filter says it is
  // retrying the second.
  auto chunk = [](int from, int to) {
    std::string text;
    for (int i = from; i < to; ++i) {
      text += "http://r" + std::to_string(i % 5) + ".example/" + std::to_string(i) + "\n";
    }
    return text;
  };
  const std::string one = chunk(0, 2000);
  const std::string two = chunk(1500, 3500);
  const std::string three = chunk(3000, 5000);
  Child filter(
      dir_->path(), "retry",
      {"filter", "--redis", server_->url(), "--name", "restart", "--exact", "--batch", "100"},
      nullptr);
  filter.Write(one);

  // The known point: the set holds the first chunk's last URL.
  RedisSeenSetOptions watch;
  watch.address = server_->address();
  watch.name = "restart";
  watch.front_cache_keys = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool reached = false;
  while (!reached && std::chrono::steady_clock::now() < deadline) {
    watch.read_only = true;
    std::vector<SeenNotice> notices;
    auto set = RedisSeenSet::Open(watch, &notices);
    if (set.ok()) {
      auto there = (*set)->Contains("http://r4.example/1999");
      reached = there.ok() && *there;
    }
    if (!reached) std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a poll
  }
  ASSERT_TRUE(reached) << filter.err();

  server_->Kill(SIGKILL);
  filter.Write(two);
  const auto said = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (filter.err().find("retrying") == std::string::npos &&
         std::chrono::steady_clock::now() < said) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a poll of its stderr
  }
  ASSERT_NE(filter.err().find("retrying"), std::string::npos) << filter.err();
  ASSERT_TRUE(server_->Restart());
  filter.Write(three);
  filter.CloseStdin();
  CommandRun run = filter.Wait();
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, FirstOccurrences(one + two + three));
  // Once per outage, naming the server, and once when it is back.
  const std::vector<std::string> err = Lines(run.err);
  int retrying = 0, back = 0;
  for (const std::string& line : err) {
    retrying += line.find("retrying") != std::string::npos;
    back += line.find("answers again") != std::string::npos;
    if (line.find("retrying") != std::string::npos) {
      EXPECT_NE(line.find(server_->address().ToString()), std::string::npos) << line;
    }
  }
  EXPECT_EQ(retrying, 1) << run.err;
  EXPECT_EQ(back, 1) << run.err;
}

TEST_F(RedisFilterCommandTest, StatsPrintsTheSetAndItsRedisMemory) {
  std::string input;
  for (int i = 0; i < 1000; ++i) input += "http://s.example/" + std::to_string(i) + "\n";
  ASSERT_EQ(Filter("stats", input + input).exit_code, 0);

  CommandRun json = Urlsieve({"stats", "--redis", server_->url(), "--name", "stats", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["name"], "stats");
  EXPECT_EQ(j["redis"], server_->address().ToString());
  EXPECT_EQ(j["mode"], "bloom");
  EXPECT_EQ(j["keys"], 1000);
  const uint64_t bytes = j["redis_memory"]["bytes"];
  EXPECT_GT(bytes, 0u);
  EXPECT_GT(j["redis_memory"]["keys"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["redis_memory"]["masters"], 1);
  EXPECT_DOUBLE_EQ(j["redis_memory"]["bytes_per_url"].get<double>(), bytes / 1000.0);

  CommandRun text = Urlsieve({"stats", "--redis", server_->url(), "--name", "stats"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("name              stats\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("keys              1000\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("redis memory      " + std::to_string(bytes) + " bytes"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("bytes per URL"), std::string::npos) << text.out;

  // Read-only: a set that is not there is an error, and stays not there.
  CommandRun missing = Urlsieve({"stats", "--redis", server_->url(), "--name", "nothing"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("nothing"), std::string::npos) << missing.err;
  EXPECT_EQ(KeysOf("nothing"), 0);
}

// A shard deleted under the set (issue 24's probe printed all 20,000 seen URLs again): exit 1
// naming the server and the key, nothing printed; --accept-loss makes it again and says so.
TEST_F(RedisFilterCommandTest, ASetThatLostDataStopsTheFilterAndPrintsNothing) {
  std::string input;
  for (int i = 0; i < 2000; ++i) input += "http://lost.example/" + std::to_string(i) + "\n";
  ASSERT_EQ(Filter("lost", input).exit_code, 0);
  const std::string key = "urlsieve:{lost:0}:bloom:0";
  {
    auto client = RedisClient::Connect(server_->address());
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    ASSERT_TRUE((*client)->Run({{"DEL", key}}).ok());
  }
  CommandRun refused = Filter("lost", input + "http://lost.example/new\n");
  EXPECT_EQ(refused.exit_code, 1) << refused.err;
  EXPECT_EQ(refused.out, "");
  EXPECT_NE(refused.err.find(key), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find(server_->address().ToString()), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--accept-loss"), std::string::npos) << refused.err;
  for (const char* twice : {"corruption: corruption", "precondition: failed precondition"}) {
    EXPECT_EQ(refused.err.find(twice), std::string::npos) << refused.err;
  }
  CommandRun repaired = Filter("lost", input, {"--accept-loss"});
  EXPECT_EQ(repaired.exit_code, 0) << repaired.err;
  EXPECT_NE(repaired.err.find(key), std::string::npos) << repaired.err;
  // The URLs of the lost shard (one of the set's shards) are new again, as the note says.
  const std::vector<std::string> again = Lines(repaired.out);
  EXPECT_GT(again.size(), 0u);
  EXPECT_LT(again.size(), 2000u);
  for (const std::string& line : again) {
    EXPECT_NE(input.find(line + "\n"), std::string::npos) << line;
  }
  EXPECT_EQ(Filter("lost", input).out, "");
}

// The password from a file or the environment, never on the command line, and never echoed.
TEST_F(RedisFilterCommandTest, ThePasswordComesFromAFileOrTheEnvironment) {
  RedisServer::Options options;
  options.password = "sesame-4242";
  auto guarded = RedisServer::Start(dir_->path() / "guarded", options);
  ASSERT_NE(guarded, nullptr);
  const fs::path file = dir_->path() / "redis.pass";
  testing::WriteFile(file, "sesame-4242\n");
  const std::string url = guarded->url();  // no password in it
  std::vector<CommandRun> runs;
  runs.push_back(
      Urlsieve({"filter", "--redis", url, "--name", "pw", "--redis-password-file", file.string()},
               "http://a.example/\n"));
  runs.push_back(
      Urlsieve({"stats", "--redis", url, "--name", "pw", "--redis-password-file", file.string()}));
  for (const char* variable : {"URLSIEVE_REDIS_PASSWORD", "REDISCLI_AUTH"}) {
    ::setenv(variable, "sesame-4242", 1);
    runs.push_back(Urlsieve({"filter", "--redis", url, "--name", "pw"},
                            std::string("http://") + variable + ".example/\n"));
    ::unsetenv(variable);
  }
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs[0].out, "http://a.example/\n");
  EXPECT_EQ(runs[2].out, "http://URLSIEVE_REDIS_PASSWORD.example/\n");
  EXPECT_EQ(runs[3].out, "http://REDISCLI_AUTH.example/\n");
  for (const CommandRun& run : runs) {
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(run.out.find("sesame"), std::string::npos) << run.out;
    EXPECT_EQ(run.err.find("sesame"), std::string::npos) << run.err;
  }
  CommandRun missing = Urlsieve({"filter", "--redis", url, "--name", "pw", "--redis-password-file",
                                 (dir_->path() / "nope").string()});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find((dir_->path() / "nope").string()), std::string::npos) << missing.err;
  CommandRun none = Urlsieve({"filter", "--redis", url, "--name", "pw"}, "http://b.example/\n");
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_EQ(none.out, "");
}

TEST_F(RedisFilterCommandTest, BadFlagsWrongPasswordAndNonRedisPeersAreClearErrors) {
  CommandRun both = Urlsieve({"filter", "--redis", server_->url(), "--name", "x", "--state",
                              (dir_->path() / "state").string()});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("excludes"), std::string::npos) << both.err;
  CommandRun no_name = Urlsieve({"filter", "--redis", server_->url()});
  EXPECT_EQ(no_name.exit_code, 2);
  EXPECT_NE(no_name.err.find("--name"), std::string::npos) << no_name.err;
  CommandRun neither = Urlsieve({"filter"});
  EXPECT_EQ(neither.exit_code, 2);
  EXPECT_NE(neither.err.find("--state or --redis"), std::string::npos) << neither.err;
  CommandRun bad_url =
      Urlsieve({"filter", "--redis", "redis://127.0.0.1:0", "--name", "x"}, "http://a.example/\n");
  EXPECT_EQ(bad_url.exit_code, 1);
  EXPECT_EQ(bad_url.out, "");

  // A server with a password, asked with the wrong one.
  RedisServer::Options options;
  options.password = "right";
  auto guarded = RedisServer::Start(dir_->path() / "guarded", options);
  ASSERT_NE(guarded, nullptr);
  const std::string wrong = "redis://:wrong@127.0.0.1:" + std::to_string(guarded->port());
  CommandRun refused =
      Urlsieve({"filter", "--redis", wrong, "--name", "pw"}, "http://a.example/\n");
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_EQ(refused.out, "");
  EXPECT_NE(refused.err.find("127.0.0.1:" + std::to_string(guarded->port())), std::string::npos)
      << refused.err;
  EXPECT_EQ(refused.err.find("wrong"), std::string::npos)
      << "the password is shown: " << refused.err;
  CommandRun stats = Urlsieve({"stats", "--redis", wrong, "--name", "pw"});
  EXPECT_EQ(stats.exit_code, 1);
  {
    auto client = RedisClient::Connect([&] {
      RedisAddress a = guarded->address();
      a.password = "right";
      return a;
    }());
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    auto size = (*client)->Run({{"DBSIZE"}});
    ASSERT_TRUE(size.ok());
    EXPECT_EQ(size->integer, 0);  // nothing written
  }

  // A peer that is not Redis: a listening socket that answers nothing Redis would.
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  ASSERT_EQ(::listen(listener, 8), 0);
  std::atomic<bool> serving{true};
  std::thread peer([&] {
    // Answers every connection with an HTTP response and closes it.
    while (serving) {
      int fd = ::accept(listener, nullptr, nullptr);
      if (fd < 0) break;
      const char response[] = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
      (void)!::write(fd, response, sizeof(response) - 1);
      ::close(fd);
    }
  });
  const std::string not_redis = "redis://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  CommandRun http =
      Urlsieve({"filter", "--redis", not_redis, "--name", "x"}, "http://a.example/\n");
  EXPECT_NE(http.exit_code, 0);
  EXPECT_EQ(http.out, "");
  EXPECT_NE(http.err.find("127.0.0.1:" + std::to_string(ntohs(addr.sin_port))), std::string::npos)
      << http.err;
  serving = false;
  ::shutdown(listener, SHUT_RDWR);
  ::close(listener);
  peer.join();
}

}  // namespace
}  // namespace urlsieve
