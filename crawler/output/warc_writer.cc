#include "crawler/output/warc_writer.h"

#include <libdeflate.h>
#include <nettle/sha1.h>

#include <array>
#include <cstdio>
#include <initializer_list>
#include <memory>

#include "base/strings.h"
#include "crawler/output/page_record.h"

namespace urlsieve {
namespace {

constexpr std::string_view kCrlf = "\r\n";
constexpr int kMaxCompressionLevel = 12;  // libdeflate's

class Sha1 {
 public:
  Sha1() { sha1_init(&ctx_); }
  void Update(std::string_view data) {
    sha1_update(&ctx_, data.size(), reinterpret_cast<const uint8_t*>(data.data()));
  }
  // "sha1:" + RFC 4648 §6 base32 (uppercase, no padding needed: 160 bits = 32 characters).
  std::string WarcDigest() {
    uint8_t d[SHA1_DIGEST_SIZE];
    sha1_digest(&ctx_, SHA1_DIGEST_SIZE, d);
    static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    std::string out = "sha1:";
    uint32_t buffer = 0;
    int bits = 0;
    for (uint8_t byte : d) {
      buffer = (buffer << 8) | byte;
      bits += 8;
      while (bits >= 5) {
        out.push_back(kAlphabet[(buffer >> (bits - 5)) & 31]);
        bits -= 5;
      }
    }
    return out;
  }

 private:
  sha1_ctx ctx_;
};

// A header field's name or value without its blanks (and a stray CR at its end).
std::string_view TrimHeaderField(std::string_view s) { return TrimRight(TrimLeft(s), " \t\r"); }

constexpr std::string_view kProfileServerNotModified =
    "http://netpreserve.org/warc/1.1/revisit/server-not-modified";
constexpr std::string_view kProfileIdenticalPayloadDigest =
    "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";

// The response head rewritten to describe the stored payload (see the header comment), with CRLF
// line ends and the terminating empty line. `payload_length` null (a revisit: the payload is the
// original's, whose length the head still tells) leaves Content-Length alone.
std::string NormalizeHead(std::string_view head, bool payload_decoded,
                          const std::string* payload_length) {
  std::string out;
  out.reserve(head.size() + 64);
  bool first = true;
  bool length_fixed = false;
  while (!head.empty()) {
    size_t nl = head.find('\n');
    std::string_view line = head.substr(0, nl);
    head.remove_prefix(nl == std::string_view::npos ? head.size() : nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) break;  // end of the head
    if (!first) {
      size_t colon = line.find(':');
      std::string_view name =
          TrimHeaderField(line.substr(0, colon == std::string_view::npos ? 0 : colon));
      std::string_view value =
          colon == std::string_view::npos ? "" : TrimHeaderField(line.substr(colon + 1));
      bool stale = EqualsIgnoreAsciiCase(name, "transfer-encoding") ||
                   (payload_decoded && EqualsIgnoreAsciiCase(name, "content-encoding")) ||
                   (payload_length != nullptr && EqualsIgnoreAsciiCase(name, "content-length") &&
                    value != *payload_length);
      if (stale) {
        out += "X-Crawler-";
        length_fixed = payload_length != nullptr;
      }
    }
    first = false;
    out += line;
    out += kCrlf;
  }
  if (length_fixed) {
    out += "Content-Length: ";
    out += *payload_length;
    out += kCrlf;
  }
  out += kCrlf;
  return out;
}

// A libdeflate compressor per thread and level: one holds the match finder's tables (allocating
// them costs more than compressing a page), and a compressor must not be shared between threads.
libdeflate_compressor* ThreadCompressor(int level) {
  struct Free {
    void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
  };
  thread_local std::array<std::unique_ptr<libdeflate_compressor, Free>, kMaxCompressionLevel + 1>
      compressors;
  auto& slot = compressors[static_cast<size_t>(level)];
  if (slot == nullptr) slot.reset(libdeflate_alloc_compressor(level));
  return slot.get();
}

// A buffer reused by each thread: a fresh one per record is page-faulted in again and again
// (measured: the largest kernel cost of --warc). One that grew past kKeptScratch for a large body
// is released after use. Holds: the uncompressed record (kInput), then the members (kMembers).
class ScratchBuffer {
 public:
  enum Use { kInput, kMembers };
  explicit ScratchBuffer(Use use) : buffer_(Buffers()[use]) { buffer_.clear(); }
  ~ScratchBuffer() {
    if (buffer_.capacity() > kKeptScratch) std::string().swap(buffer_);
  }
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;
  std::string* get() { return &buffer_; }

