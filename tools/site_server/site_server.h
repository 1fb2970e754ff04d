// SiteServer: real HTTP/1.1 servers on 127.0.0.1 serving a Site, for tests and the demo.
//
// HTTP/1.1, or HTTPS with a self-signed certificate. One listening port per host (ports differ, so
// for a crawler they are different origins). Every request is recorded in a RequestLog before the
// Site answers it, and completed with the answer's status and body size. A conditional GET
// (If-None- Match, If-Modified-Since) on an answer with validators gets 304 as an origin server
// sends it (tools/site_server/conditional.h). Slow and trickling responses wait on the server's
// stop signal, so Stop() never waits for them. Only 127.0.0.1 is ever bound.
//
// Thread-safety: thread-safe. Requests are handled on worker threads (threads_per_host per host;
// each open keep-alive connection holds one).
#ifndef URLSIEVE_TOOLS_SITE_SERVER_SITE_SERVER_H_
#define URLSIEVE_TOOLS_SITE_SERVER_SITE_SERVER_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "tools/site_server/request_log.h"
#include "tools/site_server/site.h"

namespace httplib {
class Server;
}

namespace urlsieve::site {

struct SiteServerOptions {
  int hosts = 1;
  std::vector<int> ports;  // fixed port of host h (missing or 0: an ephemeral port)
  int threads_per_host = 16;
  // Idle keep-alive connections are closed after this; Stop() may wait that long for them.
  std::chrono::seconds keep_alive_timeout{1};
  // Serve HTTPS with a fresh self-signed certificate for 127.0.0.1 (see tls_certificate_pem()).
  bool tls = false;
};

// Builds the Site once the ports are bound: origins[h] = "http://127.0.0.1:<port of host h>".
using SiteFactory =
    std::function<Result<std::unique_ptr<Site>>(const std::vector<std::string>& origins)>;

class SiteServer {
 public:
  static Result<std::unique_ptr<SiteServer>> Start(const SiteServerOptions& options,
                                                   const SiteFactory& factory);
  ~SiteServer();  // Stop()
  SiteServer(const SiteServer&) = delete;
  SiteServer& operator=(const SiteServer&) = delete;

  // Stops accepting, wakes slow handlers and joins the server threads. Idempotent.
  void Stop();

  int hosts() const { return static_cast<int>(origins_.size()); }
  int port(int host = 0) const { return ports_.at(host); }
  const std::string& origin(int host = 0) const { return origins_.at(host); }
  std::string Url(const std::string& path_and_query, int host = 0) const {
    return origin(host) + path_and_query;
  }
  // The certificate's PEM when serving HTTPS ("" otherwise): a client's CA bundle to trust it.
  const std::string& tls_certificate_pem() const { return tls_certificate_pem_; }
  RequestLog& log() { return log_; }
  // From now on, answer every request that carries If-None-Match or If-Modified-Since with
  // `status` (a server that refuses validators: 431, 412...); 0 answers them as usual again.
  void RefuseValidators(int status) { refuse_validators_.store(status); }
  Site& site() { return *site_; }

 private:
  SiteServer() = default;
  // Waits `duration` unless the server stops first; false when it stopped.
  bool WaitUnlessStopping(std::chrono::milliseconds duration);

  std::vector<std::unique_ptr<httplib::Server>> servers_;
  std::vector<std::thread> threads_;
  std::vector<int> ports_;
  std::vector<std::string> origins_;
  std::string tls_certificate_pem_;
  std::unique_ptr<Site> site_;
  RequestLog log_;

  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::atomic<bool> stopped_{false};
  std::atomic<int> refuse_validators_{0};
};

}  // namespace urlsieve::site

#endif  // URLSIEVE_TOOLS_SITE_SERVER_SITE_SERVER_H_
