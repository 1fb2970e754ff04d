// MetricsServer: the crawl's Prometheus endpoint (`urlsieve crawl --metrics-listen HOST:PORT`,
// docs/features/metrics.md "Metrics"). GET /metrics answers the text exposition format 0.0.4 that a
// render function makes at each scrape (the crawl's: MetricsText of Crawler::MetricsNow); any other
// path is 404. Served by cpp-httplib on a thread of its own, with one worker: scrapes are answered
// one at a time and never run on a crawl thread.
//
// Bind() and Start() are separate so that a bad address or a port in use is an error before the
// crawl starts, while the render function may need what the crawl opens later.
//
// Thread-safety: Bind, Start and Stop from one thread (the crawl's); the render function is
// called on the server's worker thread, so it must be safe to call concurrently with the crawl
// (Crawler::MetricsNow only reads thread-safe snapshots: CrawlStats, Frontier::Stats,
// SeenSet::Stats, atomics). Stop() (also the destructor) closes the socket and joins the thread;
// after it returns the render function is never called again.
#ifndef URLSIEVE_CRAWLER_METRICS_METRICS_SERVER_H_
#define URLSIEVE_CRAWLER_METRICS_METRICS_SERVER_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "base/status.h"

namespace httplib {
class Server;
}

namespace urlsieve {

// A listening address, HOST:PORT: an IPv4 literal, "localhost" (127.0.0.1) or a bracketed IPv6
// literal ("[::1]:9100"); PORT in [0, 65535], 0 for a free port the system chooses.
struct MetricsAddress {
  std::string host;  // as bound: "127.0.0.1", "::1" (no brackets)
  int port = 0;
  bool ipv6 = false;

  // InvalidArgument naming the value and what is wrong with it.
  static Result<MetricsAddress> Parse(std::string_view text);
  std::string ToString() const;  // "127.0.0.1:9100", "[::1]:9100"
};

class MetricsServer {
 public:
  // Binds `address` (not yet serving). IoError naming the address when it cannot be bound (the
  // port is in use, the address is not this machine's).
  static Result<std::unique_ptr<MetricsServer>> Bind(const MetricsAddress& address);
  ~MetricsServer();  // Stop()
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // Serves GET /metrics with render() until Stop(). Once only.
  Status Start(std::function<std::string()> render);
  // Stops serving and joins the server thread. Idempotent.
  void Stop();

  // The address bound, with the port the system chose for port 0.
  const MetricsAddress& address() const { return address_; }
  std::string url() const { return "http://" + address_.ToString() + "/metrics"; }

 private:
  MetricsServer() = default;

  MetricsAddress address_;
  std::unique_ptr<httplib::Server> server_;
  std::function<std::string()> render_;
  std::thread thread_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_METRICS_METRICS_SERVER_H_
