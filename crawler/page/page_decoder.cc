#include "crawler/page/page_decoder.h"

#include <utility>

namespace urlsieve {

Result<DecodedPage> DecodedPage::Decode(std::string_view body, std::string_view content_type,
                                        const TextEncoding& default_encoding,
                                        const DecodeLimits& limits) {
  DecodedPage page;
  page.found_ = SniffPageEncoding(body, content_type, default_encoding);
  // Encoding Standard §6 "decode": the BOM is not part of the text.
  const std::string_view text = body.substr(page.found_.bom_length);
  if (text.size() <= limits.max_output_bytes && DecodesToItself(text, *page.found_.encoding)) {
    page.view_ = text;
    return page;
  }
  Result<DecodedText> decoded = DecodeToUtf8(text, *page.found_.encoding, limits);
  if (!decoded.ok()) return decoded.status();
  page.utf8_ = std::move(decoded->utf8);
  page.copied_ = true;
  page.replacements_ = decoded->replacements;
  page.truncated_ = decoded->truncated;
  return page;
}

}  // namespace urlsieve
