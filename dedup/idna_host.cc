#include "dedup/idna_host.h"

#include <idn2.h>

#include "dedup/url_chars.h"

namespace urlsieve {
namespace {

int ToAscii(const std::string& input, int flags, std::string* out) {
  char* result = nullptr;
  const int rc = idn2_to_ascii_8z(input.c_str(), &result, flags | IDN2_NFC_INPUT);
  if (rc == IDN2_OK) out->assign(result);
  idn2_free(result);
  return rc;
}

}  // namespace

Status DomainToAscii(std::string_view domain, std::string* out) {
  // libidn2 reads a NUL-terminated string, so an embedded NUL would silently cut the host short.
  if (domain.find('\0') != std::string_view::npos) {
    return Status::InvalidArgument("forbidden host code point");
  }
  thread_local std::string input;
  input.assign(domain);
  int rc = ToAscii(input, IDN2_NONTRANSITIONAL, out);
  if (rc != IDN2_OK) rc = ToAscii(input, IDN2_TRANSITIONAL, out);
  if (rc != IDN2_OK) {
    return Status::InvalidArgument(std::string("invalid international host (") +
                                   idn2_strerror_name(rc) + ")");
  }
  return Status::Ok();
}

bool HasPunycodeLabel(std::string_view host) {
  size_t label = 0;
  for (;;) {
    if (url_chars::EqualsLower(host.substr(label, 4), "xn--")) return true;
    const size_t dot = host.find('.', label);
    if (dot == std::string_view::npos) return false;
    label = dot + 1;
  }
}

}  // namespace urlsieve
