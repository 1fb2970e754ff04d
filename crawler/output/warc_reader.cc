#include "crawler/output/warc_reader.h"

#include <fcntl.h>
#include <nettle/sha1.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "base/strings.h"

namespace urlsieve {
namespace {

constexpr size_t kFileChunk = 256 << 10;  // read(2) size, and how much is inflated at once
constexpr size_t kMaxChunkLine = 1024;    // a chunk-size line of a chunked payload

bool StartsWithNoCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && EqualsIgnoreAsciiCase(s.substr(0, prefix.size()), prefix);
}

// "sha1:" and 32 base32 characters (RFC 4648 §6, either case): a digest the caller can use
// instead of hashing the payload again.
bool IsUsableSha1Digest(std::string_view digest) {
  if (!StartsWithNoCase(digest, "sha1:") || digest.size() != 5 + 32) return false;
  return std::all_of(digest.begin() + 5, digest.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '2' && c <= '7');
  });
}

// Printable excerpt of bytes for an error message (never raw control bytes on a terminal).
std::string Excerpt(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 40)) {
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      out.push_back(c);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02x", u);
      out += hex;
    }
  }
  if (s.size() > 40) out += "...";
  return out;
}

// The file's bytes, inflated when it is gzip'd (member after member), with the compressed offset
// of the member each uncompressed byte comes from.
class Source {
 public:
  Source(std::string path, int fd) : path_(std::move(path)), fd_(fd), raw_(kFileChunk) {}
  ~Source() {
    if (zs_ready_) inflateEnd(&zs_);
    if (fd_ >= 0) ::close(fd_);
  }

  // Sniffs gzip (the magic 1f 8b at offset 0).
  Status Start() {
    URLSIEVE_RETURN_IF_ERROR(Refill());
    gzip_ = raw_end_ - raw_pos_ >= 2 && static_cast<unsigned char>(raw_[0]) == 0x1f &&
            static_cast<unsigned char>(raw_[1]) == 0x8b;
    if (gzip_) {
      std::memset(&zs_, 0, sizeof(zs_));
      if (inflateInit2(&zs_, 16 + MAX_WBITS) != Z_OK) {
        return Status::IoError(path_ + ": cannot start zlib's inflate (out of memory)");
      }
      zs_ready_ = true;
    }
    return Status::Ok();
  }

  // Appends up to n uncompressed bytes to *out; 0 only at the clean end of the file.
  Result<size_t> Read(size_t n, std::string* out) {
    const size_t start = out->size();
    out->resize(start + n);
    char* dest = out->data() + start;
    size_t produced = 0;
    Status status = gzip_ ? Inflate(dest, n, &produced) : Copy(dest, n, &produced);
    out->resize(start + produced);
    total_out_ += produced;
    if (!status.ok()) return status;
    return produced;
  }

  // The gzip member holding uncompressed offset u (at or after every earlier lookup's): its
  // compressed offset, and u's offset in it. Plain file: (u, 0).
  std::pair<uint64_t, uint64_t> Locate(uint64_t u) {
    if (!gzip_) return {u, 0};
    while (members_.size() >= 2 && members_[1].ustart <= u) members_.pop_front();
    if (members_.empty()) return {0, u};
    return {members_.front().cstart, u - members_.front().ustart};
  }

  bool gzip() const { return gzip_; }
  uint64_t file_bytes_read() const { return raw_offset_ + raw_pos_; }
  uint64_t total_out() const { return total_out_; }
  const std::string& path() const { return path_; }

 private:
  struct Member {
    uint64_t ustart;  // uncompressed offset of its first byte
    uint64_t cstart;  // its offset in the file
  };

