// TextEncoder: UTF-8 text to the bytes of one encoding (the WHATWG Encoding Standard's encoders),
// through glibc's iconv.
//
// A browser sends the query of a link found in a page in a legacy encoding in that encoding (the
// URL Standard's "percent-encode after encoding", docs/features/canonicalization.md, "Queries in
// the document's encoding"), and a crawler must send the same bytes. A code point the encoding
// cannot represent is an encoder error (Encoding Standard §4.1 "process an item"): the "html" error
// mode writes it as "&#N;" (N decimal, EncodeHtml); the URL parser writes "%26%23N%3B" itself, so
// Encode hands it to the caller instead of writing anything.
//
// Input is UTF-8; a byte sequence that is not UTF-8 is read as U+FFFD, as the Encoding Standard's
// UTF-8 decoder reads it (one U+FFFD per maximal invalid subpart), never an error.
//
// Thread-safety: a TextEncoder owns an iconv_t, which carries conversion state and is not
// thread-safe, so a TextEncoder is not either: use one per thread. ThreadEncoder() keeps one per
// thread and encoding, opened on first use, with no lock at all.
#ifndef URLSIEVE_BASE_ENCODING_TEXT_ENCODER_H_
#define URLSIEVE_BASE_ENCODING_TEXT_ENCODER_H_

#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "base/encoding/text_encoding.h"

namespace urlsieve {

class TextEncoder {
 public:
  // Where Encode puts its output, in order.
  class Sink {
   public:
    virtual void Bytes(std::string_view bytes) = 0;    // encoded text
    virtual void Unmappable(char32_t code_point) = 0;  // a code point the encoding lacks
   protected:
    ~Sink() = default;
  };

  // An encoder for `encoding`: through iconv, or by hand for x-user-defined. "replacement" has
  // none (its output encoding is UTF-8). Errors name the encoding when iconv does not know it.
  static Result<std::unique_ptr<TextEncoder>> Open(const TextEncoding& encoding);
  ~TextEncoder();
  TextEncoder(const TextEncoder&) = delete;
  TextEncoder& operator=(const TextEncoder&) = delete;

  const std::string& name() const { return name_; }  // the encoding's name: "GBK"

  // Encodes `utf8` into `sink`. A stateful encoding (ISO-2022-JP) is back in its initial state at
  // the end and before each Unmappable, so what the sink writes there is read as ASCII.
  Status Encode(std::string_view utf8, Sink* sink);

  // The Encoding Standard's "encode" with error mode "html": appends the bytes to *out, a code
  // point the encoding lacks as "&#N;".
  Status EncodeHtml(std::string_view utf8, std::string* out);

 private:
  TextEncoder(std::string_view name, void* cd) : name_(name), cd_(cd) {}
  // Converts one code point's UTF-8 on its own; false when the encoding lacks it.
  bool ConvertOne(std::string_view utf8, Sink* sink);
  // Writes what returns a stateful encoding to its initial state.
  void Reset(Sink* sink);
  void EncodeXUserDefined(std::string_view utf8, Sink* sink);

  std::string name_;
  void* cd_;  // iconv_t; nullptr for x-user-defined, which glibc lacks
};

// This thread's encoder for `encoding` (opened on first use, kept until the thread ends).
Result<TextEncoder*> ThreadEncoder(const TextEncoding& encoding);

}  // namespace urlsieve

#endif  // URLSIEVE_BASE_ENCODING_TEXT_ENCODER_H_
