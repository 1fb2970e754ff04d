// Forwarding header: moved to dedup/state/state_identity.h (docs/architecture.md, "Layers").
// Include that instead; this file goes in the next release.
#ifndef URLSIEVE_DEDUP_STATE_IDENTITY_H_
#define URLSIEVE_DEDUP_STATE_IDENTITY_H_

#include "dedup/state/state_identity.h"

#endif  // URLSIEVE_DEDUP_STATE_IDENTITY_H_