  // More bytes into raw_ (keeping the unread ones); eof_ once read(2) returns 0.
  Status Refill() {
    if (eof_) return Status::Ok();
    if (raw_pos_ > 0) {
      std::memmove(raw_.data(), raw_.data() + raw_pos_, raw_end_ - raw_pos_);
      raw_offset_ += raw_pos_;
      raw_end_ -= raw_pos_;
      raw_pos_ = 0;
    }
    while (raw_end_ < raw_.size()) {
      ssize_t got = ::read(fd_, raw_.data() + raw_end_, raw_.size() - raw_end_);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) {
        return Status::IoError(path_ + ": read failed at offset " +
                               std::to_string(raw_offset_ + raw_end_) + ": " +
                               std::strerror(errno));
      }
      if (got == 0) {
        eof_ = true;
        break;
      }
      raw_end_ += static_cast<size_t>(got);
      break;  // enough for now: one read(2) per refill
    }
    return Status::Ok();
  }

  Status Copy(char* dest, size_t n, size_t* produced) {
    while (*produced < n) {
      if (raw_pos_ == raw_end_) {
        URLSIEVE_RETURN_IF_ERROR(Refill());
        if (raw_pos_ == raw_end_) break;  // end of file
      }
      size_t take = std::min(n - *produced, raw_end_ - raw_pos_);
      std::memcpy(dest + *produced, raw_.data() + raw_pos_, take);
      raw_pos_ += take;
      *produced += take;
    }
    return Status::Ok();
  }

  Status Inflate(char* dest, size_t n, size_t* produced) {
    while (*produced < n) {
      if (!in_member_) {
        if (raw_end_ - raw_pos_ < 2) URLSIEVE_RETURN_IF_ERROR(Refill());
        if (raw_pos_ == raw_end_) return Status::Ok();  // the end, between members
        const uint64_t at = file_bytes_read();
        if (raw_end_ - raw_pos_ < 2 || static_cast<unsigned char>(raw_[raw_pos_]) != 0x1f ||
            static_cast<unsigned char>(raw_[raw_pos_ + 1]) != 0x8b) {
          return Status::Corruption(
              path_ + ": offset " + std::to_string(at) +
              ": not a gzip member (after the member at offset " + std::to_string(member_start_) +
              "): found \"" +
              Excerpt(std::string_view(raw_.data() + raw_pos_, raw_end_ - raw_pos_)) + "\"");
        }
        inflateReset(&zs_);
        in_member_ = true;
        member_start_ = at;
        members_.push_back({total_out_ + *produced, at});
      }
      if (raw_pos_ == raw_end_) {
        URLSIEVE_RETURN_IF_ERROR(Refill());
        if (raw_pos_ == raw_end_) {
          return Status::Corruption(path_ + ": offset " + std::to_string(file_bytes_read()) +
                                    ": the file ends inside the gzip member at offset " +
                                    std::to_string(member_start_) + " (truncated)");
        }
      }
      zs_.next_in = reinterpret_cast<Bytef*>(raw_.data() + raw_pos_);
      zs_.avail_in = static_cast<uInt>(raw_end_ - raw_pos_);
      zs_.next_out = reinterpret_cast<Bytef*>(dest + *produced);
      zs_.avail_out = static_cast<uInt>(std::min<size_t>(n - *produced, 1u << 30));
      const uInt out_before = zs_.avail_out;
      int rc = inflate(&zs_, Z_NO_FLUSH);
      raw_pos_ = raw_end_ - zs_.avail_in;
      *produced += out_before - zs_.avail_out;
      if (rc == Z_STREAM_END) {
        in_member_ = false;
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        return Status::Corruption(path_ + ": offset " + std::to_string(file_bytes_read()) +
                                  ": corrupt gzip data in the member at offset " +
                                  std::to_string(member_start_) + " (" +
                                  (zs_.msg != nullptr ? zs_.msg : "zlib error") + ")");
      }
    }
    return Status::Ok();
  }

  const std::string path_;
  int fd_;
  std::vector<char> raw_;
  size_t raw_pos_ = 0;
  size_t raw_end_ = 0;
  uint64_t raw_offset_ = 0;  // file offset of raw_[0]
  bool eof_ = false;
  bool gzip_ = false;
  z_stream zs_{};
  bool zs_ready_ = false;
  bool in_member_ = false;
  uint64_t member_start_ = 0;
  std::deque<Member> members_;
  uint64_t total_out_ = 0;
};

