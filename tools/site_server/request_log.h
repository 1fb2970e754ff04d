// RequestLog: every request a SiteServer received, in arrival order — what crawl tests assert on
// (each URL at most once, nothing disallowed, per-host spacing).
//
// Times are taken when the handler starts, i.e. once the request headers have been read.
// Optionally mirrors each entry to a file as one tab-separated line:
//   <ms since log creation>\t<host index>\t<port>\t<method>\t<Host header>\t<raw target>
// Thread-safety: thread-safe.
#ifndef URLSIEVE_TOOLS_SITE_SERVER_REQUEST_LOG_H_
#define URLSIEVE_TOOLS_SITE_SERVER_REQUEST_LOG_H_

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
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
};

class RequestLog {
 public:
  RequestLog();
  ~RequestLog();
  RequestLog(const RequestLog&) = delete;
  RequestLog& operator=(const RequestLog&) = delete;

  // Also append every later entry to `path` (created or truncated).
  Status MirrorToFile(const std::string& path);

  void Add(LoggedRequest request);
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
  std::FILE* file_ = nullptr;
};

}  // namespace urlsieve::site

#endif  // URLSIEVE_TOOLS_SITE_SERVER_REQUEST_LOG_H_
