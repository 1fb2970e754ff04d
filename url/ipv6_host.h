// IPv6 literal hosts ("[...]" in a URL): the WHATWG URL Standard's IPv6 parser (RFC 4291 §2.2 text
// forms, including an embedded dotted IPv4 tail) and the RFC 5952 §4 canonical text form:
// lowercase hex, no leading zeros, the first longest run of two or more zero pieces as "::".
// Like the WHATWG serializer, an embedded IPv4 tail is written in hex ("::ffff:7f00:1"), so one
// address has exactly one spelling. Zone identifiers (RFC 6874) are not accepted.
// Thread-safety: pure functions.
#ifndef URLSIEVE_URL_IPV6_HOST_H_
#define URLSIEVE_URL_IPV6_HOST_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace urlsieve {

using Ipv6Address = std::array<uint16_t, 8>;

// Parses the text between the brackets; nullopt if it is not a valid address.
std::optional<Ipv6Address> ParseIpv6(std::string_view text);

// Writes the RFC 5952 form, without brackets, to `out` (room for 39 bytes); returns its length.
size_t FormatIpv6(const Ipv6Address& address, char* out);

}  // namespace urlsieve

#endif  // URLSIEVE_URL_IPV6_HOST_H_
