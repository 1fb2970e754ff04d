#include "crawler/fetch/fetcher.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "base/strings.h"

namespace urlsieve {
namespace {

// A header value without its blanks, and its line end (curl hands the line with its CRLF).
std::string_view TrimHeaderValue(std::string_view s) {
  return TrimRight(TrimLeft(s, kBlanks), kBlanksAndLineEnds);
}

// "Text/HTML; charset=utf-8" → "text/html" (RFC 9110 §8.3.1: type and subtype are
// case-insensitive).
std::string MediaTypeOf(std::string_view content_type) {
  return AsciiLowercase(TrimHeaderValue(content_type.substr(0, content_type.find(';'))));
}

FetchErrorKind KindOf(CURLcode code) {
  switch (code) {
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
      return FetchErrorKind::kInvalidUrl;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      return FetchErrorKind::kDns;
    case CURLE_COULDNT_CONNECT:
      return FetchErrorKind::kConnect;
    case CURLE_OPERATION_TIMEDOUT:
      return FetchErrorKind::kTimeout;
    // Permanent: the same certificate (or our own CA bundle, CRL, cipher list) fails again.
    case CURLE_PEER_FAILED_VERIFICATION:  // chain, expiry or host name (RFC 6125) not verified
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:  // OCSP stapling said revoked or unknown
    case CURLE_SSL_CLIENTCERT:         // the server requires a client certificate
    case CURLE_SSL_CACERT_BADFILE:     // --ca-file unreadable or not PEM
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
      return FetchErrorKind::kTls;
    // The generic handshake failure also covers a connection reset mid-handshake: retry it.
    case CURLE_SSL_CONNECT_ERROR:
      return FetchErrorKind::kTlsHandshake;
    case CURLE_FILESIZE_EXCEEDED:
      return FetchErrorKind::kBodyTooLarge;
    default:
      return FetchErrorKind::kNetwork;
  }
}

// A value with a line break would smuggle a header in, and one past kMaxValidatorBytes (kept by
// an older build) invites a 431: such a validator is not sent.
bool Sendable(const std::string& v) {
  return v.size() <= kMaxValidatorBytes && v.find_first_of("\r\n") == std::string::npos;
}

// The request headers of a conditional GET (null when there are none); the caller frees them.
curl_slist* ConditionalHeaders(const ConditionalRequest* conditional) {
  curl_slist* headers = nullptr;
  if (conditional != nullptr) {
    if (!conditional->etag.empty() && Sendable(conditional->etag)) {
      std::string line = "If-None-Match: ";
      line += conditional->etag;
      headers = curl_slist_append(headers, line.c_str());
    }
    if (!conditional->last_modified.empty() && Sendable(conditional->last_modified)) {
      std::string line = "If-Modified-Since: ";
      line += conditional->last_modified;
      headers = curl_slist_append(headers, line.c_str());
    }
  }
  return headers;
}

// What libcurl reports of the finished transfer: status, peer, connections, sizes and time.
void ReadTransferInfo(CURL* easy, FetchResult* result) {
  long status = 0;
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
  result->status = status;
  char* text = nullptr;
  if (curl_easy_getinfo(easy, CURLINFO_PRIMARY_IP, &text) == CURLE_OK && text != nullptr) {
    result->primary_ip = text;
  }
  curl_easy_getinfo(easy, CURLINFO_PRIMARY_PORT, &result->primary_port);
  curl_easy_getinfo(easy, CURLINFO_NUM_CONNECTS, &result->new_connections);
  curl_off_t wire = 0;
  curl_easy_getinfo(easy, CURLINFO_SIZE_DOWNLOAD_T, &wire);
  result->body_wire_bytes = static_cast<std::uint64_t>(wire);
  long header_size = 0;
  curl_easy_getinfo(easy, CURLINFO_HEADER_SIZE, &header_size);
  result->header_bytes = static_cast<std::uint64_t>(header_size);
  curl_off_t micros = 0;
  curl_easy_getinfo(easy, CURLINFO_TOTAL_TIME_T, &micros);
  result->total_time = std::chrono::microseconds(micros);
}

// Whether the `first` body bytes that came with the first write are the whole body: the
// response's Content-Length says so (the caller checks that no content coding changed the count).
bool WholeBodyArrived(CURL* easy, size_t first) {
  curl_off_t length = -1;
  if (curl_easy_getinfo(easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) != CURLE_OK)
    return false;
  return length >= 0 && static_cast<curl_off_t>(first) == length;
}

}  // namespace

std::string_view FetchErrorKindName(FetchErrorKind kind) {
  switch (kind) {
    case FetchErrorKind::kNone:
      return "ok";
    case FetchErrorKind::kInvalidUrl:
      return "invalid url";
    case FetchErrorKind::kDns:
      return "dns";
    case FetchErrorKind::kConnect:
      return "connect";
    case FetchErrorKind::kTimeout:
      return "timeout";
    case FetchErrorKind::kTls:
      return "tls";
    case FetchErrorKind::kTlsHandshake:
      return "tls handshake";
    case FetchErrorKind::kBodyTooLarge:
      return "body too large";
    case FetchErrorKind::kNetwork:
      return "network";
  }
  return "unknown";
}

bool IsPermanent(FetchErrorKind kind) { return kind == FetchErrorKind::kTls; }

struct Fetcher::Transfer {
  const FetcherOptions* options;
  Policy policy;
  FetchResult* result;
  CURL* easy;
  bool type_checked = false;  // the first body bytes decided whether the body is wanted
  bool too_large = false;
};

Result<std::unique_ptr<Fetcher>> Fetcher::Create(FetcherOptions options, CurlShare* share) {
  if (options.max_body_bytes == 0) return Status::InvalidArgument("max_body_bytes must be > 0");
  if (options.connect_timeout.count() <= 0 || options.total_timeout.count() <= 0) {
    return Status::InvalidArgument("timeouts must be > 0");
  }
  if (options.low_speed_bytes_per_second < 0 || options.low_speed_time.count() < 0) {
    return Status::InvalidArgument("low-speed limit must be >= 0");
  }
  for (std::string& type : options.accepted_content_types) type = MediaTypeOf(type);
  URLSIEVE_RETURN_IF_ERROR(EnsureCurlGlobalInit());
  CURL* easy = curl_easy_init();
  if (easy == nullptr) return Status::IoError("curl_easy_init failed");
  std::unique_ptr<Fetcher> fetcher(new Fetcher(std::move(options), easy));
  const FetcherOptions& o = fetcher->options_;

  CURLcode rc = CURLE_OK;
  auto set = [&](CURLoption option, auto value) {
    if (rc == CURLE_OK) rc = curl_easy_setopt(easy, option, value);
  };
  set(CURLOPT_ERRORBUFFER, fetcher->error_buffer_);
  set(CURLOPT_NOSIGNAL, 1L);  // no SIGALRM-based DNS timeouts: we are multi-threaded
  set(CURLOPT_PROTOCOLS_STR, "http,https");
  set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  set(CURLOPT_USERAGENT, o.user_agent.c_str());
  set(CURLOPT_ACCEPT_ENCODING, "");  // offer every encoding this libcurl decodes
  set(CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(o.connect_timeout.count()));
  set(CURLOPT_TIMEOUT_MS, static_cast<long>(o.total_timeout.count()));
  set(CURLOPT_LOW_SPEED_LIMIT, o.low_speed_bytes_per_second);
  set(CURLOPT_LOW_SPEED_TIME, static_cast<long>(o.low_speed_time.count()));
  set(CURLOPT_SSL_VERIFYPEER, o.verify_tls ? 1L : 0L);
  set(CURLOPT_SSL_VERIFYHOST, o.verify_tls ? 2L : 0L);
  if (!o.ca_file.empty()) set(CURLOPT_CAINFO, o.ca_file.c_str());
  set(CURLOPT_HTTP_VERSION, o.http2 ? static_cast<long>(CURL_HTTP_VERSION_2TLS)
                                    : static_cast<long>(CURL_HTTP_VERSION_1_1));
  set(CURLOPT_WRITEFUNCTION, &Fetcher::OnBody);
  set(CURLOPT_HEADERFUNCTION, &Fetcher::OnHeader);
  if (o.capture_headers) {
    // The request header bytes are only reachable through the debug callback, which needs VERBOSE.
    set(CURLOPT_DEBUGFUNCTION, &Fetcher::OnDebug);
    set(CURLOPT_VERBOSE, 1L);
  }
  if (share != nullptr) set(CURLOPT_SHARE, share->handle());
  if (rc != CURLE_OK) {
    return Status::InvalidArgument(std::string("curl_easy_setopt: ") + curl_easy_strerror(rc));
  }
  return fetcher;
}

Fetcher::Fetcher(FetcherOptions options, CURL* easy) : options_(std::move(options)), easy_(easy) {
  error_buffer_[0] = '\0';
}

Fetcher::~Fetcher() { curl_easy_cleanup(easy_); }

FetchResult Fetcher::Fetch(const std::string& url) {
  Policy policy;
  policy.max_body_bytes = options_.max_body_bytes;
  return Perform(url, policy);
}

FetchResult Fetcher::Fetch(const std::string& url, const ConditionalRequest& conditional) {
  Policy policy;
  policy.max_body_bytes = options_.max_body_bytes;
  return Perform(url, policy, conditional.empty() ? nullptr : &conditional);
}

FetchResult Fetcher::FetchRobots(const std::string& url) {
  Policy policy;
  policy.max_body_bytes = kRobotsMaxBytes;
  policy.truncate_at_cap = true;
  policy.accept_all_types = true;
  return Perform(url, policy);
}

FetchResult Fetcher::FetchSitemap(const std::string& url, std::uint64_t max_bytes) {
  Policy policy;
  policy.max_body_bytes = max_bytes;
  policy.truncate_at_cap = true;
  policy.accept_all_types = true;
  return Perform(url, policy);
}

FetchResult Fetcher::Perform(const std::string& url, const Policy& policy,
                             const ConditionalRequest* conditional) {
  FetchResult result;
  result.url = url;
  Transfer transfer{&options_, policy, &result, easy_};
  error_buffer_[0] = '\0';

  curl_slist* headers = ConditionalHeaders(conditional);
  curl_easy_setopt(easy_, CURLOPT_HTTPHEADER, headers);

  curl_easy_setopt(easy_, CURLOPT_URL, url.c_str());
  // Rejects early on a Content-Length past the cap. It sees wire bytes only; OnBody bounds the
  // decoded ones. With truncation, or when a cut body is kept, the cap is ours to apply, so curl
  // gets none.
  const bool curl_cap = !policy.truncate_at_cap && !options_.keep_cut_bodies;
  curl_easy_setopt(easy_, CURLOPT_MAXFILESIZE_LARGE,
                   static_cast<curl_off_t>(curl_cap ? policy.max_body_bytes : 0));
  curl_easy_setopt(easy_, CURLOPT_WRITEDATA, &transfer);
  curl_easy_setopt(easy_, CURLOPT_HEADERDATA, &transfer);
  curl_easy_setopt(easy_, CURLOPT_DEBUGDATA, &transfer);
  const CURLcode code = curl_easy_perform(easy_);
  curl_easy_setopt(easy_, CURLOPT_HTTPHEADER, static_cast<curl_slist*>(nullptr));
  curl_slist_free_all(headers);

  ReadTransferInfo(easy_, &result);
  result.media_type = MediaTypeOf(result.content_type);
  const auto& accepted = options_.accepted_content_types;
  result.content_type_accepted =
      result.media_type.empty() || accepted.empty() ||
      std::find(accepted.begin(), accepted.end(), result.media_type) != accepted.end();

  if (code == CURLE_OK) return result;
  // OnBody stops unwanted or capped bodies by failing the write; those are outcomes, not errors.
  if (code == CURLE_WRITE_ERROR && (result.body_skipped || result.body_truncated)) return result;
  // A Content-Length past the cap stopped curl before OnBody saw the type: an unwanted body is
  // skipped, whatever its size.
  if (code == CURLE_FILESIZE_EXCEEDED && !policy.accept_all_types &&
      !result.content_type_accepted &&
      options_.other_bodies != FetcherOptions::OtherBodies::kDownload) {
    result.body_skipped = true;
    return result;
  }
  RecordError(code, transfer);
  return result;
}

void Fetcher::RecordError(CURLcode code, const Transfer& transfer) const {
  FetchResult& result = *transfer.result;
  if (code == CURLE_WRITE_ERROR && transfer.too_large) {
    result.error_kind = FetchErrorKind::kBodyTooLarge;
  } else {
    result.error_kind = KindOf(code);
  }
  std::string detail = error_buffer_[0] != '\0' ? error_buffer_ : curl_easy_strerror(code);
  if (result.error_kind == FetchErrorKind::kBodyTooLarge) {
    detail =
        "more than " + std::to_string(transfer.policy.max_body_bytes) + " bytes after decoding";
  }
  std::string message = std::string(FetchErrorKindName(result.error_kind)) + ": " + detail;
  result.error = result.error_kind == FetchErrorKind::kInvalidUrl
                     ? Status::InvalidArgument(std::move(message))
                     : Status::IoError(std::move(message));
}

size_t Fetcher::OnHeader(char* data, size_t size, size_t count, void* self) {
  auto* t = static_cast<Transfer*>(self);
  FetchResult& r = *t->result;
  const std::string_view line(data, size * count);
  if (line.starts_with("HTTP/")) {
    // A new response (after a 1xx or a followed redirect): only the last one is reported.
    r.response_headers.clear();
    r.content_type.clear();
    r.location.clear();
    r.retry_after.clear();
    r.content_encoding.clear();
    r.etag.clear();
    r.last_modified.clear();
  }
  if (t->options->capture_headers) r.response_headers.append(line);
  const size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    const std::string_view name = line.substr(0, colon);
    const std::string_view value = TrimHeaderValue(line.substr(colon + 1));
    if (EqualsIgnoreAsciiCase(name, "content-type")) {
      r.content_type = value;
    } else if (EqualsIgnoreAsciiCase(name, "location")) {
      r.location = value;
    } else if (EqualsIgnoreAsciiCase(name, "retry-after")) {
      r.retry_after = value;
    } else if (EqualsIgnoreAsciiCase(name, "content-encoding")) {
      r.content_encoding = value;
    } else if (EqualsIgnoreAsciiCase(name, "etag") && value.size() <= kMaxValidatorBytes) {
      r.etag = value;
    } else if (EqualsIgnoreAsciiCase(name, "last-modified") && value.size() <= kMaxValidatorBytes) {
      r.last_modified = value;
    }
  }
  return size * count;
}

