// The options object of `new SeenFilter(options)` read into SeenFilterOptions: the Python module's
// keyword arguments in camelCase (capacity, fpRate, stateDir, exact, maxUrlLength, rebuildBloom,
// redis, name, redisFrontCacheKeys, revisitAfter, generations, deletable, trackingExceptions, and
// the opt-in canonicalization rules sortQuery, dropEmptyQuery, stripSessionIds, stripWww,
// collapseSlashes, stripTrackingParams).
// An unknown key is a TypeError, as an unknown keyword is in Python: a misspelt rule must not be
// ignored silently. A key whose value is undefined counts as absent.
//
// Thread-safety: call on the JavaScript thread only.
#ifndef URLSIEVE_NODE_SRC_OPTIONS_H_
#define URLSIEVE_NODE_SRC_OPTIONS_H_

#include <napi.h>

#include <string>
#include <vector>

#include "dedup/seen_filter.h"

namespace urlsieve::node {

// Throws a JavaScript exception (and returns false) for a bad option.
bool ReadOptions(const Napi::Value& value, SeenFilterOptions* out);
// The camelCase names of kCanonicalizeRules, in its order ("sortQuery", ...).
std::vector<std::string> RuleOptionNames();

}  // namespace urlsieve::node

#endif  // URLSIEVE_NODE_SRC_OPTIONS_H_
