#include "base/encoding/text_encoder.h"

#include <errno.h>
#include <iconv.h>

#include <cstring>
#include <vector>

namespace urlsieve {
namespace {

constexpr std::string_view kReplacementUtf8 = "\xEF\xBF\xBD";  // U+FFFD

iconv_t Cd(void* cd) { return static_cast<iconv_t>(cd); }

// Reads one code point from the front of `s` (non-empty) as the Encoding Standard's UTF-8 decoder
// does (§8.1.1): *length is the bytes it spans, or the maximal invalid subpart (at least one byte),
// for which it returns false.
bool ReadUtf8(std::string_view s, char32_t* code_point, size_t* length) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(s[i]); };
  const uint8_t lead = byte(0);
  *length = 1;
  if (lead < 0x80) {
    *code_point = lead;
    return true;
  }
  size_t needed;
  uint8_t lower = 0x80, upper = 0xBF;
  char32_t cp;
  if (lead >= 0xC2 && lead <= 0xDF) {
    needed = 1;
    cp = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    if (lead == 0xE0) lower = 0xA0;
    if (lead == 0xED) upper = 0x9F;  // no surrogates
    needed = 2;
    cp = lead & 0x0F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    if (lead == 0xF0) lower = 0x90;
    if (lead == 0xF4) upper = 0x8F;  // nothing above U+10FFFF
    needed = 3;
    cp = lead & 0x07;
  } else {
    return false;
  }
  for (size_t i = 1; i <= needed; ++i) {
    if (i >= s.size() || byte(i) < lower || byte(i) > upper) return false;
    cp = (cp << 6) | (byte(i) & 0x3F);
    lower = 0x80;
    upper = 0xBF;
    *length = i + 1;
  }
  *code_point = cp;
  return true;
}

// Appends "&#N;" (the html error mode's reference) to *out.
class HtmlSink final : public TextEncoder::Sink {
 public:
  explicit HtmlSink(std::string* out) : out_(out) {}
  void Bytes(std::string_view bytes) override { out_->append(bytes); }
  void Unmappable(char32_t code_point) override {
    out_->append("&#");
    out_->append(std::to_string(static_cast<uint32_t>(code_point)));
    out_->push_back(';');
  }

 private:
  std::string* out_;
};

}  // namespace

Result<std::unique_ptr<TextEncoder>> TextEncoder::Open(const TextEncoding& encoding) {
  if (encoding.name == "x-user-defined") {  // glibc lacks it; its encoder is arithmetic
    return std::unique_ptr<TextEncoder>(new TextEncoder(encoding.name, nullptr));
  }
  if (encoding.iconv_name.empty()) {
    return Status::InvalidArgument("no encoder for the " + std::string(encoding.name) +
                                   " encoding");
  }
  // Encoding Standard §12.1.2 "Big5 encoder": the decoder reads Big5-HKSCS, but the encoder never
  // writes a pointer below (0xA1 - 0x81) * 157, the HKSCS lead bytes 0x81-0xA0; glibc's plain
  // BIG5 has the same range and also U+20AC at 0xA3E1 (BIG5-HKSCS lacks it). HKSCS characters
  // with lead bytes from 0xA1 on are written as references by it: a known difference.
  const std::string iconv_name(encoding.name == "Big5" ? "BIG5" : encoding.iconv_name);
  const iconv_t cd = iconv_open(iconv_name.c_str(), "UTF-8");
  if (cd == reinterpret_cast<iconv_t>(-1)) {
    const int error = errno;
    return Status::Unsupported("cannot encode to " + std::string(encoding.name) +
                               ": iconv_open(\"" + iconv_name +
                               "\", \"UTF-8\"): " + std::strerror(error));
  }
  return std::unique_ptr<TextEncoder>(new TextEncoder(encoding.name, cd));
}

TextEncoder::~TextEncoder() {
  if (cd_ != nullptr) iconv_close(Cd(cd_));
}

