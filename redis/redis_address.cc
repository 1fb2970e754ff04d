#include "redis/redis_address.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "base/strings.h"

namespace urlsieve {
namespace {

bool ParseIntInRange(std::string_view text, int min, int max, int* out) {
  const std::optional<int64_t> value = ParseInt64(text);
  if (!value || *value < min || *value > max) return false;
  *out = static_cast<int>(*value);
  return true;
}

// The URL with any password replaced, so that an error message never shows it.
std::string Redacted(std::string_view url) {
  size_t at = url.rfind('@');
  size_t scheme_end = url.find("://");
  if (at == std::string_view::npos || scheme_end == std::string_view::npos || at < scheme_end) {
    return std::string(url);
  }
  std::string_view userinfo = url.substr(scheme_end + 3, at - scheme_end - 3);
  size_t colon = userinfo.find(':');
  std::string out(url.substr(0, scheme_end + 3));
  out += userinfo.substr(0, colon);
  if (colon != std::string_view::npos) out += ":***";
  out += url.substr(at);
  return out;
}

}  // namespace

Result<RedisAddress> RedisAddress::Parse(std::string_view url) {
  auto bad = [&](std::string_view why) {
    std::string message = "Redis address \"";
    message += Redacted(url);
    message += "\": ";
    message += why;
    message += " (expected redis://[:password@]host:port[/db])";
    return Status::InvalidArgument(std::move(message));
  };
  constexpr std::string_view kScheme = "redis://";
  if (url.substr(0, kScheme.size()) != kScheme) return bad("not a redis:// URL");
  std::string_view rest = url.substr(kScheme.size());
  RedisAddress address;
  if (size_t at = rest.rfind('@'); at != std::string_view::npos) {
    std::string_view userinfo = rest.substr(0, at);
    size_t colon = userinfo.find(':');
    if (colon == std::string_view::npos) return bad("credentials need a ':' before the password");
    address.user = std::string(userinfo.substr(0, colon));
    address.password = std::string(userinfo.substr(colon + 1));
    rest = rest.substr(at + 1);
  }
  std::string_view hostport = rest;
  if (size_t slash = rest.find('/'); slash != std::string_view::npos) {
    hostport = rest.substr(0, slash);
    std::string_view db = rest.substr(slash + 1);
    if (!db.empty() && !ParseIntInRange(db, 0, 1 << 20, &address.db))
      return bad("bad database number");
  }
  std::string_view host = hostport;
  if (!hostport.empty() && hostport.front() == '[') {  // [IPv6]:port
    size_t close = hostport.find(']');
    if (close == std::string_view::npos) return bad("unclosed '[' in the host");
    host = hostport.substr(1, close - 1);
    std::string_view after = hostport.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':' || !ParseIntInRange(after.substr(1), 1, 65535, &address.port)) {
        return bad("bad port");
      }
    }
  } else if (size_t colon = hostport.rfind(':'); colon != std::string_view::npos) {
    host = hostport.substr(0, colon);
    if (!ParseIntInRange(hostport.substr(colon + 1), 1, 65535, &address.port))
      return bad("bad port");
  }
  if (host.empty()) return bad("no host");
  address.host = std::string(host);
  for (const char* variable : {kRedisPasswordVariable, "REDISCLI_AUTH"}) {
    if (!address.password.empty()) break;
    if (const char* value = std::getenv(variable)) address.password = value;
  }
  return address;
}

bool IsValidRedisSetName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

Result<std::string> ReadRedisPasswordFile(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    return Status::IoError("reading the Redis password file " + path + ": " + std::strerror(errno));
  }
  std::string text(4096, '\0');
  const size_t read = std::fread(text.data(), 1, text.size(), file);
  const bool failed = std::ferror(file) != 0;
  std::fclose(file);
  if (failed) return Status::IoError("reading the Redis password file " + path);
  text.resize(read);
  if (const size_t newline = text.find('\n'); newline != std::string::npos) text.resize(newline);
  if (!text.empty() && text.back() == '\r') text.pop_back();
  if (text.empty()) {
    return Status::InvalidArgument("the Redis password file " + path +
                                   " is empty: its first line is the password");
  }
  return text;
}

std::string RedisAddress::ToString() const {
  std::string out = "redis://";
  out += host.find(':') != std::string::npos ? "[" + host + "]" : host;
  out += ':';
  out += std::to_string(port);
  if (db != 0) {
    out += '/';
    out += std::to_string(db);
  }
  return out;
}

}  // namespace urlsieve