// Removes a Content-Encoding (gzip, x-gzip, deflate) from a payload fed in pieces, keeping at most
// `cap` bytes of the result.
class PayloadSink {
 public:
  PayloadSink(std::string* out, uint64_t cap, std::string_view coding, std::string* error)
      : out_(out), cap_(cap), error_(error) {
    if (coding.empty() || coding == "identity") return;
    if (coding == "gzip" || coding == "x-gzip") {
      mode_ = kGzip;
    } else if (coding == "deflate") {
      mode_ = kDeflate;  // zlib (RFC 1950) or, as some servers send, raw (RFC 1951): sniffed
    } else {
      *error_ = "Content-Encoding " + std::string(coding) + " is not decoded";
      mode_ = kStopped;
    }
  }
  ~PayloadSink() {
    if (zs_ready_) inflateEnd(&zs_);
  }

  void Feed(std::string_view data) {
    if (data.empty() || mode_ == kStopped) return;
    if (mode_ == kIdentity) {
      Append(data);
      return;
    }
    if (!zs_ready_) {
      int bits = 16 + MAX_WBITS;
      if (mode_ == kDeflate) {
        // RFC 1950 §2.2: CM = 8 in the low nibble and the 16-bit header a multiple of 31.
        auto b0 = static_cast<unsigned char>(data[0]);
        auto b1 = data.size() > 1 ? static_cast<unsigned char>(data[1]) : 0;
        bits = ((b0 & 0x0f) == 8 && ((b0 << 8) | b1) % 31 == 0) ? MAX_WBITS : -MAX_WBITS;
      }
      std::memset(&zs_, 0, sizeof(zs_));
      if (inflateInit2(&zs_, bits) != Z_OK) return Stop("cannot start zlib's inflate");
      zs_ready_ = true;
    }
    if (ended_) return;  // bytes after the end of the coded stream: ignored
    zs_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    zs_.avail_in = static_cast<uInt>(data.size());
    char buf[64 << 10];
    while (zs_.avail_in > 0 && mode_ != kStopped) {
      zs_.next_out = reinterpret_cast<Bytef*>(buf);
      zs_.avail_out = sizeof(buf);
      int rc = inflate(&zs_, Z_NO_FLUSH);
      Append(std::string_view(buf, sizeof(buf) - zs_.avail_out));
      if (rc == Z_STREAM_END) {
        ended_ = true;
        return;
      }
      if (rc != Z_OK && rc != Z_BUF_ERROR) {
        return Stop(std::string("corrupt Content-Encoding data (") +
                    (zs_.msg != nullptr ? zs_.msg : "zlib error") + ")");
      }
      if (rc == Z_BUF_ERROR && zs_.avail_out == sizeof(buf)) break;  // no progress possible
    }
  }

  void Finish() {
    if (zs_ready_ && !ended_ && mode_ != kStopped && error_->empty()) {
      *error_ = "the Content-Encoding stream ends early";
    }
  }

 private:
  enum Mode { kIdentity, kGzip, kDeflate, kStopped };

  void Append(std::string_view data) {
    if (out_->size() + data.size() > cap_) {
      out_->append(data.substr(0, cap_ - out_->size()));
      return Stop("payload larger than " + std::to_string(cap_) + " bytes: cut");
    }
    out_->append(data);
  }
  void Stop(std::string why) {
    if (error_->empty()) *error_ = std::move(why);
    mode_ = kStopped;
  }

  std::string* out_;
  uint64_t cap_;
  std::string* error_;
  Mode mode_ = kIdentity;
  z_stream zs_{};
  bool zs_ready_ = false;
  bool ended_ = false;
};

// Removes chunked transfer coding (RFC 9112 §7.1) from bytes fed in pieces. A payload whose first
// chunk-size line does not parse was stored de-chunked under a stale header: passed through as is
// (what warcio does).
class Dechunker {
 public:
  explicit Dechunker(std::string* error) : error_(error) {}

