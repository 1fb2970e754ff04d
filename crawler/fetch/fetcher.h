// Fetcher: one HTTP(S) GET at a time over a libcurl easy handle, for one fetcher thread.
//
// A crawl runs one Fetcher per thread; they share DNS and TLS-session caches through a CurlShare.
// Each Fetcher keeps its connections alive between transfers (keep-alive, HTTP/2 over TLS when the
// server offers it), decodes Content-Encoding (gzip, deflate, br, zstd) and bounds every transfer:
// connect and total timeouts, a low-speed limit (a trickling server cannot hold a thread), and a
// body cap applied to the *decoded* bytes, so a small compressed body that inflates without bound
// ("zip bomb") is stopped too.
//
// Redirects are not followed: the result carries the status and the raw Location header, and the
// crawler treats the target like any discovered link (docs/architecture.md, "Data flow").
// That holds for robots.txt too: RFC 9309 §2.3.1.2 asks crawlers to follow at least five
// consecutive redirects, and the crawl hands each hop back to the frontier, which schedules it on
// its clock like any request to that key (FetchOutcome::robots_redirect).
//
// Errors are values: Fetch never throws and always returns a FetchResult; a transfer that failed
// carries a non-OK `error` and whatever was received before the failure. An HTTP error status
// (404, 500, 429...) is not a transfer error.
//
// Thread-safety: a Fetcher is used by one thread at a time. Distinct Fetchers may run concurrently,
// including Fetchers sharing one CurlShare (which must outlive them).
#ifndef URLSIEVE_CRAWLER_FETCH_FETCHER_H_
#define URLSIEVE_CRAWLER_FETCH_FETCHER_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "crawler/fetch/curl_share.h"

namespace urlsieve {

struct FetcherOptions {
  std::string user_agent = "urlsieve/0.1 (+https://github.com/urlsieve/urlsieve)";
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds total_timeout{30'000};  // whole transfer, headers and body
  // A transfer slower than low_speed_bytes_per_second during low_speed_time is aborted (timeout).
  long low_speed_bytes_per_second = 1'000;
  std::chrono::seconds low_speed_time{10};
  // Cap on the decoded body. Past it the transfer is aborted with error kBodyTooLarge.
  std::uint64_t max_body_bytes = 10 * 1024 * 1024;
  // Media types (lowercase "type/subtype", parameters ignored) whose bodies are parsed. What
  // happens to the body of any other type is other_bodies' choice; it is never an error. A
  // response without Content-Type counts as accepted: the parser decides. Empty list = accept
  // everything.
  std::vector<std::string> accepted_content_types = {"text/html", "application/xhtml+xml"};
  // The body of a response whose type is not accepted (nobody parses it; an archive may keep it,
  // docs/features/content-seen.md, "Non-HTML bodies"):
  enum class OtherBodies : uint8_t {
    kSkip,        // not downloaded: the transfer stops at its first body bytes, which are
                  // dropped; body_skipped set, body empty (a crawl without an archive)
    kFirstBytes,  // the transfer stops at its first body bytes, which are kept (up to the cap):
                  // body_skipped set and body holds them, unless they were the whole body
    kDownload,    // downloaded like an accepted body, under the same cap; body_skipped not set
  };
  OtherBodies other_bodies = OtherBodies::kSkip;
  // A body past max_body_bytes fails the transfer (kBodyTooLarge) either way. false: a
  // Content-Length past the cap stops it before any body byte (nothing is kept); true: the body is
  // read up to the cap and its first max_body_bytes are kept (an archive marks them truncated).
  bool keep_cut_bodies = false;
  bool verify_tls = true;  // peer certificate and host name; turn off only for test servers
  std::string ca_file;     // PEM CA bundle to verify against instead of the system's ("" = system)
  bool http2 = true;       // offer HTTP/2 over TLS (ALPN); plain http stays HTTP/1.1
  // Capture the raw request and response header bytes (for WARC records).
  bool capture_headers = true;
};

// The validators of a stored copy, for a conditional GET (RFC 9110 §13.1): the request carries
// If-None-Match and If-Modified-Since for those that are set, and a server that finds the copy
// current answers 304 Not Modified with no body.
// Validators longer than this are neither kept (FetchResult leaves them empty) nor sent: a
// server's 8 KiB header-field limits (and its 431 answer) must not turn a good copy into an error,
// and a fetch record stays small. Real ETags and HTTP-dates are far shorter.
inline constexpr size_t kMaxValidatorBytes = 1024;

struct ConditionalRequest {
  std::string etag;           // the stored ETag, as the server sent it ("" = none)
  std::string last_modified;  // the stored Last-Modified, as the server sent it ("" = none)
  bool empty() const { return etag.empty() && last_modified.empty(); }
};

enum class FetchErrorKind {
  kNone = 0,
  kInvalidUrl,    // malformed URL or a scheme other than http/https
  kDns,           // host name did not resolve
  kConnect,       // connection refused or unreachable
  kTimeout,       // connect timeout, total timeout or low-speed abort
  kTls,           // certificate not verified, or our TLS settings refused: permanent
  kTlsHandshake,  // the TLS handshake failed otherwise (reset, no common protocol...)
  kBodyTooLarge,  // decoded body passed max_body_bytes
  kNetwork,       // any other transfer failure (reset, bad response, decoding error...)
};

std::string_view FetchErrorKindName(FetchErrorKind kind);
// Whether fetching the same URL again cannot succeed: a certificate that does not verify stays
// so (kTls). Everything else may be transient and is worth a retry after a back-off.
bool IsPermanent(FetchErrorKind kind);

struct FetchResult {
  std::string url;         // as requested
  std::string primary_ip;  // IP of the server connected to ("" when no connection was made)
  long primary_port = 0;
  long status = 0;  // HTTP status of the (last) response; 0 when no response arrived
  long new_connections =
      0;  // connections opened for this transfer (0: a kept-alive one was reused)

