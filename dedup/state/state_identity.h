// StateIdentity: the random 128-bit identity of one state directory. It is created with the
// directory, stored in state.db, and recorded in every other state file (the Bloom snapshot, the
// Bloom delta log) together with the generation of the checkpoint the file belongs to, so that a
// file copied from another state directory — or left over from another generation — is refused
// instead of being silently combined with this one
// (docs/formats/state-directory.md, "State files and the checkpoint protocol").
//
// Thread-safety: a plain value.
#ifndef URLSIEVE_DEDUP_STATE_STATE_IDENTITY_H_
#define URLSIEVE_DEDUP_STATE_STATE_IDENTITY_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace urlsieve {

struct StateIdentity {
  std::array<uint8_t, 16> bytes{};

  // A fresh identity from the kernel's random source (getrandom).
  static Result<StateIdentity> Random();
  // 32 lowercase hex digits, as stored in state.db; Corruption for anything else.
  static Result<StateIdentity> FromHex(std::string_view hex);
  std::string ToHex() const;
  // All zero: a file written before identities existed.
  bool IsZero() const;

  friend bool operator==(const StateIdentity&, const StateIdentity&) = default;
};

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_STATE_STATE_IDENTITY_H_
