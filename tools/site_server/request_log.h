// RequestLog: every request a SiteServer received, in arrival order — what crawl tests assert on
// (each URL at most once, nothing disallowed, per-host spacing, which conditional requests a
// re-crawl sent and what they cost).
//
// An entry is added when the handler starts, i.e. once the request headers have been read (its
// time is then), and completed by Answered() once the server has decided its answer (status and
// body size), before any byte of it is sent: whoever has received a response finds its entry
// complete. Optionally mirrors each entry, once answered, to a file as one tab-separated line:
//   <ms since log creation>\t<host index>\t<port>\t<method>\t<Host header>\t<raw target>
//   \t<status>\t<body bytes>\t<If-None-Match>\t<If-Modified-Since>
// ("-" for an absent header; lines come in the order of the answers, the first column is the
// arrival). bench/recrawl.sh sums the body bytes.
// Thread-safety: thread-safe.
#ifndef URLSIEVE_TOOLS_SITE_SERVER_REQUEST_LOG_H_
#define URLSIEVE_TOOLS_SITE_SERVER_REQUEST_LOG_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace urlsieve::site {

struct LoggedRequest {
  std::chrono::steady_clock::time_point time;
  int host = 0;  // index of the listening port
  int port = 0;
  std::string method;
  std::string target;       // request target exactly as sent ("/a%7Eb?x=1")
  std::string resource;     // percent-decoded path + "?" + raw query (SiteRequest::resource)
  std::string host_header;  // Host header as sent
  std::string user_agent;
  // The conditional request headers as sent (several lines joined with ", "); nullopt = absent.
  std::optional<std::string> if_none_match;
  std::optional<std::string> if_modified_since;
  int status = 0;           // the status answered (304 for a conditional hit); 0 until answered
  uint64_t body_bytes = 0;  // the body sent (its Content-Length): 0 for a 304 or a HEAD
};

class RequestLog {
 public:
  RequestLog();
  ~RequestLog();
  RequestLog(const RequestLog&) = delete;
  RequestLog& operator=(const RequestLog&) = delete;

  // Also append every later entry to `path` (created or truncated).
  Status MirrorToFile(const std::string& path);

  // Adds `request` (not answered yet); returns its id for Answered().
  uint64_t Add(LoggedRequest request);
  // Completes entry `id` with its answer and mirrors it to the file. An entry Clear()ed meanwhile
  // is neither completed nor mirrored.
  void Answered(uint64_t id, int status, uint64_t body_bytes);
  std::vector<LoggedRequest> Snapshot() const;
  // How many requests host `host` received for `resource`.
  size_t Count(int host, const std::string& resource) const;
  size_t size() const;
  // Blocks until `done(entries)` holds or `timeout` passes; returns whether it held. For tests that
  // must wait until the server has seen a request.
  bool WaitUntil(const std::function<bool(const std::vector<LoggedRequest>&)>& done,
                 std::chrono::milliseconds timeout) const;
  void Clear();

 private:
  const std::chrono::steady_clock::time_point start_;
  mutable std::mutex mu_;
  mutable std::condition_variable added_;
  std::vector<LoggedRequest> entries_;
  uint64_t cleared_ = 0;  // entries dropped by Clear(): the id of entries_[i] is cleared_ + i
  std::FILE* file_ = nullptr;
};

}  // namespace urlsieve::site

#endif  // URLSIEVE_TOOLS_SITE_SERVER_REQUEST_LOG_H_
