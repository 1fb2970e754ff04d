#include "crawler/crawl/admission.h"

#include "dedup/seen_filter.h"
#include "dedup/seen_set.h"

namespace urlsieve {

size_t LinkBatch::KeepNew(const bool* is_new) {
  size_t kept = 0;
  for (size_t i = 0; i < urls.size(); ++i) {
    if (!is_new[i]) continue;
    if (kept != i) urls[kept] = std::move(urls[i]);
    ++kept;
  }
  urls.resize(kept);
  return kept;
}

Status KeyLinks(const SeenFilter& seen, bool opt_in_rules, LinkBatch* batch) {
  const size_t n = batch->urls.size();
  batch->keys.clear();
  batch->keys.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const bool rewritten = !batch->dust_keys.empty() && !batch->dust_keys[i].empty();
    batch->keys.push_back(rewritten ? std::string_view(batch->dust_keys[i]) : batch->urls[i].key());
  }
  if (opt_in_rules) {
    batch->rule_keys.resize(n);
    for (size_t i = 0; i < n; ++i) {
      URLSIEVE_RETURN_IF_ERROR(
          seen.canonicalizer().CanonicalizeTo(batch->keys[i], &batch->rule_keys[i]));
      batch->keys[i] = batch->rule_keys[i];
    }
  }
  batch->hashes.resize(n);
  for (size_t i = 0; i < n; ++i) batch->hashes[i] = SeenSet::Hash(batch->keys[i]);
  return Status::Ok();
}

}  // namespace urlsieve
