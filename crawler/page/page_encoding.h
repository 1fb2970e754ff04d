// SniffPageEncoding: which encoding an HTML page is in, found as a browser finds it.
//
// HTML §13.2.3.1 "Determining the character encoding" (the encoding sniffing algorithm), without
// the steps only a browser has (a user override, a parent document, a cache, frequency analysis):
//   1. a byte order mark (UTF-8, UTF-16BE, UTF-16LE) — it wins over everything;
//   2. the HTTP Content-Type charset parameter, when its label names an encoding;
//   3. the prescan of the first 1024 bytes (§13.2.3.2) for <meta charset> or
//      <meta http-equiv=content-type content="...; charset=...">, else an XML declaration's
//      encoding (<?xml ... encoding="...">, even in text/html);
//   4. the crawl's default (crawl option default_encoding; windows-1252 unless set).
// An XML document (application/xhtml+xml, */*+xml, text/xml) is read as an XML parser reads it:
// 1, 2, then the encoding of its XML declaration (XML 1.0 §4.3.3), else UTF-8.
// An unknown label at 2 or 3 is no answer: the next step decides. A page is decoded once, with
// the answer (docs/features/encodings.md, "Character encodings"); a <meta> past the first 1024
// bytes, which makes a browser parse the page again, is not looked at.
// Thread-safety: pure functions.
#ifndef URLSIEVE_CRAWLER_PAGE_PAGE_ENCODING_H_
#define URLSIEVE_CRAWLER_PAGE_PAGE_ENCODING_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/encoding/text_encoding.h"

namespace urlsieve {

// kMeta: a <meta> found by the prescan, or the XML declaration of an XML document; kDefault: the
// crawl's default, or UTF-8 for an XML document.
enum class EncodingSource : uint8_t { kBom, kHttp, kMeta, kDefault };
std::string_view EncodingSourceName(EncodingSource source);  // "bom", "http", "meta", "default"

struct PageEncoding {
  const TextEncoding* encoding = nullptr;  // never nullptr in a result of SniffPageEncoding
  EncodingSource source = EncodingSource::kDefault;
  size_t bom_length = 0;  // bytes of the byte order mark to skip before decoding (kBom only)
};

// The prescan reads at most this many bytes (§13.2.3.1 step 5: "the first 1024 bytes").
inline constexpr size_t kPrescanBytes = 1024;

// The whole algorithm over `body` (the bytes as received, Content-Encoding removed) and the
// response's Content-Type header value ("" when absent).
PageEncoding SniffPageEncoding(std::string_view body, std::string_view content_type,
                               const TextEncoding& default_encoding);

// Encoding Standard §6 "BOM sniff": the encoding a byte order mark at the start of `bytes` names
// (and its length), or nullptr.
const TextEncoding* SniffBom(std::string_view bytes, size_t* bom_length);

// The value of the charset parameter of a Content-Type header (MIME Sniffing §4.4 "parse a MIME
// type": parameters split on ';', names ASCII case-insensitive, the first charset wins, a value
// quoted or not), or nullopt when there is none or the type itself is not valid.
std::optional<std::string> ContentTypeCharset(std::string_view content_type);

// §13.2.3.2 "prescan a byte stream to determine its encoding" over `bytes` (the caller passes the
// first kPrescanBytes): the encoding a <meta> declares, UTF-16 read as UTF-8 and x-user-defined as
// windows-1252 as the spec says, else that of an XML declaration ("get an XML encoding"); nullptr
// when none is found.
const TextEncoding* PrescanForEncoding(std::string_view bytes);

// Whether a Content-Type names an XML media type (application/xhtml+xml, application/xml,
// text/xml, anything +xml), whose documents an XML parser reads.
bool IsXmlMediaType(std::string_view content_type);

// §13.2.3.2 "get an XML encoding": the encoding an XML declaration at the start of `bytes`
// names (<?xml version="1.0" encoding="gbk"?>), UTF-16 read as UTF-8; nullptr when none.
const TextEncoding* XmlDeclarationEncoding(std::string_view bytes);

// The HTML Standard's "algorithm for extracting a character encoding from a meta element" over
// the content attribute of <meta http-equiv=content-type> ("text/html; charset=gbk"), or nullptr.
const TextEncoding* EncodingFromMetaContent(std::string_view content);

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_PAGE_PAGE_ENCODING_H_
