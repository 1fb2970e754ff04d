#include "redis/redis_waits.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <mutex>
#include <utility>

namespace urlsieve {
namespace {

struct Outage {
  std::chrono::steady_clock::time_point since;  // when the command that timed out was sent
};

struct WaitState {
  std::mutex mu;
  RedisWaitSink sink;                     // guarded by mu
  std::map<std::string, Outage> outages;  // guarded by mu
  std::atomic<size_t> open{0};            // outages.size(), for the fast path
};

WaitState& State() {
  static WaitState* state = new WaitState();  // never destroyed: used by threads at exit
  return *state;
}

void Say(const RedisWaitSink& sink, const std::string& line) {
  if (sink) {
    sink(line);
  } else {
    const std::string text = "urlsieve: " + line + "\n";
    std::fwrite(text.data(), 1, text.size(), stderr);
  }
}

// "HH:MM:SS UTC" of `seconds_ago` before now.
std::string UtcClock(double seconds_ago) {
  const std::time_t then = std::time(nullptr) - static_cast<std::time_t>(seconds_ago);
  std::tm parts{};
  gmtime_r(&then, &parts);
  char text[32];
  std::strftime(text, sizeof(text), "%H:%M:%S UTC", &parts);
  return text;
}

}  // namespace

RedisWaitSink SetRedisWaitSink(RedisWaitSink sink) {
  WaitState& state = State();
  std::lock_guard<std::mutex> lock(state.mu);
  std::swap(state.sink, sink);
  return sink;
}

void RedisNoAnswer(const std::string& server, std::string_view what, double timeout_s) {
  WaitState& state = State();
  RedisWaitSink sink;
  {
    std::lock_guard<std::mutex> lock(state.mu);
    const auto sent = std::chrono::steady_clock::now() -
                      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                          std::chrono::duration<double>(timeout_s));
    if (!state.outages.emplace(server, Outage{sent}).second) return;  // said already
    state.open.store(state.outages.size(), std::memory_order_relaxed);
    sink = state.sink;
  }
  char seconds[32];
  std::snprintf(seconds, sizeof(seconds), "%g", timeout_s);
  Say(sink, server + ": no answer to " + std::string(what) + " within " + seconds +
                " s (waiting since " + UtcClock(timeout_s) + "); still trying");
}

void RedisAnswered(const std::string& server) {
  WaitState& state = State();
  if (state.open.load(std::memory_order_relaxed) == 0) return;
  RedisWaitSink sink;
  std::chrono::steady_clock::duration waited{};
  {
    std::lock_guard<std::mutex> lock(state.mu);
    auto it = state.outages.find(server);
    if (it == state.outages.end()) return;
    waited = std::chrono::steady_clock::now() - it->second.since;
    state.outages.erase(it);
    state.open.store(state.outages.size(), std::memory_order_relaxed);
    sink = state.sink;
  }
  char seconds[32];
  std::snprintf(seconds, sizeof(seconds), "%.1f", std::chrono::duration<double>(waited).count());
  Say(sink,
      server + ": answers again, after about " + std::string(seconds) + " s without an answer");
}

}  // namespace urlsieve
