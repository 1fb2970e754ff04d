// WarcReader: reads the records of one WARC file written by any crawler, streaming
// (docs/features/content-seen.md, "urlsieve dupes"; the format: docs/usage/dupes.md, "What is
// read").
//
// Input: WARC 1.0 or 1.1 (any "WARC/<digits>.<digits>" version line; header fields, folded lines
// joined; a block of Content-Length bytes; the CRLF CRLF after it, read leniently), plain or gzip'd
// — one gzip member per record (what WarcWriter, Heritrix, wget, warcio write) or several records
// in one member, the whole file one stream included (zlib's inflate, member after member).
// Memory stays bounded whatever the file's size: a record's header is at most
// max_header_bytes, a response's HTTP head at most max_http_head_bytes, and of its payload at most
// max_payload_bytes are kept (the rest is streamed through the digest).
//
// Each record comes out with its WARC header fields of interest. For `response` and `revisit`
// records whose block is an HTTP response (Content-Type application/http), also the HTTP status
// and Content-Type; for responses the payload (the entity body: the block after the HTTP head),
// de-chunked when the stored head says Transfer-Encoding: chunked, its SHA-1 computed over those
// bytes unless the record carries a usable "sha1:" WARC-Payload-Digest, and, when keep_payload asks
// for it, the payload kept with a Content-Encoding gzip, x-gzip or deflate (zlib or raw) removed.
// Other codings (br, zstd, compress) are not decoded: payload_error says so. A head whose
// Transfer-Encoding or Content-Encoding a crawler renamed (WarcWriter's "X-Crawler-" prefix) is
// taken at its word: the payload was stored decoded.
//
// Errors: a file that is not a WARC, a truncated or corrupt one (gzip or WARC syntax) ends the
// reading with a Corruption status naming the file and the offset of the damage (and of the record
// or gzip member it is in); every record before it has been returned. The reader does not resync
// past damage.
// Offsets: `offset` is where a reader seeks to read the record: the file offset of the gzip member
// the record starts in (plain file: of the record itself); `offset_in_member` is the record's
// position in that member's uncompressed data (0 with one member per record).
// Thread-safety: none; one reader per file and thread.
#ifndef URLSIEVE_CRAWLER_OUTPUT_WARC_READER_H_
#define URLSIEVE_CRAWLER_OUTPUT_WARC_READER_H_

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "base/status.h"

namespace urlsieve {

struct WarcReadRecord {
  std::string version;  // "WARC/1.1"
  std::string type;     // WARC-Type as written: "response", "revisit", "request", "warcinfo", ...
  std::string target_uri;
  std::string date;
  std::string record_id;
  std::string payload_digest;  // WARC-Payload-Digest as written ("" when absent)
  std::string truncated;       // WARC-Truncated as written ("" when absent)
  std::string profile;         // revisit: WARC-Profile
  std::string refers_to;       // revisit: WARC-Refers-To
  std::string refers_to_target_uri;
  std::string content_type;  // the record's Content-Type (of its block)
  uint64_t content_length = 0;
  uint64_t offset = 0;            // see the header comment
  uint64_t offset_in_member = 0;  // see the header comment

  // An HTTP response block (response and revisit records with an application/http block).
  bool http = false;
  int status = 0;                     // the status line's code
  std::string http_content_type;      // its Content-Type header ("" when absent)
  std::string http_content_encoding;  // its Content-Encoding header, lowercased ("" when absent)
  bool chunked = false;               // its Transfer-Encoding says chunked: de-chunked here

  // Responses only.
  uint64_t payload_length = 0;  // bytes of the entity body (de-chunked, still content-coded)
  // SHA-1 of the entity body, when computed (no usable sha1 WARC-Payload-Digest).
  std::optional<std::array<uint8_t, 20>> payload_sha1;
  bool payload_kept = false;      // keep_payload asked for it
  std::string payload;            // kept: the entity body without its content coding
  bool payload_complete = false;  // kept and whole: not cut at max_payload_bytes, decoded
  std::string payload_error;      // why not complete (cut, an unsupported or corrupt coding)
};

struct WarcReaderOptions {
  uint64_t max_header_bytes = uint64_t{1} << 20;     // a WARC record's header
  uint64_t max_http_head_bytes = uint64_t{1} << 20;  // a response's status line and headers
  uint64_t max_payload_bytes = uint64_t{16} << 20;   // kept per payload (after decoding)
  // Called once a response's HTTP head is read (http, status and http_content_* are set): true
  // keeps its payload. Unset: no payload is kept.
  std::function<bool(const WarcReadRecord&)> keep_payload;
};

class WarcReader {
 public:
  static Result<std::unique_ptr<WarcReader>> Open(const std::string& path,
                                                  const WarcReaderOptions& options);
  ~WarcReader();

  // The next record into *record: true; false at the end of the file; Corruption (file and
  // offset) on damage, IoError when the file cannot be read. After an error, Next is not called.
  Result<bool> Next(WarcReadRecord* record);

  bool gzipped() const;
  uint64_t file_bytes_read() const;  // of the file, compressed
  uint64_t bytes_read() const;       // of the WARC data, uncompressed

 private:
  struct Impl;
  explicit WarcReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_OUTPUT_WARC_READER_H_
