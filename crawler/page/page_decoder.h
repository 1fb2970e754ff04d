// DecodedPage: an HTML page's body as UTF-8, read in the encoding a browser would read it in.
//
// Finds the encoding (SniffPageEncoding: BOM, HTTP charset, <meta> prescan, the crawl's default)
// and decodes the body with it (DecodeToUtf8: undecodable bytes become U+FFFD), so that gumbo,
// which reads UTF-8 only, sees the characters the page has (docs/features/encodings.md, "Character
// encodings"). The fast path copies nothing: a body that is valid UTF-8 in UTF-8, or pure ASCII
// in an ASCII-compatible encoding, is used in place (after its BOM).
// Thread-safety: a value; Decode may run on many threads at once (base/encoding/text_decoder.h).
#ifndef URLSIEVE_CRAWLER_PAGE_PAGE_DECODER_H_
#define URLSIEVE_CRAWLER_PAGE_PAGE_DECODER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "base/encoding/text_decoder.h"
#include "base/encoding/text_encoding.h"
#include "crawler/page/page_encoding.h"

namespace urlsieve {

class DecodedPage {
 public:
  // Sniffs and decodes `body` (Content-Encoding already removed); `content_type` is the
  // response's Content-Type header ("" when absent). The result may refer to `body`: keep it
  // alive and unchanged while the result is used. Fails only when glibc has no converter for the
  // encoding found (TextDecoder), naming it.
  static Result<DecodedPage> Decode(std::string_view body, std::string_view content_type,
                                    const TextEncoding& default_encoding,
                                    const DecodeLimits& limits = {});

  std::string_view html() const { return copied_ ? std::string_view(utf8_) : view_; }
  const TextEncoding& encoding() const { return *found_.encoding; }
  EncodingSource source() const { return found_.source; }
  uint64_t replacements() const { return replacements_; }  // U+FFFD written while decoding
  bool truncated() const { return truncated_; }            // DecodeLimits::max_output_bytes cut it
  bool copied() const { return copied_; }  // false: html() is (part of) the body itself

 private:
  PageEncoding found_;
  std::string_view view_;  // the body after its BOM, when it decodes to itself
  std::string utf8_;       // else the decoded text
  bool copied_ = false;
  uint64_t replacements_ = 0;
  bool truncated_ = false;
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_PAGE_PAGE_DECODER_H_
