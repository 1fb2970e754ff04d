// BloomDeltaLog: the incremental part of a persistent Bloom filter's state (DIR/bloom.delta, next
// to the full snapshot DIR/bloom.snap; see seen_filter.h for the state layout). Per checkpoint
// since the last full snapshot it holds one record with the 128-bit hashes (KeyHash) of the keys
// that became new in that checkpoint; opening the state loads the snapshot and replays the
// records into it. A checkpoint thus costs 16 bytes per new key and one fdatasync instead of
// rewriting the whole filter (36 MB at the crawl's defaults, 10M keys at ε = 1e-6).
//
// Why key hashes, not changed filter lines: a new key dirties one or two 64-byte lines of a
// ~36 MB filter (block per key, bloom_line.h), so a line log costs 72-144 bytes per new key to
// this log's 16, and needs dirty-line tracking on the insert hot path (one more random store per
// insert, in the locked discipline of layer 0 and lock-free in the growth layers), where the seen
// stage runs at ~28M keys/s. The hash log needs nothing from the filter: the owner records the
// keys it was told were new (only persistent filters do) and replay is an ordinary insert.
// Replay restores every recorded key (MayContain is true for each afterwards, since bits are
// only ever set), though not necessarily the filter bit for bit: a key that was a false positive
// in memory was never recorded, and needs nothing.
//
// File layout (all integers little-endian; every byte under a checksum):
//   header, 64 bytes
//     0 magic "URLSVBDL"   8 u32 format version (1; 2 for a counting filter's log)
//     12 u32 header bytes (64)
//     16 state identity (16 bytes, state_identity.h)   32 u64 base generation: the generation of
//     the bloom.snap this log extends   40 16 bytes zero   56 u64 XXH3-64 of bytes 0..55
//   records, back to back, one per checkpoint, generations base+1, base+2, ... with no gap
//     0 u64 generation   8 state identity (16 bytes)   24 u32 key count n   28 u32 removed count
//     m (zero in version 1)   32 n × (u64 low, u64 high) key hashes, then m more (the removed
//     keys)   32+16(n+m) u64 XXH3-64 of bytes 0..31+16(n+m)
//
// Removals (docs/features/forgetting.md, "Forgetting"): a counting filter (counting_bloom_filter.h)
// also logs the keys it forgot. Replay adds a record's n keys (unconditionally: each was told new
// once), then removes its m keys. Doing every add of a checkpoint before its removes, whatever
// their order in memory, leaves each counter at least where the live sequence left it (adds first
// can only saturate more, and a remove never meets a counter the live run had not raised), so the
// replayed filter holds every key the live one held: no false negative.
//
// Crash protocol. State.db's urlsieve_meta records, in the checkpoint's own transaction, which
// prefix of the log is committed: `bloom_delta` = "<base generation> <committed bytes>" (0 bytes:
// no log; the snapshot alone is the filter). A checkpoint of generation g+1 appends its record
// after the committed bytes and fdatasyncs it, then state.db COMMITs g+1 with the new length. A
// crash before the COMMIT leaves a record (whole or torn) past the committed length: it is the
// checkpoint that never happened and is ignored, and the next append overwrites it. On open, the
// committed bytes must be there and intact: a short file, a bad checksum, a foreign identity, a
// base other than the snapshot's generation, or a gap in the generations is a Corruption error
// naming the file — never silently dropped. (Recording the length in state.db, rather than
// trusting the last whole record, also covers a standalone exact-mode batch that commits the
// generation a failed checkpoint had already appended a record for: that record stays ignored.)
//
// Compaction. When the log would grow past 1/kCompactionDivisor of the filter's size, the
// checkpoint writes a full snapshot the old way instead (bloom.snap.next, COMMIT with
// `bloom_delta` = "<g+1> 0", rename; seen_filter.h) and the next append starts a new log file.
// The divisor bounds what the log costs at open (replaying a quarter of the filter's size in
// keys, ~S/64 random inserts, takes about as long as reading the snapshot S itself) and on disk
// (+25 %), while the amortized write cost stays at most 1 + 4 = 5 bytes per log byte, ~80 bytes
// per new key, against the whole filter per checkpoint before. Whichever step a crash
// interrupts, state.db says which files hold the committed state: before the COMMIT the old
// snapshot and log; after it the new snapshot (bloom.snap.next promoted on open) and no log.
//
// Thread-safety: Record may be called concurrently with itself (it takes its own mutex);
// everything else requires that no Record runs (BloomSeenSet calls Record under its lock held
// shared or exclusive, and the checkpoint steps under its lock held exclusive).
#ifndef URLSIEVE_DEDUP_BLOOM_BLOOM_DELTA_LOG_H_
#define URLSIEVE_DEDUP_BLOOM_BLOOM_DELTA_LOG_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "dedup/bloom/key_hash.h"
#include "dedup/state/state_identity.h"

namespace urlsieve {

class CountingBloomFilter;
class ScalableBloomFilter;

class BloomDeltaLog {
 public:
  // The log may grow to (filter bytes) / kCompactionDivisor before a checkpoint compacts it.
  static constexpr uint64_t kCompactionDivisor = 4;
  static constexpr size_t kHeaderBytes = 64;
  static constexpr size_t kRecordOverheadBytes = 40;  // a record of n keys has 40 + 16n bytes
  // The urlsieve_meta key that records the committed part of the log.
  static constexpr std::string_view kMetaKey = "bloom_delta";

