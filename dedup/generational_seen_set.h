// GenerationalSeenSet: the time-aware SeenSet (seen_set.h) of `revisit_after`
// (docs/features/generational.md, "The generational seen set"): a key told new longer ago than
// revisit_after T is new again. Bloom-only, in memory or kept in a state directory (StateDir,
// state_dir.h).
//
// Generations. Time is cut into generations of L = T / G (G = `generations`), in whole
// milliseconds (rounded down); the generation of a wall time t is floor(unix_ms(t) / L), read
// from the clock (Clock::WallNow; the system clock when none is given). The live generations are
// the current one and the G before it: G + 1 scalable Bloom filters (scalable_bloom_filter.h).
// Test-and-insert: a key that any live generation holds is "seen", and nothing is written (a
// sighting does not refresh it); otherwise it goes into the current generation and is "new". So
// a key told new at t is seen until some time in (t + T, t + T + L], then new again. A
// generation that ages out (older than current − G) is dropped, and its file deleted after the
// next committed checkpoint. The Redis set (redis_seen_set.h) keeps the same rules.
//
// Sizing and the error bound. Each generation is a scalable filter sized for ceil(capacity / G)
// keys at ε' = fp_rate / (G + 1) (`capacity` is keys per revisit_after; kFirstLayerShare). A new
// key is reported seen only if one of the G + 1 live filters answers "maybe", so by the union bound
// its false-positive probability is at most Σ ε' = (G + 1) · fp_rate / (G + 1) = fp_rate. Each
// scalable filter keeps its own ε' at any fill (it grows), so the bound holds even when a
// generation gets far more than capacity / G keys (a first crawl puts everything into one).
// Memory at steady state (capacity keys per T) is (G + 1) / G filters of capacity at ε / (G + 1):
// about (G + 1) / G · (1 + log2(G + 1) / log2(1 / ε)) times a static filter (1.54× at G = 4,
// ε = 1e-3, before the blocked layout's overhead; bench/bench_seen_filter.cc measures it).
//
// State directory. The stored parameters (urlsieve_meta `revisit_after`, `generations`, with
// capacity and fp_rate) are the state's; one file per live generation that holds keys,
// DIR/bloom-gen-<index>.<checkpoint>.snap (a ScalableBloomFilter snapshot stamped with the
// state's identity and the checkpoint that wrote it), and the urlsieve_meta row
// `bloom_generations` = "<index>:<checkpoint> ..." naming the committed files. A checkpoint
// (StateSeenSet's protocol: Save, or the owner's PrepareCheckpoint/CheckpointCommitted) writes a
// new file for each generation that got keys since the last one (only the current generation, and
// the one before it right after a turn), under the checkpoint's own number, so no committed file
// is ever overwritten; records the list in the checkpoint's transaction; and once it is
// committed deletes the files the list no longer names (older versions, aged-out generations).
// A crash anywhere leaves the files of the committed list intact; on open, files of this pattern
// that the list does not name (a checkpoint that never committed, or one whose clean-up did not
// run) are deleted. A listed file that is missing, truncated, damaged, of another state or of
// another checkpoint than listed, or sized for other parameters is a Corruption error naming it;
// nothing is reset or rebuilt (a Bloom-only state cannot be rebuilt).
//
// Thread-safety: as SeenSet. Inserts hold `mu_` shared: under it the older generations are
// read-only and the current one is fixed, and the current filter's per-key lock makes exactly one
// of several racing inserts of a key "new". Turning to a new generation, and the checkpoint
// steps, hold `mu_` exclusively.
#ifndef URLSIEVE_DEDUP_GENERATIONAL_SEEN_SET_H_
#define URLSIEVE_DEDUP_GENERATIONAL_SEEN_SET_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "dedup/bloom_seen_set.h"
#include "dedup/state_seen_set.h"

