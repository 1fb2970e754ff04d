// The parameters a seen set is created with and keeps (StateParameters), and their one text codec:
// the state directory's urlsieve_meta rows (state_dir.h) and the Redis seen set's meta hash
// (redis_seen_set.h) store the same fields, spelled the same way, and read them back through the
// same checks (docs/formats/state-directory.md, "State files and the checkpoint protocol", "The
// Redis seen set").
//
// The fields: capacity (decimal), fp_rate (%.17g), exact (0/1), canonicalize
// (EncodeStoredCanonicalize), and for a set with time or counters revisit_after (seconds),
// generations and deletable (0/1). Which of the last three a store writes is the store's format
// (StoredTimeFields); the values are spelled the same in both.
//
// Thread-safety: pure functions and value types.
#ifndef URLSIEVE_DEDUP_SEEN_SET_PARAMS_H_
#define URLSIEVE_DEDUP_SEEN_SET_PARAMS_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "dedup/seen_filter.h"
#include "url/url_canonicalizer.h"

namespace urlsieve {

// What a state is created with, and keeps: the seen set's size and error bound, whether it is
// exact, and the canonicalizer options its keys are made with.
struct StateParameters {
  uint64_t capacity = 0;
  double fp_rate = 0;
  bool exact = false;
  CanonicalizeOptions canonicalize;
  // Time (docs/features/generational.md, "The generational seen set"): a key told new longer ago
  // than revisit_after is new again (0: never), the span covered by `generations` generations.
  uint64_t revisit_after_s = 0;
  uint32_t generations = 0;  // 0 with revisit_after_s == 0
  // The Bloom filter counts (4-bit saturating counters), so that a key can be forgotten.
  bool deletable = false;

  // As the options of a SeenFilter over the state's set (SeenFilter::Over).
  SeenFilterOptions AsFilterOptions() const {
    SeenFilterOptions options;
    options.capacity = capacity;
    options.fp_rate = fp_rate;
    options.exact = exact;
    options.canonicalize = canonicalize;
    options.revisit_after = std::chrono::seconds(revisit_after_s);
    options.generations = generations;
    options.deletable = deletable;
    return options;
  }
};

// The canonicalizer options as the stores hold them: keys written under other options would never
// match, so they are part of the state's identity. So is the key version, written first from
// version 2 on: a build that predates it then refuses the state (it cannot parse the string)
// rather than keying it the old way; a string without it is a version 1 state. The format is that
// of existing states: "key_version=2,sort_query=0,...,max_length=2083", the rules in
// kCanonicalizeRules order. Decoding fails with Unsupported for a key version this build does not
// make, Corruption for an unreadable string. A rule added since the first five
// (CanonicalizeRule::stored_version > 0) is written only when on, before max_length, as its
// version: "...,collapse_slashes=0,strip_tracking_params=1,tracking_exceptions=a.example:ref;
// b.example:x,max_length=2083" (the exceptions normalized, only when there are any). A state
// without it is the string older builds wrote and read; one with it is refused by them (they
// cannot parse it) and, for a version this build does not make, by this build (Unsupported).
std::string EncodeStoredCanonicalize(const CanonicalizeOptions& o);
Result<CanonicalizeOptions> DecodeStoredCanonicalize(const std::string& s);

// A store's fields by name, as read back (a urlsieve_meta table, an HGETALL reply).
using StoredFields = std::map<std::string, std::string, std::less<>>;
// Fields to write, in the order written.
using FieldList = std::vector<std::pair<std::string, std::string>>;

// Which of revisit_after, generations and deletable a store writes (and requires).
enum class StoredTimeFields {
  // The state directory: revisit_after and generations only with time, deletable only when set;
  // a state without them is a plain one, readable by builds that predate them. Read: each
  // optional (absent: no time, not deletable).
  kEachWhenSet,
  // The Redis seen set's meta version 2: all three whenever the set has time or counters (a
  // version-1 meta has none). Read: all three required.
  kAllOrNone,
};

// The fields of `p`: capacity, fp_rate, exact, canonicalize (kStoredCoreFields of them, always),
// then the time fields as `time` says.
FieldList EncodeStoredParameters(const StateParameters& p, StoredTimeFields time);
inline constexpr size_t kStoredCoreFields = 4;
// Whether EncodeStoredParameters(p, kAllOrNone) writes the time fields (the Redis meta's version).
bool HasStoredTimeFields(const StateParameters& p);

// How a store's fields are read.
struct StoredParameterRules {
  // Names the store in every error, e.g. "DIR/state.db (urlsieve_meta)" or
  // "127.0.0.1:6379: urlsieve:{NAME}:meta".
  std::string where;
  // kAllOrNone: whether the record has them (the Redis meta's version 2); kEachWhenSet: ignored.
  StoredTimeFields time = StoredTimeFields::kEachWhenSet;
  bool has_time_fields = false;
  // The largest generation count the store's set can be (its own bound).
  uint32_t max_generations = UINT32_MAX;
};

// The parameters `fields` hold. Corruption naming rules.where and the field when one is missing
// or unreadable (a number that is not all digits, capacity 0, fp_rate outside (0, 1), a flag other
// than 0/1, revisit_after without generations in 1..max_generations); DecodeStoredCanonicalize's
// error, prefixed with rules.where.
Result<StateParameters> DecodeStoredParameters(const StoredFields& fields,
                                               const StoredParameterRules& rules);

// Reading one stored field: an unsigned decimal (at most 20 digits, no sign or space) / %.17g.
bool ParseStoredUint(const std::string& text, uint64_t* out);
std::string FormatStoredDouble(double value);

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_SEEN_SET_PARAMS_H_
