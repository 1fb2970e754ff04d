// The canonicalizer's opt-in rules (CanonicalizeOptions, url_canonicalizer.h): session ids
// removed from the path and the query, tracking parameters removed from the query, query
// parameters sorted, an empty query dropped. They
// rewrite the key in place, in the KeyWriter the canonicalizer writes it with.
//
// Thread-safety: pure functions of their arguments (ApplyQueryRules keeps thread_local scratch).
#ifndef URLSIEVE_URL_URL_CANONICALIZE_RULES_H_
#define URLSIEVE_URL_URL_CANONICALIZE_RULES_H_

#include <cstddef>
#include <cstring>
#include <string_view>

#include "url/url_canonicalizer.h"
#include "url/url_chars.h"
#include "url/url_key_writer.h"

namespace urlsieve {

// Removes ";jsessionid=..." path parameters (up to the next ';' or the segment end) from the
// segment written at [begin, w->pos()). Inline: it runs for every path segment when
// strip_session_ids is set.
inline void StripPathSessionIds(size_t begin, KeyWriter* w) {
  constexpr std::string_view kParam = ";jsessionid=";
  size_t i = begin;
  while (i + kParam.size() <= w->pos()) {
    if (w->data()[i] != ';' || !url_chars::EqualsLower(w->View(i, i + kParam.size()), kParam)) {
      ++i;
      continue;
    }
    size_t end = i + 1;
    while (end < w->pos() && w->data()[end] != ';') ++end;
    std::memmove(w->data() + i, w->data() + end, w->pos() - end);
    w->set_pos(w->pos() - (end - i));
  }
}

// The opt-in query rules (strip_session_ids, strip_tracking_params, sort_query, drop_empty_query)
// on the query written at [begin, w->pos()) (without the '?') of a URL on `host` (the key's host,
// for the tracking exceptions). Returns false when the '?' should go as well.
bool ApplyQueryRules(size_t begin, std::string_view host, const CanonicalizeOptions& options,
                     KeyWriter* w);

}  // namespace urlsieve

#endif  // URLSIEVE_URL_URL_CANONICALIZE_RULES_H_
