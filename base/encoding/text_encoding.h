// TextEncoding: one of the character encodings of the WHATWG Encoding Standard, found by label.
//
// Pages name their encoding with a label ("latin1", "gb2312", "x-sjis", " UTF-8 "); the Encoding
// Standard §4.2 ("Names and labels") maps every label a browser accepts to one encoding, and a
// crawler must map them the same way to read a page as a browser reads it
// (docs/features/encodings.md, "Character encodings"). Unknown labels give nullptr: the caller
// falls through to its next source (HTTP charset, then the <meta> prescan, then the default).
// Thread-safety: the encodings are immutable statics; share the pointers freely.
#ifndef URLSIEVE_BASE_ENCODING_TEXT_ENCODING_H_
#define URLSIEVE_BASE_ENCODING_TEXT_ENCODING_H_

#include <span>
#include <string_view>

namespace urlsieve {

struct TextEncoding {
  std::string_view name;  // the Encoding Standard's name: "UTF-8", "windows-1252", "GBK"
  // What glibc's iconv_open calls it: the closest glibc encoding ("" for "replacement" and
  // "x-user-defined", which glibc lacks; base/encoding/text_encoding.cc names the differences). The
  // decoder (base/encoding/text_decoder.h) corrects the few bytes that glibc maps otherwise.
  std::string_view iconv_name;
};

// The encoding a label names (§4.2 "get an encoding": ASCII whitespace trimmed, ASCII
// case-insensitive), or nullptr for an unknown label.
const TextEncoding* EncodingForLabel(std::string_view label);

const TextEncoding& Utf8Encoding();
const TextEncoding& Windows1252Encoding();  // the HTML default for an undeclared page
const TextEncoding& Utf16BeEncoding();
const TextEncoding& Utf16LeEncoding();
const TextEncoding& ReplacementEncoding();  // ISO-2022-KR, HZ, ...: decodes to one U+FFFD
const TextEncoding& XUserDefinedEncoding();

// The 40 encodings of the Encoding Standard, in its order; EncodingForLabel returns pointers
// into this span.
std::span<const TextEncoding> AllEncodings();

// §4.3 "get an output encoding": the encoding a URL's query is percent-encoded in for a document
// in `encoding` — UTF-8 for "replacement", "UTF-16BE" and "UTF-16LE", else `encoding` itself.
const TextEncoding& OutputEncoding(const TextEncoding& encoding);

}  // namespace urlsieve

#endif  // URLSIEVE_BASE_ENCODING_TEXT_ENCODING_H_
