// Domain to ASCII for hosts that need it: any non-ASCII host, and ASCII hosts carrying "xn--"
// labels, whose punycode must be validated (WHATWG URL Standard §3.3 "domain to ASCII", which runs
// UTS #46 ToASCII with CheckHyphens=false, CheckBidi=true, CheckJoiners=true,
// UseSTD3ASCIIRules=false, Transitional_Processing=false, VerifyDnsLength=false). Plain ASCII hosts
// never come here: the canonicalizer lowercases them itself, which is what UTS #46 does to them.
//
// libidn2 does the UTS #46 mapping, normalization, punycode and checks, but applies more than
// UTS #46: CheckHyphens, the IDNA2008 code point rules (DISALLOWED symbols such as emoji, CONTEXTO)
// and DNS lengths. A browser accepts such hosts, so DomainToAscii works label by label and lifts
// those extra checks (idna_host.cc says how) while keeping every UTS #46 check.
//
// Known limits (libidn2 2.3.3): an internationalized label whose ASCII form exceeds 63 bytes is
// rejected (libidn2 has fixed label buffers; no DNS name can hold it, RFC 1035 §2.3.4); a label
// that holds both a deviation character (ß, ς) and a code point IDNA2008 disallows is rejected;
// such a label with a code point IDNA2008 disallows is not checked against RFC 5893 (CheckBidi).
// Thread-safety: pure function (libidn2 keeps no shared state; the result cache is per thread).
#ifndef URLSIEVE_URL_IDNA_HOST_H_
#define URLSIEVE_URL_IDNA_HOST_H_

#include <string>
#include <string_view>

#include "base/status.h"

namespace urlsieve {

// Converts a valid UTF-8 domain to lowercase ASCII (punycode "xn--" labels) into *out.
// Non-transitional processing (what current browsers do: "faß.de" stays distinct from "fass.de").
// `key_version` 1 (CanonicalizeOptions::key_version) first tries the conversion of urlsieve's key
// version 1 (libidn2 on the whole domain, non-transitional, then transitional), so that a host
// keyed under version 1 keeps its key; hosts that conversion rejects get the current one.
Status DomainToAscii(std::string_view domain, std::string* out, int key_version = 2);

}  // namespace urlsieve

#endif  // URLSIEVE_URL_IDNA_HOST_H_
