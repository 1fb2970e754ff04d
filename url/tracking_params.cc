#include "url/tracking_params.h"

#include <algorithm>
#include <cstdint>
#include <iterator>

#include "url/url_chars.h"

namespace urlsieve {
namespace {

// <0, 0 or >0 as `name` lowercased compares to `entry` (lowercase), bytewise.
int CompareLower(std::string_view name, std::string_view entry) {
  const size_t n = std::min(name.size(), entry.size());
  for (size_t i = 0; i < n; ++i) {
    const auto a = static_cast<uint8_t>(url_chars::kLower[static_cast<uint8_t>(name[i])]);
    const auto b = static_cast<uint8_t>(entry[i]);
    if (a != b) return a < b ? -1 : 1;
  }
  if (name.size() == entry.size()) return 0;
  return name.size() < entry.size() ? -1 : 1;
}

bool IsHostChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_';
}

bool IsNameChar(char c) { return url_chars::Is(c, url_chars::kUnreserved); }

std::string Quoted(std::string_view text) {
  std::string quoted(1, '"');
  quoted.append(text.substr(0, 80)).push_back('"');
  return quoted;
}

}  // namespace

bool IsTrackingParam(std::string_view name) {
  if (name.empty()) return false;
  const auto exact = std::lower_bound(
      std::begin(kTrackingParams), std::end(kTrackingParams), name,
      [](std::string_view entry, std::string_view n) { return CompareLower(n, entry) > 0; });
  if (exact != std::end(kTrackingParams) && CompareLower(name, *exact) == 0) return true;
  // The only prefix that can start `name` is the last one not after it: a prefix p of name sorts
  // at or before it, and any entry between the two would start with p, which the table forbids.
  const auto after = std::upper_bound(
      std::begin(kTrackingParamPrefixes), std::end(kTrackingParamPrefixes), name,
      [](std::string_view n, std::string_view entry) { return CompareLower(n, entry) < 0; });
  if (after == std::begin(kTrackingParamPrefixes)) return false;
  const std::string_view prefix = *std::prev(after);
  return name.size() >= prefix.size() && CompareLower(name.substr(0, prefix.size()), prefix) == 0;
}

std::string CheckTrackingException(std::string_view exception) {
  const size_t colon = exception.find(':');
  if (colon == std::string_view::npos) {
    return Quoted(exception) + " is not HOST:NAME (e.g. example.com:utm_source)";
  }
  const std::string_view host = exception.substr(0, colon);
  const std::string_view name = exception.substr(colon + 1);
  if (host.empty() || host.front() == '.' || host.back() == '.' ||
      !std::all_of(host.begin(), host.end(), IsHostChar)) {
    return Quoted(exception) +
           ": HOST must be a host name of ASCII letters, digits, '-', '.' and '_' (an IDN in its "
           "xn-- form)";
  }
  if (name.empty() || !std::all_of(name.begin(), name.end(), IsNameChar)) {
    return Quoted(exception) +
           ": NAME must be a parameter name of ASCII letters, digits, '-', '.', '_' and '~'";
  }
  return "";
}

Status CheckTrackingExceptions(std::span<const std::string> exceptions) {
  for (const std::string& exception : exceptions) {
    std::string why = CheckTrackingException(exception);
    if (!why.empty()) return Status::InvalidArgument("tracking exception " + why);
  }
  return Status::Ok();
}

std::vector<std::string> NormalizeTrackingExceptions(std::span<const std::string> exceptions) {
  std::vector<std::string> normalized;
  for (const std::string& exception : exceptions) {
    if (!CheckTrackingException(exception).empty()) continue;
    std::string lower = exception;
    for (char& c : lower) c = url_chars::ToLower(c);
    normalized.push_back(std::move(lower));
  }
  std::sort(normalized.begin(), normalized.end());
  normalized.erase(std::unique(normalized.begin(), normalized.end()), normalized.end());
  return normalized;
}

bool KeepsTrackingParam(std::span<const std::string> exceptions, std::string_view host,
                        std::string_view name) {
  for (std::string_view exception : exceptions) {
    const size_t colon = exception.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view on = exception.substr(0, colon);
    if (CompareLower(name, exception.substr(colon + 1)) != 0) continue;
    if (host == on) return true;
    if (host.size() > on.size() && host.ends_with(on) && host[host.size() - on.size() - 1] == '.') {
      return true;
    }
  }
  return false;
}

}  // namespace urlsieve
