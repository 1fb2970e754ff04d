// WarcWriter: writes the crawl's fetches as WARC 1.1 (ISO 28500:2017), one gzip member per record.
//
// The file starts with a `warcinfo` record; each fetch adds a `request` record and a `response`
// record (application/http;msgtype=request|response) tied by WARC-Concurrent-To, each with
// WARC-Record-ID (<urn:uuid:v4>), WARC-Date (UTC, seconds), WARC-Target-URI, WARC-IP-Address when
// known, WARC-Block-Digest and (response) WARC-Payload-Digest as "sha1:" + base32 (RFC 4648 §6).
// Every record is its own gzip member, so readers can seek to any record and a crash loses at most
// the torn last member (Sync()/truncate_to/VerifiedPrefix work as in JsonlWriter).
//
// The response block is the status line and headers as received, then the payload as the crawler
// kept it. libcurl removes chunked transfer coding and, when asked, content coding, so the stored
// payload may not match the stored headers. Following Common Crawl / StormCrawler practice the
// headers that no longer describe the payload are kept under an "X-Crawler-" prefix
// (Transfer-Encoding always, Content-Encoding when payload_decoded, a Content-Length that differs
// from the stored payload) and a correct Content-Length is added: the record stays a valid HTTP
// message that standard readers (warcio, jwarc, pywb) parse and replay, and nothing is lost.
// A payload that is not the whole body (cut at the size limit, or only its first bytes kept, or
// the transfer failed mid-body) names why in WARC-Truncated (WARC 1.1 §5.13: length, time,
// disconnect, unspecified): a replay never shows a cut payload as complete, and the original
// Content-Length, kept as X-Crawler-Content-Length, tells how long the body was.
//
// A re-fetch whose payload is not stored again (WriteRevisit) is a `request` record and a `revisit`
// record (WARC 1.1 §6.7): WARC-Profile server-not-modified (a 304) or identical-payload-digest (a
// 200 whose payload digest equals the original's); WARC-Refers-To, WARC-Refers-To-Target-URI,
// WARC-Refers-To-Date and WARC-Payload-Digest from the original's WarcRecordRef (each omitted when
// unknown); the block is the response head only (application/http;msgtype=response), rewritten as
// above except Content-Length, which still describes the original payload. WARC-Truncated is not
// used: nothing was cut, the payload is elsewhere by design.
// Cost (docs/formats/outputs.md, "Outputs"): each member is compressed by libdeflate (level 1 by
// default) with a compressor and buffers per thread; the payload is hashed once (the block digest)
// when the caller passes the payload digest, else both digests are computed in one pass.
// Thread-safety: all methods are safe to call concurrently; compression happens outside the lock.
#ifndef URLSIEVE_CRAWLER_OUTPUT_WARC_WRITER_H_
#define URLSIEVE_CRAWLER_OUTPUT_WARC_WRITER_H_

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include "base/status.h"
#include "crawler/output/append_file.h"

