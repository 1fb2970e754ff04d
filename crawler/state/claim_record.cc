#include "crawler/state/claim_record.h"

#include <charconv>

namespace urlsieve {

std::string EncodeClaim(std::string_view url, uint32_t depth, std::string_view parent) {
  std::string claim = "1 ";
  claim += std::to_string(depth);
  claim += ' ';
  claim += url;
  claim += ' ';
  claim += parent;
  return claim;
}

std::optional<ClaimRecord> DecodeClaim(std::string_view claim) {
  if (claim.substr(0, 2) != "1 ") return std::nullopt;
  claim.remove_prefix(2);
  const size_t depth_end = claim.find(' ');
  if (depth_end == std::string_view::npos || depth_end == 0) return std::nullopt;
  ClaimRecord record;
  const auto [end, error] = std::from_chars(claim.data(), claim.data() + depth_end, record.depth);
  if (error != std::errc() || end != claim.data() + depth_end) return std::nullopt;
  claim.remove_prefix(depth_end + 1);
  const size_t url_end = claim.find(' ');
  if (url_end == std::string_view::npos || url_end == 0) return std::nullopt;
  record.url = std::string(claim.substr(0, url_end));
  record.parent = std::string(claim.substr(url_end + 1));
  return record;
}

}  // namespace urlsieve
