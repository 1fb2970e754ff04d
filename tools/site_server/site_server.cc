#include "tools/site_server/site_server.h"

#include <httplib.h>

#include <algorithm>
#include <utility>

#include "tools/site_server/conditional.h"
#include "tools/site_server/self_signed_cert.h"

namespace urlsieve::site {
namespace {

// SiteRequest::resource: httplib has percent-decoded the path; the query is kept raw.
std::string ResourceOf(const httplib::Request& req) {
  const size_t q = req.target.find('?');
  return q == std::string::npos ? req.path : req.path + req.target.substr(q);
}

// The values of request header `name`, joined with ", " as one field (RFC 9110 §5.3); nullopt
// when absent.
std::optional<std::string> HeaderValues(const httplib::Request& req, const char* name) {
  const size_t count = req.get_header_value_count(name);
  if (count == 0) return std::nullopt;
  std::string joined;
  for (size_t i = 0; i < count; ++i) {
    if (i > 0) joined.append(", ");
    joined.append(req.get_header_value(name, i));
  }
  return joined;
}

}  // namespace

Result<std::unique_ptr<SiteServer>> SiteServer::Start(const SiteServerOptions& options,
                                                      const SiteFactory& factory) {
  if (options.hosts < 1 || options.threads_per_host < 1) {
    return Status::InvalidArgument("site server: hosts and threads_per_host must be >= 1");
  }
  std::unique_ptr<SiteServer> server(new SiteServer());
  SiteServer* self = server.get();
  const auto idle = std::max<std::chrono::seconds::rep>(1, options.keep_alive_timeout.count());
  SelfSignedCert cert;
  if (options.tls) {
    auto made = MakeSelfSignedCert();
    if (!made.ok()) return made.status();
    cert = std::move(made).value();
    server->tls_certificate_pem_ = cert.cert_pem;
  }
  const std::string scheme = options.tls ? "https" : "http";
  for (int h = 0; h < options.hosts; ++h) {
    // SSLServer takes its own references to the certificate and key.
    std::unique_ptr<httplib::Server> svr =
        options.tls ? std::make_unique<httplib::SSLServer>(cert.cert.get(), cert.key.get())
                    : std::make_unique<httplib::Server>();
    if (!svr->is_valid()) return Status::IoError("site server: cannot set up TLS");
    const int threads = options.threads_per_host;
    svr->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    svr->set_keep_alive_timeout(idle);
    svr->set_keep_alive_max_count(1000);
    // Headers and body go out in separate writes: without TCP_NODELAY, Nagle plus the client's
    // delayed ACK stalls every response by ~40 ms.
    svr->set_tcp_nodelay(true);
    const int wanted = h < static_cast<int>(options.ports.size()) ? options.ports[h] : 0;
    const int port = wanted == 0 ? svr->bind_to_any_port("127.0.0.1")
                                 : (svr->bind_to_port("127.0.0.1", wanted) ? wanted : -1);
    if (port <= 0) {
      return Status::IoError("site server: cannot bind 127.0.0.1:" + std::to_string(wanted));
    }
    self->ports_.push_back(port);
    self->origins_.push_back(scheme + "://127.0.0.1:" + std::to_string(port));
    svr->Get(".*", [self, h, port](const httplib::Request& req, httplib::Response& res) {
      const std::string resource = ResourceOf(req);
      const Preconditions preconditions{HeaderValues(req, "If-None-Match"),
                                        HeaderValues(req, "If-Modified-Since")};
      const uint64_t id = self->log_.Add(
          {std::chrono::steady_clock::now(), h, port, req.method, req.target, resource,
           req.get_header_value("Host"), req.get_header_value("User-Agent"),
           preconditions.if_none_match, preconditions.if_modified_since});
      SiteResponse reply = self->site_->Handle({h, req.method, resource});
      if (NotModified(req.method, preconditions, reply)) reply = NotModifiedResponse(reply);
      const int refusal = self->refuse_validators_.load();
      if (refusal != 0 && (preconditions.if_none_match || preconditions.if_modified_since)) {
        reply = SiteResponse{};
        reply.status = refusal;
        reply.content_type = "text/plain";
        reply.body = "validators refused\n";
      }
      if (reply.delay.count() > 0 && !self->WaitUnlessStopping(reply.delay)) {
        res.status = 503;  // shutting down
        self->log_.Answered(id, res.status, 0);
        return;
      }
      res.status = reply.status;
      for (const auto& [name, value] : reply.headers) res.set_header(name, value);
      if (reply.generated_size > 0) {
        // Produced as the client reads it: never held whole (tools/site_server/site.h).
        self->log_.Answered(id, reply.status, req.method == "HEAD" ? 0 : reply.generated_size);
        res.set_content_provider(
            reply.generated_size, reply.content_type,
            [generate = reply.generate](size_t offset, size_t length, httplib::DataSink& sink) {
              const std::string piece = generate(offset, std::min<size_t>(length, 1 << 16));
              return !piece.empty() && sink.write(piece.data(), piece.size());
            });
        return;
      }
      self->log_.Answered(id, reply.status, req.method == "HEAD" ? 0 : reply.body.size());
      if (reply.body.empty()) {
        if (!reply.content_type.empty()) res.set_header("Content-Type", reply.content_type);
        return;
      }
      // A content provider, not set_content: httplib would otherwise compress the body again on
      // its own when the client sends Accept-Encoding, and the wire would not be what the Site
      // says.
      auto body = std::make_shared<const std::string>(std::move(reply.body));
      const auto interval = reply.trickle_interval;
      res.set_content_provider(
          body->size(), reply.content_type,
          [self, body, interval](size_t offset, size_t length, httplib::DataSink& sink) {
            if (interval.count() > 0) {
              if (!self->WaitUnlessStopping(interval)) return false;
              length = 1;
            }
            return sink.write(body->data() + offset, length);
          });
    });
    server->servers_.push_back(std::move(svr));
  }

  auto site = factory(self->origins_);
  if (!site.ok()) return site.status();
  self->site_ = std::move(site).value();

  std::vector<std::shared_ptr<std::atomic<bool>>> returned;
  for (auto& svr : server->servers_) {
    auto done = std::make_shared<std::atomic<bool>>(false);
    returned.push_back(done);
    server->threads_.emplace_back([s = svr.get(), done] {
      s->listen_after_bind();
      done->store(true);
    });
  }
  // httplib's stop() is a no-op until listen_after_bind has started running: wait for that, so a
  // Stop() right after Start() cannot leave a listener behind.
  bool failed = false;
  for (size_t h = 0; h < server->servers_.size(); ++h) {
    while (!server->servers_[h]->is_running() && !returned[h]->load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    failed = failed || returned[h]->load();
  }
  if (failed) return Status::IoError("site server: listen failed");  // ~SiteServer stops the rest
  return server;
}

SiteServer::~SiteServer() { Stop(); }

void SiteServer::Stop() {
  if (stopped_.exchange(true)) return;
  {
    std::lock_guard lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  for (auto& svr : servers_) svr->stop();
  for (auto& t : threads_) t.join();
}

bool SiteServer::WaitUnlessStopping(std::chrono::milliseconds duration) {
  std::unique_lock lock(stop_mu_);
  return !stop_cv_.wait_for(lock, duration, [this] { return stopping_; });
}

}  // namespace urlsieve::site
