// The politeness key of an origin (FrontierOptions::key_kind): which URLs share one queue, one
// delay and one concurrency limit; and the registrable domain it is built from, which the crawl's
// scope (crawler/crawl/scope.h, ScopeMode::kDomain) uses as well, so both agree on every host.
//
// Thread-safety: pure functions (libpsl's built-in list is immutable). The kCustom key function is
// the caller's (see FrontierOptions::key_function).
#ifndef URLSIEVE_FRONTIER_POLITENESS_KEY_H_
#define URLSIEVE_FRONTIER_POLITENESS_KEY_H_

#include <string>
#include <string_view>

#include "frontier/frontier_options.h"
#include "url/url_parts.h"

namespace urlsieve {

// The registrable domain (eTLD+1) of a canonical host per the public suffix list (libpsl's
// built-in list): "a.b.example.co.uk" -> "example.co.uk", "a.example.com." -> "example.com." (a
// trailing dot is kept: canonical keys keep it). Its own domain: an IP literal ("10.0.0.1",
// "[::1]"; each names one server, where the list would make "0.1" of every IPv4 address) and a
// public suffix ("co.uk", "github.io", "localhost").
std::string RegistrableDomain(std::string_view host);

// The politeness key of the origin of `url` under `options` (key_kind, key_function).
std::string PolitenessKey(const FrontierOptions& options, const UrlParts& url);

}  // namespace urlsieve

#endif  // URLSIEVE_FRONTIER_POLITENESS_KEY_H_
