#include "dedup/scalable_bloom_filter.h"

namespace urlsieve {
// Implementation in progress.
}  // namespace urlsieve