 private:
  static constexpr size_t kKeptScratch = size_t{4} << 20;
  static std::array<std::string, 2>& Buffers() {
    thread_local std::array<std::string, 2> buffers;
    return buffers;
  }
  std::string& buffer_;
};

// Appends to *out the concatenation of `parts` compressed as one complete gzip member (RFC 1952).
// libdeflate compresses whole buffers, so the parts are first copied into one (a memcpy next to
// the compression); docs/formats/outputs.md, "Outputs".
Status AppendGzipMember(std::initializer_list<std::string_view> parts, int level,
                        std::string* out) {
  libdeflate_compressor* compressor = ThreadCompressor(level);
  if (compressor == nullptr) {
    return Status::IoError("cannot allocate a gzip compressor for the WARC (out of memory)");
  }
  ScratchBuffer scratch(ScratchBuffer::kInput);
  std::string& input = *scratch.get();
  for (std::string_view p : parts) input.append(p);
  const size_t start = out->size();
  out->resize(start + libdeflate_gzip_compress_bound(compressor, input.size()));
  const size_t written = libdeflate_gzip_compress(compressor, input.data(), input.size(),
                                                  out->data() + start, out->size() - start);
  if (written == 0) {
    out->resize(start);
    return Status::IoError("gzip compression of a WARC record of " + std::to_string(input.size()) +
                           " bytes failed");
  }
  out->resize(start + written);
  return Status::Ok();
}

// The block digest of a response (head + payload) and, when `payload_digest` is not null, the
// payload's, in one pass over the payload: chunk by chunk, both hashes read it while it is in
// the L1 cache.
std::string BlockDigest(std::string_view head, std::string_view payload,
                        std::string* payload_digest) {
  constexpr size_t kChunk = 16 << 10;
  Sha1 block_sha;
  block_sha.Update(head);
  if (payload_digest == nullptr) {
    block_sha.Update(payload);
    return block_sha.WarcDigest();
  }
  Sha1 payload_sha;
  for (size_t at = 0; at < payload.size(); at += kChunk) {
    std::string_view chunk = payload.substr(at, kChunk);
    block_sha.Update(chunk);
    payload_sha.Update(chunk);
  }
  *payload_digest = payload_sha.WarcDigest();
  return block_sha.WarcDigest();
}

// Header fields of one record, in order; WARC 1.1 §4.
class RecordHeader {
 public:
  RecordHeader& Add(std::string_view name, std::string_view value) {
    text_ += name;
    text_ += ": ";
    text_ += value;
    text_ += kCrlf;
    return *this;
  }
  std::string Finish(size_t block_size) {
    Add("Content-Length", std::to_string(block_size));
    return "WARC/1.1\r\n" + text_ + "\r\n";
  }

