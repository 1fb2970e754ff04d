#include "dedup/bloom_snapshot.h"

namespace urlsieve {
// Implementation in progress.
}  // namespace urlsieve
