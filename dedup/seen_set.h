// SeenSet: the seen stage over canonical keys (docs/features/seen-stage.md, "The seen stage
// (SeenSet)"): a set that answers, for each key, "new" exactly once. It knows nothing of URLs:
// SeenFilter (seen_filter.h) canonicalizes and hashes, then asks a SeenSet; the crawl (CrawlState)
// does the same through the SeenFilter over its state's set.
//
// Implementations in this library (internal headers): the Bloom filter alone, in memory or kept
// in a state directory (bloom_seen_set.h), and the Bloom filter whose every "maybe seen" is
// confirmed in an SQLite exact store (exact_seen_set.h). Others may keep their keys elsewhere (a
// Redis server, a time-aware set for re-crawls): nothing here assumes a local file. Every
// implementation runs through one contract test (tests/dedup/seen_set_test.cc).
//
// Keys and hashes. Each key comes with its 128-bit XXH3 digest (KeyHash, SeenSet::Hash), computed
// once by the caller and shared by every structure that needs one; a set may trust it.
//
// Durability. Save() commits everything inserted so far (a standalone filter: the `filter`
// command, the C API, Python); a no-op for an in-memory set. The library's own sets can instead
// take part in a checkpoint whose transaction the crawl owns (StateSeenSet, state_seen_set.h, an
// internal interface); Save() of such a set is FailedPrecondition.
//
// Identity. A persistent set belongs to one state (StateIdentity, state_identity.h): a file or
// namespace of another state is refused, never combined with this one.
//
// Thread-safety: every method may be called concurrently. Exactly one of several threads inserting
// the same key at once is told "new" (docs/architecture.md, "Invariants").
#ifndef URLSIEVE_DEDUP_SEEN_SET_H_
#define URLSIEVE_DEDUP_SEEN_SET_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "dedup/bloom/key_hash_value.h"
#include "dedup/state/state_identity.h"

namespace urlsieve {

// Something opening a set (or a SeenFilter) wants the caller to know; nothing here is an error.
struct SeenNotice {
  enum class Kind : uint8_t {
    kStoredParameters,  // the state's stored parameters override the requested ones
    kRebuilt,           // the Bloom filter was rebuilt from the exact store (and why)
    kUpgraded,          // a version-1 state was given an identity (format version 2)
    kWarning,           // a setting of the server risks the set's data (what, and how to fix it)
    kLossAccepted,      // a Redis seen set that lost data was repaired as asked (accept_loss)
  };
  Kind kind;
  std::string text;
};

// A key's times, in a set that keeps them (exact mode, dedup/exact_store.h): unix seconds, 0 when
// unknown (a key migrated from a store that had no times) or never recorded.
struct SeenKeyTimes {
  int64_t first_seen = 0;    // when the key was told new (last told new, after a forget)
  int64_t last_fetched = 0;  // the last RecordFetchedHashed
};

struct SeenStats {
  uint64_t capacity = 0;  // as stored
  double fp_rate = 0;     // as stored
  bool exact = false;
  bool deletable = false;   // a counting filter: ForgetHashed works (docs/features/forgetting.md,
                            // "Forgetting")
  uint64_t generation = 0;  // of the last commit/checkpoint
  StateIdentity identity;   // of the state directory (zero: in memory, or a version-1 state
                            // opened read-only)
  // The Bloom filter.
  uint64_t bloom_inserted = 0;
  uint64_t bloom_capacity = 0;
  uint32_t bloom_layers = 0;
  uint64_t bloom_bytes = 0;
  double bloom_fill_ratio = 0;
  double bloom_expected_fp_rate = 0;
  // The exact store (exact mode). The lookup counters are cumulative over the state's lifetime as
  // of the last checkpoint, plus this session.
  uint64_t stored_keys = 0;      // keys in the exact store
  uint64_t maybe_lookups = 0;    // Bloom "maybe seen" answers confirmed in SQLite
  uint64_t false_positives = 0;  // ... of which the key was in fact new
  // Time (a time-aware set; zero otherwise): revisit_after; for a generational one
  // (generational_seen_set.h, the Redis set) also the number of generations it is cut into and
  // the live generation filters (the bloom_* figures above are their sums; the expected fp rate
  // is the union bound over them). A local exact set ages by first-seen times: 0 generations.
  uint64_t revisit_after_s = 0;
  uint32_t generations = 0;
  uint32_t live_generations = 0;
};

class SeenSet {
 public:
  virtual ~SeenSet() = default;

  // The digest every key travels with: XXH3-128, seed 0. Stored filters depend on it.
  static KeyHash Hash(std::string_view key);

  // Test-and-insert, for a batch of canonical keys and their digests (hashes[i] ==
  // Hash(keys[i])): is_new[i] (is_new.size() == keys.size()) becomes true when keys[i] was not in
  // the set (it is now). A key repeated within the batch is new at most once (its first
  // occurrence); among threads inserting the same key, exactly one is told new. A non-OK Status
  // means no verdict can be trusted (the exact store failed; a read-only set).
  virtual Status InsertHashedIfNew(std::span<const std::string_view> keys,
                                   std::span<const KeyHash> hashes, std::span<bool> is_new) = 0;
  // One key: true when it was new. By default the batch call with one key; an implementation
  // may do better (SeenFilter::InsertIfNew calls it for every URL).
  virtual Result<bool> InsertHashedKeyIfNew(std::string_view key, const KeyHash& hash);
  // The same, hashing the keys first: (*is_new)[i] is 1 for a new key.
  Status InsertKeysIfNew(std::span<const std::string_view> keys, std::vector<uint8_t>* is_new);

  // Forgetting (docs/features/forgetting.md, "Forgetting"): removes each key, so that its next
  // insert is told new again. forgotten[i] (forgotten.size() == keys.size()) becomes true when
  // keys[i] was in the set. A set that cannot delete a key (a plain Bloom filter) returns
  // Unsupported naming the options that can (exact mode, a counting filter: --deletable), and
  // changes nothing. Durable as inserts are (Save(), or the owner's next checkpoint).
  virtual Status ForgetHashed(std::span<const std::string_view> keys,
                              std::span<const KeyHash> hashes, std::span<bool> forgotten);

  // Per-key times (docs/features/exact-store.md, "The exact store"). The crawl calls
  // RecordFetchedHashed after fetching keys' pages (fetched_at: unix seconds); it is kept with the
  // keys in the set, durable as inserts are (a crash may keep a time recorded after the last
  // checkpoint: it is only a time). Keys not in the set are skipped. A set that keeps no times
  // ignores the call (Ok).
  virtual Status RecordFetchedHashed(std::span<const std::string_view> keys,
                                     std::span<const KeyHash> hashes, int64_t fetched_at) {
    (void)keys, (void)hashes, (void)fetched_at;
    return Status::Ok();
  }
  // The key's times; nullopt when the key is not in the set. Unsupported for a set that keeps none.
  virtual Result<std::optional<SeenKeyTimes>> KeyTimesHashed(std::string_view key,
                                                             const KeyHash& hash) const {
    (void)key, (void)hash;
    return Status::Unsupported("this seen set keeps no per-key times (exact mode does)");
  }

  // Is the key in the set? (does not record it).
  virtual Result<bool> ContainsHashed(std::string_view key, const KeyHash& hash) const = 0;
  Result<bool> Contains(std::string_view key) const { return ContainsHashed(key, Hash(key)); }

  virtual SeenStats Stats() const = 0;
  // The state the set belongs to (zero in memory).
  virtual StateIdentity identity() const = 0;

  // Commits everything inserted so far (see Durability above).
  virtual Status Save() = 0;
};

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_SEEN_SET_H_