 private:
  std::string text_;
};

// The fields a record of an exchange starts with (WARC 1.1 §5), in this writer's order; a request
// also names its response or revisit record (WARC-Concurrent-To).
RecordHeader ExchangeRecordHeader(std::string_view type, std::string_view record_id,
                                  std::string_view date, std::string_view target_uri,
                                  std::string_view concurrent_to, std::string_view warcinfo_id,
                                  std::string_view ip_address) {
  RecordHeader header;
  header.Add("WARC-Type", type)
      .Add("WARC-Record-ID", record_id)
      .Add("WARC-Date", date)
      .Add("WARC-Target-URI", target_uri);
  if (!concurrent_to.empty()) header.Add("WARC-Concurrent-To", concurrent_to);
  header.Add("WARC-Warcinfo-ID", warcinfo_id);
  if (!ip_address.empty()) header.Add("WARC-IP-Address", ip_address);
  return header;
}

}  // namespace

Status WarcWriter::AppendMembers(
    std::initializer_list<std::initializer_list<std::string_view>> members) {
  // Compressed outside the lock, the members go in with one append: adjacent in the file.
  ScratchBuffer compressed(ScratchBuffer::kMembers);
  for (std::initializer_list<std::string_view> parts : members) {
    URLSIEVE_RETURN_IF_ERROR(AppendGzipMember(parts, options_.compression_level, compressed.get()));
  }
  std::lock_guard<std::mutex> lock(mu_);
  return file_->Append(*compressed.get());
}

std::string WarcWriter::RequestHeader(std::string_view request_id, std::string_view concurrent_to,
                                      std::string_view date, std::string_view target_uri,
                                      std::string_view ip_address, std::string_view request) {
  RecordHeader header = ExchangeRecordHeader("request", request_id, date, target_uri, concurrent_to,
                                             warcinfo_id_, ip_address);
  header.Add("Content-Type", "application/http;msgtype=request")
      .Add("WARC-Block-Digest", WarcSha1Digest(request));
  return header.Finish(request.size());
}

std::string WarcSha1Digest(std::string_view data) {
  Sha1 sha;
  sha.Update(data);
  return sha.WarcDigest();
}

Result<std::unique_ptr<WarcWriter>> WarcWriter::Open(const std::string& path,
                                                     const WarcWriterOptions& options) {
  if (options.compression_level < 1 || options.compression_level > kMaxCompressionLevel) {
    return Status::InvalidArgument("WARC compression level must be 1..12, not " +
                                   std::to_string(options.compression_level));
  }
  return Start(path, options, AppendFile::Open(path, options.truncate_to));
}

Result<std::unique_ptr<WarcWriter>> WarcWriter::Open(const std::string& path,
                                                     const WarcWriterOptions& options,
                                                     VerifiedPrefix prefix) {
  if (options.compression_level < 1 || options.compression_level > kMaxCompressionLevel) {
    return Status::InvalidArgument("WARC compression level must be 1..12, not " +
                                   std::to_string(options.compression_level));
  }
  return Start(path, options, AppendFile::Open(path, std::move(prefix)));
}

Result<std::unique_ptr<WarcWriter>> WarcWriter::Start(const std::string& path,
                                                      const WarcWriterOptions& options,
                                                      Result<std::unique_ptr<AppendFile>> file) {
  if (!file.ok()) return file.status();
  bool fresh = (*file)->size() == 0;
  std::unique_ptr<WarcWriter> writer(new WarcWriter(std::move(*file), options));
  if (fresh) {
    size_t slash = path.rfind('/');
    URLSIEVE_RETURN_IF_ERROR(
        writer->WriteWarcinfo(slash == std::string::npos ? path : path.substr(slash + 1)));
  }
  return writer;
}

WarcWriter::WarcWriter(std::unique_ptr<AppendFile> file, const WarcWriterOptions& options)
    : options_(options), rng_(std::random_device{}()), file_(std::move(file)) {
  warcinfo_id_ = NewRecordId();
}

std::string WarcWriter::NewRecordId() {
  uint64_t hi, lo;
  {
    std::lock_guard<std::mutex> lock(id_mu_);
    hi = rng_();
    lo = rng_();
  }
  // RFC 9562 §5.4: version 4, variant 10.
  hi = (hi & ~0xF000ull) | 0x4000ull;
  lo = (lo & ~(3ull << 62)) | (2ull << 62);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "<urn:uuid:%08x-%04x-%04x-%04x-%012llx>",
                static_cast<unsigned>(hi >> 32), static_cast<unsigned>((hi >> 16) & 0xFFFF),
                static_cast<unsigned>(hi & 0xFFFF), static_cast<unsigned>(lo >> 48),
                static_cast<unsigned long long>(lo & 0xFFFFFFFFFFFFull));
  return buf;
}

Status WarcWriter::WriteWarcinfo(const std::string& filename) {
  std::string block = "software: " + options_.software +
                      "\r\nformat: WARC File Format 1.1\r\n"
                      "conformsTo: "
                      "https://iipc.github.io/warc-specifications/specifications/warc-format/"
                      "warc-1.1/\r\n";
  if (!options_.user_agent.empty())
    block += "http-header-user-agent: " + options_.user_agent + "\r\n";
  std::string header = RecordHeader()
                           .Add("WARC-Type", "warcinfo")
                           .Add("WARC-Record-ID", warcinfo_id_)
                           .Add("WARC-Date", FormatUtc(std::chrono::system_clock::now(), false))
                           .Add("WARC-Filename", filename)
                           .Add("Content-Type", "application/warc-fields")
                           .Add("WARC-Block-Digest", WarcSha1Digest(block))
                           .Finish(block.size());
  return AppendMembers({{header, block, "\r\n\r\n"}});
}

