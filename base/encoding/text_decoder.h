// DecodeToUtf8: text in one of the Encoding Standard's encodings, as UTF-8.
//
// A crawler reads a page in its own encoding (docs/features/encodings.md, "Character encodings")
// and hands gumbo UTF-8. Decoding follows the Encoding Standard's error mode "replacement": a byte
// sequence that is not valid in the encoding becomes one U+FFFD and decoding goes on; a sequence
// cut off by the end of the input becomes one U+FFFD. Nothing makes it fail but a missing glibc
// converter.
//   - UTF-8: validated, and repaired only when invalid (one U+FFFD per maximal subpart, §8.1.1).
//   - UTF-16BE/LE: decoded here (a lone surrogate or an odd last byte is one U+FFFD).
//   - The single-byte encodings: a 128-entry table per encoding, built once from glibc iconv, with
//     the Encoding Standard's few differences applied (base/encoding/text_encoding.cc names them).
//   - x-user-defined: 0x80-0xFF -> U+F780-U+F7FF; replacement: one U+FFFD for any input.
//   - The multi-byte encodings (GBK and gb18030 through glibc's GB18030, Big5, EUC-JP,
//     ISO-2022-JP, Shift_JIS, EUC-KR): glibc iconv. On an invalid sequence iconv says neither how
//     long it is nor how to resume, so one U+FFFD replaces its first byte and decoding resumes at
//     the next; a lead byte with an invalid non-ASCII trail byte may give two U+FFFD where the
//     standard gives one.
// The input is taken as it is: a byte order mark is not skipped (the caller sniffed it).
// Output is bounded by DecodeLimits::max_output_bytes (it stops at a character boundary and says
// so); each input byte gives at most 4 output bytes.
//
// Thread-safety: safe to call from many threads at once. An iconv_t is not thread-safe, so each
// thread keeps its own converters (one per encoding it has met, opened on first use, reset before
// each use, closed when the thread exits); the single-byte tables are built once, under a
// std::call_once, and read-only afterwards.
#ifndef URLSIEVE_BASE_ENCODING_TEXT_DECODER_H_
#define URLSIEVE_BASE_ENCODING_TEXT_DECODER_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "base/status.h"
#include "base/encoding/text_encoding.h"

namespace urlsieve {

struct DecodeLimits {
  size_t max_output_bytes = std::numeric_limits<size_t>::max();
};

struct DecodedText {
  std::string utf8;
  uint64_t replacements = 0;  // U+FFFD written for undecodable or cut-off input
  bool truncated = false;     // output reached DecodeLimits::max_output_bytes; the rest is lost
};

// Decodes `bytes` from `encoding` into UTF-8. Fails only when glibc cannot open a converter
// the encoding needs (a system without gconv modules), naming the encoding.
Result<DecodedText> DecodeToUtf8(std::string_view bytes, const TextEncoding& encoding,
                                 const DecodeLimits& limits = {});

// Whether DecodeToUtf8(bytes, encoding) would give `bytes` unchanged, so that a caller can use
// them without a copy: valid UTF-8 in UTF-8, or pure ASCII in an encoding that maps each ASCII
// byte to itself (every one but UTF-16BE/LE, ISO-2022-JP, whose escapes are ASCII, and
// replacement).
bool DecodesToItself(std::string_view bytes, const TextEncoding& encoding);

// The length of the longest prefix of `bytes` that is valid UTF-8 (== bytes.size() when all of
// it is): the fast path's check, which needs no copy.
size_t ValidUtf8Prefix(std::string_view bytes);

}  // namespace urlsieve

#endif  // URLSIEVE_BASE_ENCODING_TEXT_DECODER_H_
