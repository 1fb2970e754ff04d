#include "bench/support_url_generator.h"

#include <cctype>
#include <iterator>

namespace urlsieve::bench {
namespace {

constexpr const char* kWords[] = {
    "news",    "article", "product", "category", "search",  "blog",    "about",  "contact",
    "help",    "images",  "static",  "user",     "profile", "archive", "2023",   "2024",
    "index",   "items",   "shop",    "cart",     "video",   "music",   "sports", "weather",
    "docs",    "api",     "v2",      "public",   "assets",  "en",      "de",     "fr",
    "travel",  "health",  "science", "world",    "tech",    "market",  "forum",  "thread",
    "post",    "comment", "tag",     "topic",    "guide",   "review",  "deals",  "events",
    "support", "account", "orders",  "library",  "books",   "movies",  "photos", "maps"};
constexpr const char* kTlds[] = {"com", "org", "net", "de", "co.uk", "io", "fr", "info", "jp"};
// UTF-8 labels for internationalized hosts.
constexpr const char* kIdnLabels[] = {
    "b\xc3\xbc"
    "cher",
    "m\xc3\xbcnchen",
    "caf\xc3\xa9",
    "\xe6\x97\xa5\xe6\x9c\xac",
    "\xd0\xbf\xd1\x80\xd0\xb8\xd0\xbc"
    "\xd0\xb5\xd1\x80",
    "stra\xc3\x9f"
    "e"};
constexpr const char* kParams[] = {"id", "page", "q", "sort", "ref", "lang", "utm_source", "s"};
constexpr const char* kExtensions[] = {".html", ".php", ".htm", "", "", "", "/"};

}  // namespace

UrlGenerator::UrlGenerator(uint64_t seed, size_t host_count) : state_(seed) {
  hosts_.reserve(host_count);
  for (size_t i = 0; i < host_count; ++i) {
    std::string host;
    const size_t kind = Below(100);
    if (kind < 2) {  // IPv4
      for (int k = 0; k < 4; ++k) {
        if (k > 0) host += '.';
        host += std::to_string(1 + Below(254));
      }
      hosts_.push_back(host);
      continue;
    }
    if (kind < 30) host = "www.";
    if (kind >= 30 && kind < 45) host = std::string(Word()) + ".";  // a subdomain
    if (kind >= 95) {
      host += kIdnLabels[Below(std::size(kIdnLabels))];
    } else {
      host += Word();
      if (Chance(50)) host += std::string("-") + Word();
      if (Chance(30)) host += std::to_string(Below(100));
    }
    host += '.';
    host += kTlds[Below(std::size(kTlds))];
    hosts_.push_back(std::move(host));
  }
}

// splitmix64: fast, and the same sequence everywhere.
uint64_t UrlGenerator::Rand() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

const char* UrlGenerator::Word() { return kWords[Below(std::size(kWords))]; }

void UrlGenerator::AppendSegment(std::string* path) {
  *path += '/';
  const size_t kind = Below(100);
  if (kind < 15) {
    *path += std::to_string(Rand() % 1000000);
  } else if (kind < 20) {  // some percent-encoding, in both hex cases
    *path += Word();
    *path += Chance(50) ? "%20" : "%2f";
    *path += Word();
  } else if (kind < 23) {  // a dot segment
    *path += Chance(50) ? "." : std::string(Word()) + "/..";
  } else {
    *path += Word();
    if (Chance(30)) *path += std::string("-") + Word();
  }
}

std::string UrlGenerator::Next() {
  for (;;) {
    std::string url = Chance(60) ? "https://" : "http://";
    url += hosts_[Below(hosts_.size())];
    const size_t segments = 1 + Below(5);
    for (size_t i = 0; i < segments; ++i) AppendSegment(&url);
    url += kExtensions[Below(std::size(kExtensions))];
    if (Chance(40)) {
      const size_t params = 1 + Below(3);
      for (size_t i = 0; i < params; ++i) {
        url += i == 0 ? '?' : '&';
        url += kParams[Below(std::size(kParams))];
        url += '=';
        url += Chance(50) ? std::to_string(Rand() % 100000) : std::string(Word());
      }
    }
    if (Chance(5)) url += std::string("#") + Word();
    if (Chance(8)) {  // an upper-case spelling of scheme and host
      const size_t host_end = url.find('/', url.find("://") + 3);
      for (size_t i = 0; i < host_end; ++i) {
        if (url[i] >= 'a' && url[i] <= 'z') url[i] = static_cast<char>(url[i] - 32);
      }
    }
    while (url.size() < 60) AppendSegment(&url);  // lands after any query: still a valid URL
    if (url.size() <= 120) return url;
  }
}

std::vector<std::string> UrlGenerator::NextBatch(size_t count) {
  std::vector<std::string> urls;
  urls.reserve(count);
  for (size_t i = 0; i < count; ++i) urls.push_back(Next());
  return urls;
}

std::string UrlGenerator::Variant(const std::string& url) {
  std::string v = url;
  const size_t scheme_end = v.find("://");
  if (scheme_end == std::string::npos) return v;
  const bool https = scheme_end == 5;
  size_t host_end = v.find_first_of("/?#", scheme_end + 3);
  if (host_end == std::string::npos) host_end = v.size();
  switch (Below(6)) {
    case 0:
      for (size_t i = 0; i < scheme_end; ++i) v[i] = static_cast<char>(std::toupper(v[i]));
      break;
    case 1:
      for (size_t i = scheme_end + 3; i < host_end; ++i) {
        if (v[i] >= 'a' && v[i] <= 'z') v[i] = static_cast<char>(v[i] - 32);
      }
      break;
    case 2:
      if (v.find(':', scheme_end + 3) >= host_end) v.insert(host_end, https ? ":443" : ":80");
      break;
    case 3:
      if (v.find('#') == std::string::npos) v += "#section";
      break;
    case 4:
      for (size_t i = host_end; i < v.size() && v[i] != '?' && v[i] != '#'; ++i) {
        if (std::isalpha(static_cast<unsigned char>(v[i]))) {  // unreserved: encoding is a no-op
          static constexpr char kHex[] = "0123456789ABCDEF";
          const auto c = static_cast<unsigned char>(v[i]);
          v.replace(i, 1, {'%', kHex[c >> 4], kHex[c & 15]});
          break;
        }
      }
      break;
    default:
      if (host_end < v.size() && v[host_end] == '/') v.insert(host_end, "/.");
      break;
  }
  return v;
}

std::string UrlGenerator::NextRelative() {
  std::string ref;
  switch (Below(6)) {
    case 0:
      ref = "../";
      break;
    case 1:
      ref = "/";
      break;
    case 2:
      ref = "//" + hosts_[Below(hosts_.size())] + "/";
      break;
    case 3:
      return std::string("?page=") + std::to_string(Below(50));
    case 4:
      ref = "./";
      break;
    default:
      break;
  }
  ref += Word();
  ref += '/';
  ref += Word();
  ref += kExtensions[Below(std::size(kExtensions))];
  if (Chance(20)) ref += std::string("#") + Word();
  return ref;
}

}  // namespace urlsieve::bench
