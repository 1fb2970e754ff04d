#include "crawler/metrics/metrics_server.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <memory>

#include "crawler/metrics/metrics_text.h"

namespace urlsieve {
namespace {

Status BadAddress(std::string_view text, const std::string& why) {
  std::string message = "--metrics-listen: '";
  message.append(text).append("' is not HOST:PORT (").append(why);
  message.append("; e.g. 127.0.0.1:9100, localhost:0 or [::1]:9100)");
  return Status::InvalidArgument(std::move(message));
}

}  // namespace

Result<MetricsAddress> MetricsAddress::Parse(std::string_view text) {
  MetricsAddress address;
  std::string_view host;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos) return BadAddress(text, "an IPv6 address without ']'");
    host = text.substr(1, close - 1);
    if (close + 1 >= text.size() || text[close + 1] != ':') {
      return BadAddress(text, "no :PORT after the IPv6 address");
    }
    port = text.substr(close + 2);
    in6_addr ip6{};
    if (inet_pton(AF_INET6, std::string(host).c_str(), &ip6) != 1) {
      return BadAddress(text, std::string("'").append(host).append("' is not an IPv6 address"));
    }
    address.ipv6 = true;
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return BadAddress(text, "no :PORT");
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.empty()) return BadAddress(text, "no host");
    if (host.find(':') != std::string_view::npos) {
      return BadAddress(text, "an IPv6 address goes in brackets");
    }
    in_addr ip4{};
    if (host == "localhost") {
      host = "127.0.0.1";
    } else if (inet_pton(AF_INET, std::string(host).c_str(), &ip4) != 1) {
      return BadAddress(text, "the host must be an IPv4 address, localhost or [IPv6]");
    }
  }
  int number = -1;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), number);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || number < 0 ||
      number > 65535) {
    return BadAddress(text, "the port must be a number in [0, 65535]");
  }
  address.host = std::string(host);
  address.port = number;
  return address;
}

std::string MetricsAddress::ToString() const {
  std::string out = ipv6 ? "[" + host + "]" : host;
  out += ':';
  out += std::to_string(port);
  return out;
}

Result<std::unique_ptr<MetricsServer>> MetricsServer::Bind(const MetricsAddress& address) {
  std::unique_ptr<MetricsServer> server(new MetricsServer());
  server->server_ = std::make_unique<httplib::Server>();
  httplib::Server& svr = *server->server_;
  // httplib's default options add SO_REUSEPORT, which would let this bind share a port another
  // server listens on: only SO_REUSEADDR here, so a port in use is an error.
  svr.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  // One worker: scrapes are answered one at a time (each renders a snapshot of the crawl).
  svr.new_task_queue = [] { return new httplib::ThreadPool(1); };
  svr.set_keep_alive_timeout(1);
  errno = 0;
  int port = address.port;
  if (port == 0) {
    port = svr.bind_to_any_port(address.host);
  } else if (!svr.bind_to_port(address.host, port)) {
    port = -1;
  }
  if (port <= 0) {
    const int error = errno;
    std::string message = "--metrics-listen: cannot listen on " + address.ToString();
    message += error != 0 ? std::string(": ") + std::strerror(error)
                          : std::string(" (the port is in use, or the address is not this host's)");
    return Status::IoError(std::move(message));
  }
  server->address_ = address;
  server->address_.port = port;
  return server;
}

MetricsServer::~MetricsServer() { Stop(); }

Status MetricsServer::Start(std::function<std::string()> render) {
  if (thread_.joinable() || !server_) {
    return Status::FailedPrecondition("metrics server: started twice");
  }
  render_ = std::move(render);
  server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(render_(), std::string(kMetricsContentType));
  });
  auto returned = std::make_shared<std::atomic<bool>>(false);
  thread_ = std::thread([this, returned] {
    server_->listen_after_bind();
    returned->store(true);
  });
  // httplib's stop() is a no-op until listen_after_bind has started its loop: wait for that, so a
  // Stop() right after Start() cannot leave the server running.
  while (!server_->is_running() && !returned->load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (returned->load()) {
    thread_.join();
    return Status::IoError("--metrics-listen: cannot serve on " + address_.ToString());
  }
  return Status::Ok();
}

void MetricsServer::Stop() {
  if (!server_) return;
  if (thread_.joinable()) {
    server_->stop();
    thread_.join();
  }
  server_.reset();
}

}  // namespace urlsieve
