#include "dedup/state/state_identity.h"

#include <sys/random.h>

#include <cerrno>
#include <cstring>

namespace urlsieve {

Result<StateIdentity> StateIdentity::Random() {
  StateIdentity id;
  size_t filled = 0;
  while (filled < id.bytes.size()) {
    const ssize_t n = getrandom(id.bytes.data() + filled, id.bytes.size() - filled, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::IoError(std::string("getrandom (a new state identity): ") +
                             std::strerror(errno));
    }
    filled += static_cast<size_t>(n);
  }
  return id;
}

Result<StateIdentity> StateIdentity::FromHex(std::string_view hex) {
  StateIdentity id;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  if (hex.size() != 2 * id.bytes.size()) {
    return Status::Corruption("state identity '" + std::string(hex) + "' is not 32 hex digits");
  }
  for (size_t i = 0; i < id.bytes.size(); ++i) {
    const int hi = nibble(hex[2 * i]);
    const int lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) {
      return Status::Corruption("state identity '" + std::string(hex) + "' is not 32 hex digits");
    }
    id.bytes[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return id;
}

std::string StateIdentity::ToHex() const {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * bytes.size());
  for (uint8_t b : bytes) {
    hex += kDigits[b >> 4];
    hex += kDigits[b & 15];
  }
  return hex;
}

bool StateIdentity::IsZero() const {
  for (uint8_t b : bytes) {
    if (b != 0) return false;
  }
  return true;
}

}  // namespace urlsieve