size_t Fetcher::OnBody(char* data, size_t size, size_t count, void* self) {
  auto* t = static_cast<Transfer*>(self);
  FetchResult& r = *t->result;
  const size_t n = size * count;
  if (!t->type_checked) {
    t->type_checked = true;
    if (!t->policy.accept_all_types) {
      const std::string media = MediaTypeOf(r.content_type);
      const auto& accepted = t->options->accepted_content_types;
      if (!media.empty() && !accepted.empty() &&
          std::find(accepted.begin(), accepted.end(), media) == accepted.end()) {
        switch (t->options->other_bodies) {
          case FetcherOptions::OtherBodies::kSkip:
            r.body_skipped = true;
            return 0;  // aborts the transfer: nobody will parse this body
          case FetcherOptions::OtherBodies::kFirstBytes: {
            r.body.append(
                data, static_cast<size_t>(std::min<std::uint64_t>(n, t->policy.max_body_bytes)));
            if (r.body.size() == n && r.content_encoding.empty() && WholeBodyArrived(t->easy, n))
              return n;  // nothing more to come: the body is whole
            r.body_skipped = true;
            return 0;  // aborts the transfer: the archive keeps what came
          }
          case FetcherOptions::OtherBodies::kDownload:
            break;  // read on, like an accepted body
        }
      }
    }
  }
  const std::uint64_t room = t->policy.max_body_bytes - r.body.size();
  if (n > room) {
    // The first max_body_bytes are kept either way: robots.txt and sitemaps read them, an archive
    // stores them marked truncated.
    r.body.append(data, static_cast<size_t>(room));
    if (t->policy.truncate_at_cap) {
      r.body_truncated = true;
    } else {
      t->too_large = true;
    }
    return 0;
  }
  r.body.append(data, n);
  return n;
}

int Fetcher::OnDebug(CURL*, curl_infotype type, char* data, size_t size, void* self) {
  if (type != CURLINFO_HEADER_OUT) return 0;
  std::string& out = static_cast<Transfer*>(self)->result->request_headers;
  // A complete block already there belongs to an earlier request of a followed redirect.
  if (out.ends_with("\r\n\r\n")) out.clear();
  out.append(data, size);
  return 0;
}

}  // namespace urlsieve