  // A log not attached to any snapshot: the first checkpoint must write a full snapshot (a fresh
  // filter, or one rebuilt from the exact store). `bloom` only sizes the compaction threshold.
  static std::unique_ptr<BloomDeltaLog> Detached(std::string path, const StateIdentity& identity,
                                                 const ScalableBloomFilter& bloom);
  // The same for a counting filter: its records carry removals (version 2).
  static std::unique_ptr<BloomDeltaLog> Detached(std::string path, const StateIdentity& identity,
                                                 const CountingBloomFilter& bloom);

  // Replays into `bloom` (just loaded from `snapshot_path`, of `snapshot_generation`) the part
  // of the log at `path` that `committed` (the stored kMetaKey value; empty when the state has
  // none) says is committed. generation() then tells which generation the filter reflects: the
  // caller compares it with state.db's. Corruption for a damaged, foreign or mismatched log or a
  // snapshot other than the one the log extends (the message names the file; `bloom` is then
  // partly replayed and must be discarded); IoError.
  static Result<std::unique_ptr<BloomDeltaLog>> OpenAndReplay(
      std::string path, const StateIdentity& identity, std::string_view committed,
      const std::string& snapshot_path, uint64_t snapshot_generation, ScalableBloomFilter* bloom);
  // The same for a counting filter (adds, then removes, per record: see "Removals").
  static Result<std::unique_ptr<BloomDeltaLog>> OpenAndReplay(
      std::string path, const StateIdentity& identity, std::string_view committed,
      const std::string& snapshot_path, uint64_t snapshot_generation, CountingBloomFilter* bloom);

  ~BloomDeltaLog();
  BloomDeltaLog(const BloomDeltaLog&) = delete;
  BloomDeltaLog& operator=(const BloomDeltaLog&) = delete;

  // Keys the owner was told are new (is_new[i]); they go into the next checkpoint's record.
  // Past the compaction threshold it stops collecting: that checkpoint writes a full snapshot.
  void Record(std::span<const KeyHash> keys, const bool* is_new);
  void Record(const KeyHash& key);
  // Keys a counting filter forgot (removed[i]); a plain filter's log records none.
  void RecordRemoved(std::span<const KeyHash> keys, const bool* removed);

  // The last generation whose keys the filter holds through this log (the snapshot's when the
  // log is empty).
  uint64_t generation() const { return generation_; }
  // Keys recorded for the next checkpoint.
  size_t pending_keys() const { return pending_.size() + pending_removed_.size(); }

  // How checkpoint `generation` (which must be generation() + 1 for an append) persists the
  // filter: a full snapshot when the log is detached, the chain is broken (`generation` is not
  // generation() + 1: the owner committed a generation without the log) or the log would pass
  // the compaction threshold; an appended record otherwise.
  bool NeedsSnapshot(uint64_t generation) const;
  // The kMetaKey value the checkpoint's transaction must store: for an append, the length after
  // it; after a full snapshot of `generation`, "<generation> 0".
  std::string MetaAfterAppend() const;
  static std::string MetaAfterSnapshot(uint64_t generation);
  // Writes the pending keys as the record of `generation` after the committed bytes and
  // fdatasyncs it (creating the file first when the log is empty). The caller COMMITs next.
  Status Append(uint64_t generation);
  // After the COMMIT of an Append: the record is now committed; the pending keys are cleared.
  void AppendCommitted();
  // After the COMMIT of a full snapshot of `generation`: the log is empty and extends it.
  void SnapshotCommitted(uint64_t generation, const ScalableBloomFilter& bloom);
  // The same for any filter of `filter_bytes` (the compaction threshold follows its size).
  void SnapshotCommitted(uint64_t generation, uint64_t filter_bytes);

  const std::string& path() const { return path_; }

 private:
  // Where a replay puts the keys: `remove` is null for a plain filter (a record with removals is
  // then Corruption).
  struct ReplayTarget {
    std::function<void(std::span<const KeyHash>)> add;
    std::function<void(std::span<const KeyHash>)> remove;
  };
  BloomDeltaLog(std::string path, const StateIdentity& identity, bool counting);
  void SetThreshold(uint64_t filter_bytes);
  Status Replay(std::string_view committed, const std::string& snapshot_path,
                uint64_t snapshot_generation, const ReplayTarget& target);
  Status StartFile();

  const std::string path_;
  const StateIdentity identity_;
  const bool counting_;  // records may carry removals (file version 2)
  int fd_ = -1;                   // open for appends once a record has been written or replayed
  bool attached_ = false;         // the log extends the filter's last durable state
  bool overflowed_ = false;       // pending passed the threshold: the next checkpoint compacts
  uint64_t base_generation_ = 0;  // of the snapshot the log extends
  uint64_t generation_ = 0;       // of the last committed record (base when there is none)
  uint64_t committed_bytes_ = 0;  // 0: no log file is committed
  uint64_t appended_bytes_ = 0;   // after a successful Append, before its COMMIT
  uint64_t appended_generation_ = 0;
  uint64_t max_log_bytes_ = 0;  // the compaction threshold
  std::mutex mu_;               // guards pending_ and overflowed_ against concurrent Record
  std::vector<KeyHash> pending_;
  std::vector<KeyHash> pending_removed_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_BLOOM_BLOOM_DELTA_LOG_H_
