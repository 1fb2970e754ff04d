#include "dedup/idna_host.h"

#include <idn2.h>

#include <functional>
#include <vector>

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
  // libidn2 costs microseconds per name (NFC, mapping tables, punycode), 50x the rest of a
  // canonicalization, while a crawl sees the same hosts over and over. A small direct-mapped
  // per-thread cache of recent results keeps that cost off the hot path.
  struct Entry {
    std::string domain;
    std::string ascii;
    int rc = 1;  // 1: empty slot
  };
  constexpr size_t kEntries = 1024;
  thread_local std::vector<Entry> cache(kEntries);
  Entry& entry = cache[std::hash<std::string_view>()(domain) % kEntries];
  if (entry.rc == 1 || entry.domain != domain) {
    entry.domain.assign(domain);
    entry.rc = ToAscii(entry.domain, IDN2_NONTRANSITIONAL, &entry.ascii);
    if (entry.rc != IDN2_OK) entry.rc = ToAscii(entry.domain, IDN2_TRANSITIONAL, &entry.ascii);
  }
  if (entry.rc != IDN2_OK) {
    return Status::InvalidArgument(std::string("invalid international host (") +
                                   idn2_strerror_name(entry.rc) + ")");
  }
  out->assign(entry.ascii);
  return Status::Ok();
}

}  // namespace urlsieve
