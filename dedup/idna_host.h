// Domain to ASCII (UTS #46 ToASCII via libidn2) for hosts that need it: any non-ASCII host, and
// ASCII hosts carrying "xn--" labels, whose punycode must be validated (WHATWG URL Standard §3.5
// "domain to ASCII"). Plain ASCII hosts never come here: the canonicalizer lowercases them itself.
// Thread-safety: pure function (libidn2 keeps no shared state).
#ifndef URLSIEVE_DEDUP_IDNA_HOST_H_
#define URLSIEVE_DEDUP_IDNA_HOST_H_

#include <string>
#include <string_view>

#include "dedup/status.h"

namespace urlsieve {

// Converts a valid UTF-8 domain to lowercase ASCII (punycode "xn--" labels) into *out.
// Non-transitional processing first (IDNA2008 + UTS #46, what current browsers do: "faß.de" stays
// distinct from "fass.de"); if that rejects the name, transitional processing (IDNA2003-like
// mapping, e.g. symbols such as emoji) is tried, as curl and GnuTLS do, so that hosts which
// resolve in the wild are not refused.
Status DomainToAscii(std::string_view domain, std::string* out);

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_IDNA_HOST_H_
