// Site: what a SiteServer serves — a pure function from request to response, with no networking,
// so the same content can be served on real sockets (SiteServer) or inspected directly in tests.
//
// Implementations: GeneratedSite (the crawler trap site), StaticSite (a directory, the demo),
// ChangingSite (the re-crawl tests) and EncodedSite (pages in legacy encodings, byte for byte).
// Thread-safety: Handle is called concurrently from the server's worker threads; implementations
// must be thread-safe.
#ifndef URLSIEVE_TOOLS_SITE_SERVER_SITE_H_
#define URLSIEVE_TOOLS_SITE_SERVER_SITE_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace urlsieve::site {

// A Site never sees conditional headers: SiteServer evaluates them on the Site's answer.
struct SiteRequest {
  int host = 0;          // index of the listening port (one port = one host)
  std::string method;    // "GET", "HEAD"...
  std::string resource;  // percent-decoded path, then "?" and the raw query when there is one
};

struct SiteResponse {
  int status = 200;
  std::string content_type = "text/html; charset=utf-8";
  // Extra headers (Location, ...). With an ETag or Last-Modified among them, SiteServer answers a
  // matching conditional GET with 304 (tools/site_server/conditional.h).
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  // sent exactly as is: no compression is added on top
  // Wait this long before answering (a slow server). Cut short when the server stops.
  std::chrono::milliseconds delay{0};
  // Send the body one byte per interval (a trickling server). Cut short when the server stops.
  std::chrono::milliseconds trickle_interval{0};
  // A body too large to hold (a 100 MB sitemap): `generated_size` bytes, produced piece by piece
  // as the client reads them by generate(offset, length), which returns `length` bytes (or fewer
  // at the end). Used instead of `body` when generated_size > 0.
  uint64_t generated_size = 0;
  std::function<std::string(uint64_t offset, size_t length)> generate;
};

class Site {
 public:
  virtual ~Site() = default;
  virtual SiteResponse Handle(const SiteRequest& request) = 0;
};

// Shorthands for building responses.
SiteResponse HtmlPage(const std::string& title, const std::string& body_html,
                      const std::string& head_html = "");
SiteResponse Redirect(int status, const std::string& location);
SiteResponse PlainStatus(int status, const std::string& text);

// "<" ">" "&" "\"" escaped for HTML text and attribute values.
std::string HtmlEscape(const std::string& text);

}  // namespace urlsieve::site

#endif  // URLSIEVE_TOOLS_SITE_SERVER_SITE_H_
