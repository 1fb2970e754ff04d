#include "crawler/state/claim_record.h"

#include <charconv>

namespace urlsieve {

namespace {

std::string Encode(std::string_view tag, std::string_view url, uint32_t depth,
                   std::string_view parent) {
  std::string claim(tag);
  claim += std::to_string(depth);
  claim += ' ';
  claim += url;
  claim += ' ';
  claim += parent;
  return claim;
}

}  // namespace

std::string EncodeClaim(std::string_view url, uint32_t depth, std::string_view parent) {
  return Encode("1 ", url, depth, parent);
}

std::string EncodeSitemapClaim(std::string_view url, uint32_t nesting, std::string_view parent) {
  return Encode("S ", url, nesting, parent);
}

std::optional<ClaimRecord> DecodeClaim(std::string_view claim) {
  const bool sitemap = claim.substr(0, 2) == "S ";
  if (claim.substr(0, 2) != "1 " && !sitemap) return std::nullopt;
  claim.remove_prefix(2);
  const size_t depth_end = claim.find(' ');
  if (depth_end == std::string_view::npos || depth_end == 0) return std::nullopt;
  ClaimRecord record;
  record.sitemap = sitemap;
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