  template <typename Emit>
  void Feed(std::string_view data, Emit&& emit) {
    while (!data.empty()) {
      switch (state_) {
        case kRaw:
          emit(data);
          return;
        case kDone:
          return;  // trailers and anything after them
        case kData: {
          size_t take = static_cast<size_t>(std::min<uint64_t>(left_, data.size()));
          emit(data.substr(0, take));
          data.remove_prefix(take);
          left_ -= take;
          if (left_ == 0) state_ = kDataEnd;
          break;
        }
        case kSize:
        case kDataEnd:
        case kTrailer: {
          size_t nl = data.find('\n');
          line_.append(data.substr(0, nl == std::string_view::npos ? data.size() : nl));
          if (line_.size() > kMaxChunkLine) return Fail(emit);
          if (nl == std::string_view::npos) return;
          data.remove_prefix(nl + 1);
          std::string_view line = TrimRight(line_, "\r");
          if (state_ == kDataEnd) {
            if (!line.empty()) return Fail(emit);
            state_ = kSize;
          } else if (state_ == kTrailer) {
            if (line.empty()) state_ = kDone;
          } else if (!ParseSize(line)) {
            if (first_) {  // not chunked after all: the line and the rest are the payload
              state_ = kRaw;
              emit(std::string_view(line_).substr(0, line_.size()));
              emit("\n");
              line_.clear();
              break;
            }
            return Fail(emit);
          } else {
            first_ = false;
            state_ = left_ == 0 ? kTrailer : kData;
          }
          line_.clear();
          break;
        }
      }
    }
  }

  // At the end of the payload: a first line without a line end was not a chunk size either.
  template <typename Emit>
  void Finish(Emit&& emit) {
    if (state_ == kSize && first_ && !line_.empty()) emit(std::string_view(line_));
  }

 private:
  enum State { kSize, kData, kDataEnd, kTrailer, kDone, kRaw };

  bool ParseSize(std::string_view line) {
    line = Trim(line.substr(0, line.find(';')));
    if (line.empty() || line.size() > 15) return false;
    uint64_t n = 0;
    for (char c : line) {
      int v = (c >= '0' && c <= '9')   ? c - '0'
              : (c >= 'a' && c <= 'f') ? c - 'a' + 10
              : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                       : -1;
      if (v < 0) return false;
      n = n * 16 + static_cast<uint64_t>(v);
    }
    left_ = n;
    return true;
  }
  template <typename Emit>
  void Fail(Emit&&) {
    if (error_->empty()) *error_ = "malformed chunked transfer coding";
    state_ = kDone;
  }

  std::string* error_;
  State state_ = kSize;
  bool first_ = true;
  uint64_t left_ = 0;
  std::string line_;
};

class Sha1 {
 public:
  Sha1() { sha1_init(&ctx_); }
  void Update(std::string_view data) {
    sha1_update(&ctx_, data.size(), reinterpret_cast<const uint8_t*>(data.data()));
  }
  std::array<uint8_t, 20> Digest() {
    std::array<uint8_t, 20> d{};
    sha1_digest(&ctx_, SHA1_DIGEST_SIZE, d.data());
    return d;
  }

 private:
  sha1_ctx ctx_;
};

}  // namespace

struct WarcReader::Impl {
  Impl(std::unique_ptr<Source> source, const WarcReaderOptions& reader_options)
      : src(std::move(source)), options(reader_options) {}

  std::unique_ptr<Source> src;
  WarcReaderOptions options;
  std::string buf;     // uncompressed bytes read ahead
  size_t pos = 0;      // next unread byte of buf
  uint64_t ubase = 0;  // uncompressed offset of buf[0]
  bool end = false;    // the source has no more bytes
  // Why it has none, when it is damaged: reported once the records before the damage are read.
  Status pending;

  uint64_t Here() const { return ubase + pos; }
  size_t Buffered() const { return buf.size() - pos; }

  // At least n bytes buffered, or fewer at the end of the file.
  Status Ensure(size_t n) {
    while (Buffered() < n && !end) {
      if (pos > 0 && pos >= buf.size() / 2) {
        buf.erase(0, pos);
        ubase += pos;
        pos = 0;
      }
      Result<size_t> got = src->Read(std::max(kFileChunk, n - Buffered()), &buf);
      if (!got.ok()) {
        pending = got.status();
        end = true;
      } else if (*got == 0) {
        end = true;
      }
    }
    return Status::Ok();
  }

