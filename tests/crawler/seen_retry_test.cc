#include "crawler/crawl/seen_retry.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace urlsieve {
namespace {

struct Said {
  std::mutex mu;
  std::vector<std::string> lines;
  void operator()(const std::string& line) {
    std::lock_guard<std::mutex> lock(mu);
    lines.push_back(line);
  }
};

SeenRetryOptions Fast() {
  SeenRetryOptions options;
  options.first_wait = std::chrono::milliseconds(1);
  options.max_wait = std::chrono::milliseconds(4);
  options.what = "the seen set 's' at redis://127.0.0.1:1/0";
  return options;
}

TEST(SeenRetryTest, RetriesTheSameCallUntilItAnswersAndSaysSoOncePerOutage) {
  Said said;
  SeenRetry retry(Fast(), [&](const std::string& line) { said(line); });
  int calls = 0;
  Status status = retry.Run([&] {
    return ++calls < 6 ? Status::Unavailable("redis://127.0.0.1:1/0: Connection refused")
                       : Status::Ok();
  });
  EXPECT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(calls, 6);
  ASSERT_EQ(said.lines.size(), 2u);
  EXPECT_NE(said.lines[0].find("the seen set 's' at redis://127.0.0.1:1/0 does not answer"),
            std::string::npos)
      << said.lines[0];
  EXPECT_NE(said.lines[0].find("Connection refused"), std::string::npos) << said.lines[0];
  EXPECT_NE(said.lines[0].find("retrying"), std::string::npos) << said.lines[0];
  EXPECT_NE(said.lines[1].find("answers again"), std::string::npos) << said.lines[1];
  EXPECT_FALSE(retry.in_outage());

  // A second outage is told again; a call that answers at once says nothing.
  calls = 0;
  EXPECT_TRUE(
      retry.Run([&] { return ++calls < 2 ? Status::Unavailable("x") : Status::Ok(); }).ok());
  EXPECT_TRUE(retry.Run([] { return Status::Ok(); }).ok());
  EXPECT_EQ(said.lines.size(), 4u);
}

TEST(SeenRetryTest, TellsHowLongAfterTheFirstFailureTheCallAnswered) {
  SeenRetry retry(Fast(), [](const std::string&) {});
  std::chrono::steady_clock::duration retried_for = std::chrono::hours(1);
  EXPECT_TRUE(retry.Run([] { return Status::Ok(); }, &retried_for).ok());
  EXPECT_EQ(retried_for, std::chrono::steady_clock::duration::zero());
  int calls = 0;
  EXPECT_TRUE(
      retry.Run([&] { return ++calls < 3 ? Status::Unavailable("x") : Status::Ok(); }, &retried_for)
          .ok());
  EXPECT_GT(retried_for, std::chrono::steady_clock::duration::zero());
  EXPECT_LT(retried_for, kSeenReplayWindow);
}

TEST(SeenRetryTest, ANonTransientErrorIsReturnedAtOnce) {
  Said said;
  SeenRetry retry(Fast(), [&](const std::string& line) { said(line); });
  int calls = 0;
  Status status = retry.Run([&] {
    ++calls;
    return Status::FailedPrecondition("WRONGTYPE");
  });
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(said.lines.empty());
}

TEST(SeenRetryTest, StopEndsTheWaitsOfEveryThread) {
  SeenRetryOptions options = Fast();
  options.first_wait = std::chrono::hours(1);  // only a stop can end the wait
  options.max_wait = std::chrono::hours(1);
  Said said;
  SeenRetry retry(options, [&](const std::string& line) { said(line); });
  std::atomic<int> failing{0};
  std::vector<std::thread> threads;
  std::vector<Status> results(3);
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      results[t] = retry.Run([&] {
        ++failing;
        return Status::Unavailable("down");
      });
    });
  }
  while (failing.load() < 3) std::this_thread::yield();
  retry.Stop();
  for (std::thread& t : threads) t.join();
  for (const Status& s : results) EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_TRUE(retry.stopped());
  EXPECT_EQ(said.lines.size(), 1u);  // three threads, one outage
}

TEST(SeenRetryTest, AStopFlagPolledEndsTheWait) {
  std::atomic<bool> flag{false};
  SeenRetryOptions options = Fast();
  options.first_wait = std::chrono::hours(1);
  options.max_wait = std::chrono::hours(1);
  options.stop_requested = [&] { return flag.load(); };
  SeenRetry retry(options, [](const std::string&) {});
  std::atomic<bool> called{false};
  std::thread t([&] {
    Status s = retry.Run([&] {
      called = true;
      return Status::Unavailable("down");
    });
    EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  });
  while (!called.load()) std::this_thread::yield();
  flag = true;
  t.join();
  EXPECT_TRUE(retry.stopped());
}

}  // namespace
}  // namespace urlsieve