  // Selected headers of the (last) response, raw values ("" when absent).
  std::string content_type;
  std::string media_type;  // content_type's "type/subtype", lowercased, parameters dropped
  std::string location;
  std::string retry_after;
  std::string content_encoding;
  std::string etag;  // validators, for a later conditional GET ("" past kMaxValidatorBytes)
  std::string last_modified;

  bool content_type_accepted = false;  // media_type is in FetcherOptions::accepted_content_types
  // Not accepted, so the body was not downloaded (OtherBodies::kSkip: body empty; kFirstBytes:
  // body holds the bytes that came with the first write, a prefix of it).
  bool body_skipped = false;
  bool body_truncated = false;  // FetchRobots, FetchSitemap: body cut at its cap (RFC 9309 §2.5)
  // Decoded (Content-Encoding removed). After kBodyTooLarge: what was kept of it (its first
  // max_body_bytes with keep_cut_bodies, else what arrived before the cap was seen, maybe nothing).
  std::string body;

  std::uint64_t body_wire_bytes = 0;  // body bytes as received, before decoding
  std::uint64_t header_bytes = 0;     // response header bytes received
  std::chrono::microseconds total_time{0};

  // Exactly as on the wire (HTTP/1.1) or curl's HTTP/1-style rendering (HTTP/2). The response
  // block is the last one: interim 1xx responses and followed redirects are dropped.
  std::string request_headers;
  std::string response_headers;

  // OK, or why the transfer failed: "<kind name>: <detail>" ("timeout: Operation timed out
  // after..."). The kind prefix is added here, once; callers print the message as it is.
  Status error;
  FetchErrorKind error_kind = FetchErrorKind::kNone;
  bool ok() const { return error.ok(); }
};

class Fetcher {
 public:
  // Robots.txt bodies past this are truncated; RFC 9309 §2.5 requires parsing at least 500 KiB.
  static constexpr std::uint64_t kRobotsMaxBytes = 500 * 1024;

  // share may be null (no shared caches). Invalid options → InvalidArgument.
  static Result<std::unique_ptr<Fetcher>> Create(FetcherOptions options, CurlShare* share);
  ~Fetcher();
  Fetcher(const Fetcher&) = delete;
  Fetcher& operator=(const Fetcher&) = delete;

  // GET url; redirects are returned, not followed.
  FetchResult Fetch(const std::string& url);
  // A conditional GET (see ConditionalRequest); an empty one is a plain GET.
  FetchResult Fetch(const std::string& url, const ConditionalRequest& conditional);

  // GET a robots.txt URL: accepts any content type and truncates the body at kRobotsMaxBytes
  // instead of failing; a redirect is returned like Fetch does. The caller interprets the outcome
  // (RFC 9309 §2.3.1: 2xx parse, 4xx allow all, 5xx or unreachable disallow all, a redirect is a
  // hop the frontier schedules).
  FetchResult FetchRobots(const std::string& url);

  // GET a sitemap URL (docs/features/sitemaps.md, "Sitemaps"): accepts any content type and
  // truncates the (decoded) body at max_bytes instead of failing (body_truncated); a redirect is
  // returned.
  FetchResult FetchSitemap(const std::string& url, std::uint64_t max_bytes);

  const FetcherOptions& options() const { return options_; }

 private:
  struct Transfer;  // per-request state the libcurl callbacks write into
  struct Policy {
    std::uint64_t max_body_bytes = 0;
    bool truncate_at_cap = false;  // true: keep the first max_body_bytes; false: fail
    bool accept_all_types = false;
  };

  Fetcher(FetcherOptions options, CURL* easy);
  FetchResult Perform(const std::string& url, const Policy& policy,
                      const ConditionalRequest* conditional = nullptr);
  // Sets the result's error for a transfer that failed with `code`.
  void RecordError(CURLcode code, const Transfer& transfer) const;

  static size_t OnHeader(char* data, size_t size, size_t count, void* transfer);
  static size_t OnBody(char* data, size_t size, size_t count, void* transfer);
  static int OnDebug(CURL* easy, curl_infotype type, char* data, size_t size, void* transfer);

  const FetcherOptions options_;
  CURL* const easy_;
  char error_buffer_[CURL_ERROR_SIZE];
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_FETCH_FETCHER_H_
