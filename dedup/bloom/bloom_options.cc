#include "dedup/bloom/bloom_options.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace urlsieve {

uint64_t BloomOptions::LayerCapacity(uint32_t index) const {
  // Doubling saturates rather than overflows (capacity ≤ 2^48); such layers are out of reach.
  const uint32_t shift = std::min<uint32_t>(index, 63 - std::bit_width(capacity));
  return capacity << shift;
}

double BloomOptions::LayerFpRate(uint32_t index) const {
  const double eps = fp_rate;
  const double share = first_layer_share;
  const double r = tightening;
  if (index == 0) return eps * share;
  return eps * (1 - share) * (1 - r) * std::pow(r, index - 1);
}

Status ValidateBloomOptions(const BloomOptions& o) {
  if (o.capacity == 0 || o.capacity > (uint64_t{1} << 48)) {
    return Status::InvalidArgument("bloom capacity must be in [1, 2^48]");
  }
  if (!(o.fp_rate > 0 && o.fp_rate < 1)) {
    return Status::InvalidArgument("bloom fp_rate must be in (0, 1)");
  }
  if (!(o.first_layer_share > 0 && o.first_layer_share < 1)) {
    return Status::InvalidArgument("bloom first_layer_share must be in (0, 1)");
  }
  if (!(o.tightening > 0 && o.tightening < 1)) {
    return Status::InvalidArgument("bloom tightening must be in (0, 1)");
  }
  return Status::Ok();
}

}  // namespace urlsieve