Status WarcWriter::WriteExchange(const WarcExchange& ex, WarcRecordRef* response) {
  const std::string date = FormatUtc(ex.date, /*with_millis=*/false);
  const std::string request_id = NewRecordId();
  const std::string response_id =
      ex.response_id.empty() ? NewRecordId() : std::string(ex.response_id);

  std::string request_text =
      RequestHeader(request_id, response_id, date, ex.target_uri, ex.ip_address, ex.request);

  const std::string payload_length = std::to_string(ex.payload.size());
  const std::string head = NormalizeHead(ex.response_head, ex.payload_decoded, &payload_length);
  // One pass over the payload: the caller's digest when it has one (the crawl's fetch record),
  // else computed next to the block digest; docs/formats/outputs.md, "Outputs".
  std::string payload_digest(ex.payload_digest);
  const std::string block_digest =
      BlockDigest(head, ex.payload, ex.payload_digest.empty() ? &payload_digest : nullptr);
  RecordHeader response_header =
      ExchangeRecordHeader("response", response_id, date, ex.target_uri, /*concurrent_to=*/"",
                           warcinfo_id_, ex.ip_address);
  response_header.Add("Content-Type", "application/http;msgtype=response")
      .Add("WARC-Block-Digest", block_digest)
      .Add("WARC-Payload-Digest", payload_digest);
  if (!ex.truncated.empty()) response_header.Add("WARC-Truncated", ex.truncated);
  std::string response_text = response_header.Finish(head.size() + ex.payload.size());

  URLSIEVE_RETURN_IF_ERROR(AppendMembers(
      {{request_text, ex.request, "\r\n\r\n"}, {response_text, head, ex.payload, "\r\n\r\n"}}));
  if (response != nullptr) {
    *response = WarcRecordRef{response_id, std::string(ex.target_uri), date, payload_digest};
  }
  return Status::Ok();
}

Status WarcWriter::WriteRevisit(const WarcRevisit& rv) {
  const std::string date = FormatUtc(rv.date, /*with_millis=*/false);
  const std::string request_id = NewRecordId();
  const std::string revisit_id = NewRecordId();
  std::string request_text =
      RequestHeader(request_id, revisit_id, date, rv.target_uri, rv.ip_address, rv.request);

  // The block is the response head only (WARC 1.1 §6.7.1): the payload is the original's.
  const std::string head = NormalizeHead(rv.response_head, rv.payload_decoded, nullptr);
  const WarcRecordRef* ref = rv.refers_to;
  RecordHeader header = ExchangeRecordHeader("revisit", revisit_id, date, rv.target_uri,
                                             /*concurrent_to=*/"", warcinfo_id_, rv.ip_address);
  header.Add("WARC-Profile", rv.profile == WarcRevisit::Profile::kServerNotModified
                                 ? kProfileServerNotModified
                                 : kProfileIdenticalPayloadDigest);
  if (ref != nullptr && !ref->record_id.empty()) header.Add("WARC-Refers-To", ref->record_id);
  if (ref != nullptr && !ref->target_uri.empty())
    header.Add("WARC-Refers-To-Target-URI", ref->target_uri);
  if (ref != nullptr && !ref->date.empty()) header.Add("WARC-Refers-To-Date", ref->date);
  header.Add("Content-Type", "application/http;msgtype=response")
      .Add("WARC-Block-Digest", WarcSha1Digest(head));
  if (ref != nullptr && !ref->payload_digest.empty())
    header.Add("WARC-Payload-Digest", ref->payload_digest);
  std::string revisit_text = header.Finish(head.size());

  return AppendMembers({{request_text, rv.request, "\r\n\r\n"}, {revisit_text, head, "\r\n\r\n"}});
}

Result<OutputMark> WarcWriter::Sync() {
  std::lock_guard<std::mutex> lock(mu_);
  return file_->Sync();
}

}  // namespace urlsieve