// Encoding Standard §14.5.2 "x-user-defined encoder": ASCII as itself, U+F780..U+F7FF as the
// bytes 0x80..0xFF (what its decoder makes of them), anything else an error.
void TextEncoder::EncodeXUserDefined(std::string_view utf8, Sink* sink) {
  std::string bytes;
  while (!utf8.empty()) {
    char32_t code_point;
    size_t length;
    if (!ReadUtf8(utf8, &code_point, &length)) code_point = 0xFFFD;
    utf8.remove_prefix(length);
    if (code_point < 0x80) {
      bytes.push_back(static_cast<char>(code_point));
    } else if (code_point >= 0xF780 && code_point <= 0xF7FF) {
      bytes.push_back(static_cast<char>(code_point - 0xF780 + 0x80));
    } else {
      if (!bytes.empty()) sink->Bytes(bytes);
      bytes.clear();
      sink->Unmappable(code_point);
    }
  }
  if (!bytes.empty()) sink->Bytes(bytes);
}

void TextEncoder::Reset(Sink* sink) {
  char buf[16];  // the longest shift sequence is three bytes ("ESC ( B")
  char* out = buf;
  size_t room = sizeof(buf);
  iconv(Cd(cd_), nullptr, nullptr, &out, &room);
  if (out > buf) sink->Bytes(std::string_view(buf, static_cast<size_t>(out - buf)));
}

bool TextEncoder::ConvertOne(std::string_view utf8, Sink* sink) {
  char buf[32];                               // one code point: a few bytes, plus a shift sequence
  char* in = const_cast<char*>(utf8.data());  // iconv's signature; it does not write the input
  size_t left = utf8.size();
  char* out = buf;
  size_t room = sizeof(buf);
  if (iconv(Cd(cd_), &in, &left, &out, &room) == static_cast<size_t>(-1)) return false;
  sink->Bytes(std::string_view(buf, static_cast<size_t>(out - buf)));
  return true;
}

Status TextEncoder::Encode(std::string_view utf8, Sink* sink) {
  if (cd_ == nullptr) {
    EncodeXUserDefined(utf8, sink);
    return Status::Ok();
  }
  iconv(Cd(cd_), nullptr, nullptr, nullptr, nullptr);  // the initial state, whatever came before
  char buf[1024];
  char* in = const_cast<char*>(utf8.data());
  size_t left = utf8.size();
  while (left > 0) {
    char* out = buf;
    size_t room = sizeof(buf);
    const size_t converted = iconv(Cd(cd_), &in, &left, &out, &room);
    const int error = errno;
    if (out > buf) sink->Bytes(std::string_view(buf, static_cast<size_t>(out - buf)));
    if (converted != static_cast<size_t>(-1) || error == E2BIG) continue;
    if (error != EILSEQ && error != EINVAL) {
      return Status::IoError("encoding to " + name_ + ": iconv: " + std::strerror(error));
    }
    // iconv stopped at a code point the encoding lacks (EILSEQ), or at bytes that are not UTF-8
    // (EILSEQ, or EINVAL for a sequence cut short at the end). One code point at a time here.
    char32_t code_point;
    size_t length;
    const bool valid = ReadUtf8(std::string_view(in, left), &code_point, &length);
    in += length;
    left -= length;
    if (!valid) {
      code_point = 0xFFFD;
      if (ConvertOne(kReplacementUtf8, sink)) continue;  // GB18030 and the UTFs have it
    }
    Reset(sink);
    sink->Unmappable(code_point);
  }
  Reset(sink);
  return Status::Ok();
}

Status TextEncoder::EncodeHtml(std::string_view utf8, std::string* out) {
  HtmlSink sink(out);
  return Encode(utf8, &sink);
}

Result<TextEncoder*> ThreadEncoder(const TextEncoding& encoding) {
  // One per encoding a thread has met: a few dozen at most (the Encoding Standard's list).
  thread_local std::vector<std::unique_ptr<TextEncoder>> encoders;
  for (const std::unique_ptr<TextEncoder>& encoder : encoders) {
    if (encoder->name() == encoding.name) return encoder.get();
  }
  Result<std::unique_ptr<TextEncoder>> opened = TextEncoder::Open(encoding);
  if (!opened.ok()) return opened.status();
  encoders.push_back(std::move(*opened));
  return encoders.back().get();
}

}  // namespace urlsieve