  Status Damaged(uint64_t record_at, const std::string& what) const {
    auto [offset, in_member] = src->Locate(record_at);
    std::string where = src->path() + ": the record at offset " + std::to_string(offset);
    if (src->gzip()) where += " (+" + std::to_string(in_member) + " in its gzip member)";
    return Status::Corruption(where + ": " + what);
  }

  // One line (without CR LF) of a header of at most `limit` bytes, counted in *used.
  Result<std::string_view> Line(uint64_t record_at, uint64_t limit, uint64_t* used,
                                const char* what) {
    size_t scanned = 0;
    for (;;) {
      size_t nl = std::string_view(buf).find('\n', pos + scanned);
      if (nl != std::string::npos) {
        size_t len = nl - pos;
        if (*used + len + 1 > limit) break;
        std::string_view line(buf.data() + pos, len);
        pos = nl + 1;
        *used += len + 1;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        return line;
      }
      scanned = Buffered();
      if (*used + scanned > limit) break;
      if (end) {
        if (!pending.ok()) return pending;
        return Damaged(record_at, std::string("the file ends inside its ") + what + " (truncated)");
      }
      URLSIEVE_RETURN_IF_ERROR(Ensure(Buffered() + 1));
    }
    return Damaged(record_at,
                   std::string(what) + " is longer than " + std::to_string(limit) + " bytes");
  }

  // Passes the next n bytes of the block to consume(string_view), piece by piece.
  template <typename Consume>
  Status Stream(uint64_t record_at, uint64_t n, uint64_t block_size, Consume&& consume) {
    while (n > 0) {
      if (Buffered() == 0) {
        URLSIEVE_RETURN_IF_ERROR(Ensure(1));
        if (Buffered() == 0) {
          if (!pending.ok()) return pending;
          return Damaged(record_at, "the file ends inside its block of " +
                                        std::to_string(block_size) + " bytes, " +
                                        std::to_string(n) + " bytes short (truncated)");
        }
      }
      size_t take = static_cast<size_t>(std::min<uint64_t>(n, Buffered()));
      consume(std::string_view(buf.data() + pos, take));
      pos += take;
      n -= take;
    }
    return Status::Ok();
  }

  Result<bool> Next(WarcReadRecord* r);
  Status ReadHttp(uint64_t record_at, WarcReadRecord* r, uint64_t block);
};

