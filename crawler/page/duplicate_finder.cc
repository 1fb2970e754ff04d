#include "crawler/page/duplicate_finder.h"

#include <algorithm>

#include "base/strings.h"
#include "crawler/page/page_decoder.h"
#include "dedup/content/content_seen_set.h"
#include "dedup/content/simhash.h"

namespace urlsieve {
namespace {

LinkExtractor::Options TextOnly() {
  LinkExtractor::Options options;
  options.max_links = 0;  // the links are not needed: none is resolved
  options.collect_text = true;
  return options;
}

bool StartsWithNoCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && EqualsIgnoreAsciiCase(s.substr(0, prefix.size()), prefix);
}

bool IsHtmlType(const WarcReadRecord& r) {
  std::string_view type = Trim(r.http_content_type);
  if (type.empty()) return true;  // decided on the body (LooksLikeHtml)
  return StartsWithNoCase(type, "text/html") || StartsWithNoCase(type, "application/xhtml+xml");
}

// A body without a Content-Type that starts, after blanks, like an HTML document.
bool LooksLikeHtml(std::string_view body) {
  body = TrimLeft(body, " \t\r\n");
  if (body.starts_with("\xEF\xBB\xBF")) body.remove_prefix(3);
  return StartsWithNoCase(body, "<!doctype html") || StartsWithNoCase(body, "<html") ||
         StartsWithNoCase(body, "<head") || StartsWithNoCase(body, "<body");
}

// Words as SimHash counts them (dedup/content/simhash.h): runs of ASCII letters and digits and
// bytes >= 0x80.
int CountWords(std::string_view text, int enough) {
  int words = 0;
  bool in_word = false;
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    bool letter = u >= 0x80 || (u >= '0' && u <= '9') || ((u | 0x20) >= 'a' && (u | 0x20) <= 'z');
    if (letter && !in_word && ++words >= enough) return words;
    in_word = letter;
  }
  return words;
}

}  // namespace

DuplicateFinder::DuplicateFinder(const DuplicateFinderOptions& options)
    : options_(options),
      default_encoding_(EncodingForLabel(options.default_encoding)),
      extractor_(&canonicalizer_, TextOnly()),
      near_(options.max_distance) {
  if (default_encoding_ == nullptr) default_encoding_ = &Windows1252Encoding();
}

bool DuplicateFinder::WantsPayload(const WarcReadRecord& r) const {
  return options_.near && r.status >= 200 && r.status < 300 && IsHtmlType(r);
}

size_t DuplicateFinder::AddMember(uint32_t file, const WarcReadRecord& r, bool revisit) {
  members_.push_back(
      {file, r.offset, r.offset_in_member, r.target_uri, r.date, r.record_id, revisit});
  return members_.size() - 1;
}

DuplicateGroup& DuplicateFinder::GroupOf(std::unordered_map<size_t, size_t>* index,
                                         DuplicateGroup::Kind kind, size_t first) {
  auto [it, added] = index->emplace(first, groups_.size());
  if (added) {
    groups_.push_back({kind, first, {}});
    ++(kind == DuplicateGroup::Kind::kExact ? counts_.exact_groups : counts_.near_groups);
  }
  return groups_[it->second];
}

bool DuplicateFinder::SimHashOf(const WarcReadRecord& r, uint64_t* simhash) const {
  if (!r.payload_complete) return false;
  if (Trim(r.http_content_type).empty() && !LooksLikeHtml(r.payload)) return false;
  // As the crawl reads a page (crawler/page/page_processor.cc): in its encoding, as UTF-8.
  DecodeLimits limits;
  limits.max_output_bytes = 3 * r.payload.size() + 16;
  Result<DecodedPage> decoded =
      DecodedPage::Decode(r.payload, r.http_content_type, *default_encoding_, limits);
  PageLinks page = decoded.ok()
                       ? extractor_.Extract(decoded->html(), r.target_uri, &decoded->encoding())
                       : extractor_.Extract(r.payload, r.target_uri);
  if (CountWords(page.text, std::max(options_.min_words, 1)) < options_.min_words) return false;
  *simhash = SimHash(page.text);
  return true;
}

void DuplicateFinder::Add(uint32_t file, const WarcReadRecord& r) {
  ++counts_.records;
  const std::optional<uint64_t> given = DigestFromWarcPayloadDigest(r.payload_digest);
  if (r.type == "revisit") {
    if (!given) return;
    ++counts_.revisits;
    if (std::optional<uint64_t> first = exact_.Find(*given)) {
      const size_t copy = AddMember(file, r, /*revisit=*/true);
      GroupOf(&exact_group_of_, DuplicateGroup::Kind::kExact, *first).copies.push_back({copy, 0});
      ++counts_.exact_copies;
    } else {  // the original is in a file not given: the revisit stands for it
      exact_.FindOrInsert(*given, AddMember(file, r, /*revisit=*/true));
    }
    return;
  }
  if (r.type != "response" || !r.http) return;
  ++counts_.responses;
  if (r.status < 200 || r.status >= 300) return;
  uint64_t digest = 0;
  if (given) {
    digest = *given;
  } else if (r.payload_sha1) {
    for (int i = 0; i < 8; ++i) digest = (digest << 8) | (*r.payload_sha1)[static_cast<size_t>(i)];
  } else {
    return;  // a sha1: digest that does not decode, and none computed: nothing to compare
  }
  ++counts_.fingerprinted;
  const size_t index = AddMember(file, r, /*revisit=*/false);
  if (std::optional<uint64_t> first = exact_.FindOrInsert(digest, index)) {
    GroupOf(&exact_group_of_, DuplicateGroup::Kind::kExact, *first).copies.push_back({index, 0});
    ++counts_.exact_copies;
    return;
  }
  if (!IsHtmlType(r) || (Trim(r.http_content_type).empty() && !LooksLikeHtml(r.payload))) {
    return;
  }
  ++counts_.html_pages;
  uint64_t simhash = 0;
  if (!options_.near || !SimHashOf(r, &simhash)) return;
  ++counts_.simhashed;
  if (std::optional<NearMatch> match = near_.FindOrInsert(simhash, index)) {
    GroupOf(&near_group_of_, DuplicateGroup::Kind::kNear, match->value)
        .copies.push_back({index, match->distance});
    ++counts_.near_copies;
  }
}

std::vector<const DuplicateGroup*> DuplicateFinder::Groups() const {
  std::vector<const DuplicateGroup*> out;
  for (const DuplicateGroup& g : groups_) out.push_back(&g);
  std::stable_sort(out.begin(), out.end(), [](const DuplicateGroup* a, const DuplicateGroup* b) {
    if (a->kind != b->kind) return a->kind == DuplicateGroup::Kind::kExact;
    return a->first < b->first;
  });
  return out;
}

}  // namespace urlsieve
