// Forwarding header: moved to dedup/bloom/key_hash_value.h (docs/architecture.md, "Layers").
// Include that instead; this file goes in the next release.
#ifndef URLSIEVE_DEDUP_KEY_HASH_VALUE_H_
#define URLSIEVE_DEDUP_KEY_HASH_VALUE_H_

#include "dedup/bloom/key_hash_value.h"

#endif  // URLSIEVE_DEDUP_KEY_HASH_VALUE_H_