Result<bool> WarcReader::Impl::Next(WarcReadRecord* r) {
  *r = WarcReadRecord();
  // Between records: the CRLF CRLF that ends the last one, read leniently (any CR and LF).
  for (;;) {
    URLSIEVE_RETURN_IF_ERROR(Ensure(1));
    if (Buffered() == 0) {
      if (!pending.ok()) return pending;
      return false;
    }
    char c = buf[pos];
    if (c != '\r' && c != '\n') break;
    ++pos;
  }
  const uint64_t record_at = Here();
  std::tie(r->offset, r->offset_in_member) = src->Locate(record_at);
  URLSIEVE_RETURN_IF_ERROR(Ensure(16));
  if (std::string_view(buf).substr(pos, 5) != "WARC/") {
    if (Buffered() < 5 && !pending.ok()) return pending;
    std::string where = src->path() + ": offset " + std::to_string(r->offset);
    if (src->gzip()) where += " (+" + std::to_string(r->offset_in_member) + " in its gzip member)";
    return Status::Corruption(where + ": not a WARC record: found \"" +
                              Excerpt(std::string_view(buf).substr(pos)) + "\"");
  }
  uint64_t used = 0;
  Result<std::string_view> version =
      Line(record_at, options.max_header_bytes, &used, "WARC header");
  if (!version.ok()) return version.status();
  r->version = std::string(TrimRight(*version));
  std::optional<uint64_t> length;
  std::string* last = nullptr;  // the field a folded line continues
  for (;;) {
    Result<std::string_view> line = Line(record_at, options.max_header_bytes, &used, "WARC header");
    if (!line.ok()) return line.status();
    if (line->empty()) break;
    if ((*line)[0] == ' ' || (*line)[0] == '\t') {  // WARC 1.0 §4: a folded line
      if (last != nullptr) *last += (last->empty() ? "" : " ") + std::string(Trim(*line));
      continue;
    }
    size_t colon = line->find(':');
    if (colon == std::string_view::npos) {
      return Damaged(record_at, "a WARC header line without a colon: \"" + Excerpt(*line) + "\"");
    }
    std::string_view name = Trim(line->substr(0, colon));
    std::string value(Trim(line->substr(colon + 1)));
    last = nullptr;
    auto is = [&](std::string_view n) { return EqualsIgnoreAsciiCase(name, n); };
    if (is("Content-Length")) {
      uint64_t n = 0;
      if (value.empty() || value.size() > 18 ||
          !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return Damaged(record_at, "a bad Content-Length \"" + Excerpt(value) + "\"");
      }
      for (char c : value) n = n * 10 + static_cast<uint64_t>(c - '0');
      length = n;
      continue;
    }
    std::string* field = is("WARC-Type")                   ? &r->type
                         : is("WARC-Target-URI")           ? &r->target_uri
                         : is("WARC-Date")                 ? &r->date
                         : is("WARC-Record-ID")            ? &r->record_id
                         : is("WARC-Payload-Digest")       ? &r->payload_digest
                         : is("WARC-Truncated")            ? &r->truncated
                         : is("WARC-Profile")              ? &r->profile
                         : is("WARC-Refers-To")            ? &r->refers_to
                         : is("WARC-Refers-To-Target-URI") ? &r->refers_to_target_uri
                         : is("Content-Type")              ? &r->content_type
                                                           : nullptr;
    if (field != nullptr && field->empty()) {
      *field = std::move(value);
      last = field;
    }
  }
  if (!length) return Damaged(record_at, "no Content-Length");
  r->content_length = *length;
  // WARC-Target-URI is often written as <uri> by WARC/0.x-era tools: the brackets are not part of
  // it.
  if (r->target_uri.size() >= 2 && r->target_uri.front() == '<' && r->target_uri.back() == '>') {
    r->target_uri = r->target_uri.substr(1, r->target_uri.size() - 2);
  }

  const bool http = (r->type == "response" || r->type == "revisit") &&
                    StartsWithNoCase(r->content_type, "application/http");
  if (http && *length > 0) {
    URLSIEVE_RETURN_IF_ERROR(ReadHttp(record_at, r, *length));
  } else {
    URLSIEVE_RETURN_IF_ERROR(Stream(record_at, *length, *length, [](std::string_view) {}));
  }
  return true;
}

