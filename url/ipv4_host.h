// IPv4 hosts in every number form browsers accept, per the WHATWG URL Standard §3.5 ("IPv4
// parser" and "ends in a number"): "0x7f.1", "2130706433", "0177.0.0.1" and 1–4 parts all name
// 127.0.0.1. The canonical key always uses dotted decimal.
// Thread-safety: pure functions.
#ifndef URLSIEVE_URL_IPV4_HOST_H_
#define URLSIEVE_URL_IPV4_HOST_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace urlsieve {

// WHATWG "ends in a number": the last label (ignoring one trailing empty label) is all decimal
// digits or "0x" followed by hex digits. Such a host must parse as IPv4 or the URL is invalid.
bool EndsInIpv4Number(std::string_view host);

// Parses an ASCII, lowercased host as an IPv4 address; nullopt if it is not a valid one.
std::optional<uint32_t> ParseIpv4(std::string_view host);

// Writes "a.b.c.d" to `out` (room for 15 bytes) and returns the number of bytes written.
size_t FormatIpv4(uint32_t address, char* out);

}  // namespace urlsieve

#endif  // URLSIEVE_URL_IPV4_HOST_H_
