#include "frontier/politeness_key.h"

#include <libpsl.h>

#include "url/ipv4_host.h"

namespace urlsieve {

std::string RegistrableDomain(std::string_view host) {
  // Canonical hosts write IPv4 addresses dotted decimal, and no other canonical host ends in a
  // number (WHATWG URL §3.5, "ends in a number"); IPv6 literals keep their brackets.
  if (host.empty() || host.front() == '[' || EndsInIpv4Number(host)) return std::string(host);
  const std::string name(host);
  const char* domain = psl_registrable_domain(psl_builtin(), name.c_str());
  return domain == nullptr ? name : std::string(domain);  // nullptr: a public suffix itself
}

std::string PolitenessKey(const FrontierOptions& options, const UrlParts& url) {
  switch (options.key_kind) {
    case PolitenessKeyKind::kOrigin:
      break;
    case PolitenessKeyKind::kRegistrableDomain:
      return RegistrableDomain(url.host);
    case PolitenessKeyKind::kCustom:
      return options.key_function(url.origin);
  }
  return std::string(url.origin);
}

}  // namespace urlsieve
