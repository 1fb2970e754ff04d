#include "url/url_syntax.h"

#include <utility>

namespace urlsieve {

Status InvalidUrl(std::string reason) { return Status::InvalidArgument(std::move(reason)); }

Status UrlTooLong(size_t size, size_t max) {
  return InvalidUrl("url too long (" + std::to_string(size) + " > " + std::to_string(max) +
                    " bytes)");
}

Status UnsupportedScheme(std::string_view scheme) {
  std::string lower;
  for (char c : scheme.substr(0, 32)) lower += url_chars::ToLower(c);
  return InvalidUrl("unsupported scheme '" + lower + "'");
}

}  // namespace urlsieve