namespace urlsieve {

// One HTTP exchange to archive. The views must stay valid during WriteExchange.
struct WarcExchange {
  std::string_view target_uri;                 // the URL requested (of this hop, for a redirect)
  std::string_view ip_address;                 // empty when unknown
  std::chrono::system_clock::time_point date;  // when the request was sent
  std::string_view request;  // request line + headers as sent ("GET / HTTP/1.1\r\n...\r\n\r\n")
  std::string_view response_head;  // status line + headers as received (CRLF or LF line ends)
  std::string_view payload;        // the body as kept
  bool payload_decoded = false;    // libcurl removed a Content-Encoding from the payload
  // Why the payload is not the whole body: the WARC-Truncated value ("length", "time",
  // "disconnect", "unspecified"); empty: it is whole.
  std::string_view truncated;
  // WarcSha1Digest(payload) when the caller computed it already (the crawl's fetch record keeps
  // it); empty: the writer computes it.
  std::string_view payload_digest;
  // The response record's WARC-Record-ID, from NewRecordId(), when the caller must name it before
  // the record is written (the content-seen set stores it for the revisits of later copies);
  // empty: the writer makes one.
  std::string_view response_id = {};
};

// What a revisit record refers to: the response record of the original capture
// (WARC 1.1 §6.7.2: WARC-Refers-To, WARC-Refers-To-Target-URI, WARC-Refers-To-Date).
struct WarcRecordRef {
  std::string record_id;  // "<urn:uuid:...>"
  std::string target_uri;
  std::string date;            // WARC-Date of the original, "2026-11-21T22:30:06Z"
  std::string payload_digest;  // "sha1:..." of the original payload
};

// A re-fetch whose payload is not stored again (WARC 1.1 §6.7): the server answered 304 Not
// Modified, or a 200 whose payload digest equals the original's.
struct WarcRevisit {
  enum class Profile : uint8_t {
    kServerNotModified,       // http://netpreserve.org/warc/1.1/revisit/server-not-modified
    kIdenticalPayloadDigest,  // http://netpreserve.org/warc/1.1/revisit/identical-payload-digest
  };
  Profile profile = Profile::kServerNotModified;
  std::string_view target_uri;
  std::string_view ip_address;
  std::chrono::system_clock::time_point date;
  std::string_view request;        // as sent (a request record precedes the revisit)
  std::string_view response_head;  // status line + headers as received (the revisit's block)
  bool payload_decoded = false;    // the original's payload had its Content-Encoding removed
  const WarcRecordRef* refers_to = nullptr;  // the original capture; null when unknown
};

struct WarcWriterOptions {
  std::string software = "urlsieve/0.1.0";
  std::string user_agent;               // recorded in warcinfo when set
  std::optional<uint64_t> truncate_to;  // on --resume: the size stored at the last checkpoint
  // libdeflate level, 1 (fast) .. 12; 1 keeps --warc within 10 % of a crawl without it
  // (docs/formats/outputs.md, "Outputs").
  int compression_level = 1;
};

class WarcWriter {
 public:
  // Opens (creating or appending to) `path`; a new or emptied file gets the warcinfo record.
  static Result<std::unique_ptr<WarcWriter>> Open(const std::string& path,
                                                  const WarcWriterOptions& options);
  // Continues after a prefix checked against the checkpoint (see AppendFile); ignores
  // options.truncate_to.
  static Result<std::unique_ptr<WarcWriter>> Open(const std::string& path,
                                                  const WarcWriterOptions& options,
                                                  VerifiedPrefix prefix);

  // Appends the request and the response record of one fetch, adjacent in the file; `response`
  // (when not null) receives what a later revisit record refers to.
  Status WriteExchange(const WarcExchange& exchange, WarcRecordRef* response = nullptr);
  // Appends the request record and the revisit record of one re-fetch (header-only block: the
  // response head), adjacent in the file.
  Status WriteRevisit(const WarcRevisit& revisit);
  // Makes every record durable; returns the mark to store in the checkpoint.
  Result<OutputMark> Sync();
  // A new "<urn:uuid:...>" (version 4, RFC 9562 §5.4).
  std::string NewRecordId();

 private:
  WarcWriter(std::unique_ptr<AppendFile> file, const WarcWriterOptions& options);
  static Result<std::unique_ptr<WarcWriter>> Start(const std::string& path,
                                                   const WarcWriterOptions& options,
                                                   Result<std::unique_ptr<AppendFile>> file);
  // The header of the request record `request_id` (its block: `request`).
  std::string RequestHeader(std::string_view request_id, std::string_view concurrent_to,
                            std::string_view date, std::string_view target_uri,
                            std::string_view ip_address, std::string_view request);
  Status WriteWarcinfo(const std::string& filename);
  // Appends gzip members (each the concatenation of its parts) with one append, adjacent.
  Status AppendMembers(std::initializer_list<std::initializer_list<std::string_view>> members);

  const WarcWriterOptions options_;
  std::string warcinfo_id_;
  std::mutex id_mu_;
  std::mt19937_64 rng_;  // guarded by id_mu_
  std::mutex mu_;
  std::unique_ptr<AppendFile> file_;  // guarded by mu_
};

// "sha1:" + base32 of the SHA-1 of data: the WARC digest form.
std::string WarcSha1Digest(std::string_view data);

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_OUTPUT_WARC_WRITER_H_