namespace urlsieve {

class Clock;
class ScalableBloomFilter;
class StateDir;

struct GenerationalOptions {
  uint64_t capacity = 10'000'000;  // keys per revisit_after
  double fp_rate = 1e-3;           // over all live generations together
  std::chrono::seconds revisit_after{0};
  uint32_t generations = 4;
  const Clock* clock = nullptr;  // null: the system's wall clock; must outlive the set
};

class GenerationalSeenSet : public StateSeenSet {
 public:
  static constexpr uint32_t kMaxGenerations = 256;
  // The share of a generation's ε' that its first layer gets (scalable_bloom_filter.h; 0.9 for
  // the static filter): at steady state a generation never grows, so the first layer gets nearly
  // all of it, which keeps the G + 1 generations within 1.6× a static filter's memory at
  // ε = 1e-3, G = 4. A generation that does grow (a burst: a first crawl) pays with tighter growth
  // layers (the first at ε'/100 instead of ε'/20).
  static constexpr double kFirstLayerShare = 0.98;
  // The urlsieve_meta row listing the committed generation files.
  static constexpr std::string_view kMetaKey = "bloom_generations";

  // InvalidArgument unless revisit_after > 0 and 1 <= generations <= kMaxGenerations (so that a
  // generation lasts at least a millisecond).
  static Status CheckOptions(std::chrono::seconds revisit_after, uint32_t generations);

  // Nothing persists: Save() does nothing, PrepareCheckpoint is FailedPrecondition.
  static Result<std::unique_ptr<GenerationalSeenSet>> InMemory(const GenerationalOptions& options);
  // The set kept in `dir` (which must outlive it), whose stored parameters have revisit_after_s
  // > 0 (OpenStateSeenSet calls it). options.saves false: the state's owner checkpoints it (Save
  // is then FailedPrecondition); options.clock ages it; rebuild_bloom is FailedPrecondition (a
  // Bloom-only state cannot be rebuilt). Errors as described above; on error no file has been
  // changed.
  static Result<std::unique_ptr<GenerationalSeenSet>> Open(StateDir* dir,
                                                           const StateSeenSetOptions& options);

  ~GenerationalSeenSet() override;
  GenerationalSeenSet(const GenerationalSeenSet&) = delete;
  GenerationalSeenSet& operator=(const GenerationalSeenSet&) = delete;

  Status InsertHashedIfNew(std::span<const std::string_view> keys, std::span<const KeyHash> hashes,
                           std::span<bool> is_new) override;
  Result<bool> InsertHashedKeyIfNew(std::string_view key, const KeyHash& hash) override;
  Result<bool> ContainsHashed(std::string_view key, const KeyHash& hash) const override;
  SeenStats Stats() const override;
  StateIdentity identity() const override;
  Status Save() override;
  Status PrepareCheckpoint(SqliteDb& db, uint64_t generation) override;
  Status CheckpointCommitted(uint64_t generation) override;

  // The length of a generation, and the generation the clock is in now.
  std::chrono::milliseconds generation_length() const {
    return std::chrono::milliseconds(length_ms_);
  }
  int64_t ClockGeneration() const;
  // The file of generation `index` written by checkpoint `checkpoint`.
  static std::string FileName(int64_t index, uint64_t checkpoint);

 private:
  struct Generation;

  GenerationalSeenSet(StateDir* dir, const GenerationalOptions& options, bool saves);
  Status Load();
  Status RemoveStrayFiles() const;
  Result<std::unique_ptr<ScalableBloomFilter>> NewFilter() const;
  // Makes `now` the current generation when it is later than the current one: drops the
  // generations that aged out and starts a new one. Under mu_ exclusively.
  Status TurnLocked(int64_t now);
  // Takes mu_ exclusively to turn, when the clock has passed the current generation.
  Status TurnIfDue(int64_t now);
  Status PrepareLocked(uint64_t checkpoint);
  Status CommittedLocked(uint64_t checkpoint);
  std::string FilePath(int64_t index, uint64_t checkpoint) const;
  bool LiveLocked(int64_t index, int64_t now) const;

  StateDir* const dir_;  // null in memory
  const GenerationalOptions options_;
  const bool saves_;
  const bool read_only_;
  const int64_t length_ms_;
  const uint64_t generation_capacity_;
  const double generation_fp_rate_;
  const Clock* const clock_;

  mutable std::shared_mutex mu_;
  // The live generations, oldest first; the last is the current one (index current_).
  std::vector<std::unique_ptr<Generation>> generations_;
  int64_t current_ = 0;
  // The generation files named by the committed `bloom_generations` row (index → checkpoint),
  // and those named by the prepared one.
  std::map<int64_t, uint64_t> committed_files_;
  std::map<int64_t, uint64_t> prepared_files_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_GENERATIONAL_SEEN_SET_H_