Status WarcReader::Impl::ReadHttp(uint64_t record_at, WarcReadRecord* r, uint64_t block) {
  // The HTTP head: status line, fields, an empty line; all inside the block.
  const uint64_t head_limit = std::min(block, options.max_http_head_bytes);
  uint64_t used = 0;
  URLSIEVE_RETURN_IF_ERROR(Ensure(static_cast<size_t>(std::min<uint64_t>(head_limit, 1 << 16))));
  std::string_view probe = std::string_view(buf).substr(pos, 5);
  bool head_ok = probe == "HTTP/";
  bool head_done = false;
  if (head_ok) {
    // A head that does not end within the block (or the limit) leaves the record without HTTP.
    std::string_view rest(buf.data() + pos,
                          static_cast<size_t>(std::min<uint64_t>(Buffered(), head_limit)));
    if (rest.find("\r\n\r\n") == std::string_view::npos &&
        rest.find("\n\n") == std::string_view::npos) {
      URLSIEVE_RETURN_IF_ERROR(Ensure(static_cast<size_t>(head_limit)));
      rest = std::string_view(buf.data() + pos,
                              static_cast<size_t>(std::min<uint64_t>(Buffered(), head_limit)));
      head_ok = rest.find("\r\n\r\n") != std::string_view::npos ||
                rest.find("\n\n") != std::string_view::npos;
    }
  }
  if (head_ok) {
    Result<std::string_view> status_line = Line(record_at, head_limit, &used, "HTTP head");
    if (!status_line.ok()) return status_line.status();
    // "HTTP/1.1 200 OK": the code is the 3 digits after the first space.
    size_t sp = status_line->find(' ');
    std::string_view code =
        sp == std::string_view::npos ? std::string_view() : Trim(status_line->substr(sp + 1));
    code = code.substr(0, 3);
    if (code.size() == 3 &&
        std::all_of(code.begin(), code.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      r->status = (code[0] - '0') * 100 + (code[1] - '0') * 10 + (code[2] - '0');
    }
    for (;;) {
      Result<std::string_view> line = Line(record_at, head_limit, &used, "HTTP head");
      if (!line.ok()) return line.status();
      if (line->empty()) break;
      size_t colon = line->find(':');
      if (colon == std::string_view::npos) continue;
      std::string_view name = Trim(line->substr(0, colon));
      std::string_view value = Trim(line->substr(colon + 1));
      if (EqualsIgnoreAsciiCase(name, "Content-Type") && r->http_content_type.empty()) {
        r->http_content_type = std::string(value);
      } else if (EqualsIgnoreAsciiCase(name, "Content-Encoding")) {
        r->http_content_encoding = AsciiLowercase(value);
      } else if (EqualsIgnoreAsciiCase(name, "Transfer-Encoding")) {
        r->chunked = AsciiLowercase(value).find("chunked") != std::string::npos;
      }
    }
    head_done = true;
    r->http = r->status != 0;
  }
  const uint64_t rest = block - used;
  if (!head_done || r->type != "response") {
    return Stream(record_at, rest, block, [](std::string_view) {});
  }

  // The payload: de-chunked -> SHA-1 (unless the record's digest will do) -> decoded, kept.
  const bool hash = !IsUsableSha1Digest(r->payload_digest);
  r->payload_kept = options.keep_payload && options.keep_payload(*r);
  Sha1 sha;
  std::string payload_error;
  std::optional<PayloadSink> sink;
  if (r->payload_kept) {
    sink.emplace(&r->payload, options.max_payload_bytes, r->http_content_encoding, &payload_error);
  }
  auto entity = [&](std::string_view piece) {
    r->payload_length += piece.size();
    if (hash) sha.Update(piece);
    if (sink) sink->Feed(piece);
  };
  Dechunker dechunker(&payload_error);
  Status streamed = r->chunked
                        ? Stream(record_at, rest, block,
                                 [&](std::string_view piece) { dechunker.Feed(piece, entity); })
                        : Stream(record_at, rest, block, entity);
  URLSIEVE_RETURN_IF_ERROR(streamed);
  if (r->chunked) dechunker.Finish(entity);
  if (sink) sink->Finish();
  if (hash) r->payload_sha1 = sha.Digest();
  r->payload_error = std::move(payload_error);
  r->payload_complete = r->payload_kept && r->payload_error.empty();
  return Status::Ok();
}

WarcReader::WarcReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
WarcReader::~WarcReader() = default;

Result<std::unique_ptr<WarcReader>> WarcReader::Open(const std::string& path,
                                                     const WarcReaderOptions& options) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::IoError(path + ": cannot open: " + std::strerror(errno));
  auto source = std::make_unique<Source>(path, fd);
  URLSIEVE_RETURN_IF_ERROR(source->Start());
  return std::unique_ptr<WarcReader>(
      new WarcReader(std::make_unique<Impl>(std::move(source), options)));
}

Result<bool> WarcReader::Next(WarcReadRecord* record) { return impl_->Next(record); }
bool WarcReader::gzipped() const { return impl_->src->gzip(); }
uint64_t WarcReader::file_bytes_read() const { return impl_->src->file_bytes_read(); }
uint64_t WarcReader::bytes_read() const { return impl_->Here(); }

}  // namespace urlsieve
