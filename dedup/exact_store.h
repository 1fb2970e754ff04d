// ExactStore: the exact, durable record of the seen keys of a state (docs/features/exact-store.md,
// "The exact store"): their 128-bit fingerprints (KeyHash, XXH3-128), never their text, sharded
// over DIR/seen-00.db ... seen-NN.db (ExactShard, exact_shard.h) by the fingerprint's top bits, so
// that threads inserting keys of different shards write different SQLite files at once.
//
// Fingerprints, not URLs. Two distinct keys share a 128-bit fingerprint with probability at most
// n^2 / 2^129 over n keys (the birthday bound): ~1.5e-21 at 1e9 keys, ~1.5e-23 at 1e8. Such a
// collision would make the second key "seen": exact mode is exact up to that bound, which is far
// below the rate of undetected hardware errors. In exchange a key costs ~34 bytes on disk whatever
// its length (a format-1 store kept the URL: ~82 bytes), and the Bloom filter can be rebuilt from
// the fingerprints alone (--rebuild).
//
// Layout in the state: urlsieve_meta `exact_shards` = N (a power of two, 16 for a new state)
// says that the shards are the store; it is committed only once all N files exist and are stamped
// (a new state), or hold every key of the format-1 table (a migration, exact_store_migration.h),
// so a crash before it leaves nothing that counts. After it, a missing, empty, corrupt, truncated
// or foreign shard is an error naming the file, never a fresh empty shard.
//
// Transactions (the owner, ExactSeenSet, decides): standalone, each batch commits the shards it
// wrote; checkpointed, every shard keeps a transaction open, committed by CommitAll() inside the
// owner's checkpoint just before state.db's COMMIT, rows tagged with the generation that COMMIT
// makes; a crash between them leaves rows of an uncommitted generation, which the next open
// deletes (exact_shard.h).
//
// Thread-safety: each shard is guarded by its own mutex (mutex(i)): the caller holds it around
// every call on shard(i). CommitAll and the accessors of the whole store need all shards quiet
// (ExactSeenSet holds its lock exclusively). rows() may be read from any thread.
#ifndef URLSIEVE_DEDUP_EXACT_STORE_H_
#define URLSIEVE_DEDUP_EXACT_STORE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "dedup/exact_shard.h"
#include "dedup/bloom/key_hash_value.h"
#include "dedup/seen_set.h"

namespace urlsieve {

class StateDir;

class ExactStore {
 public:
  static constexpr uint32_t kDefaultShards = 16;
  static constexpr std::string_view kMetaKey = "exact_shards";  // in urlsieve_meta

  // Opens the store of `dir` (whose lock it relies on), creating the shards of a new state and
  // migrating a format-1 store (a kUpgraded notice; a version-1 state is upgraded first); a
  // read-only open of a format-1 store is FailedPrecondition naming the command that converts it.
  // Calls on_key(hash) for every stored key (null: skip). `checkpointed`: see above.
  static Result<std::unique_ptr<ExactStore>> Open(
      StateDir* dir, bool checkpointed, const std::function<void(const KeyHash&)>& on_key,
      std::vector<SeenNotice>* notices);
  ~ExactStore();

  // DIR/seen-NN.db.
  static std::string ShardPath(const std::string& dir, uint32_t shard);

  uint32_t shard_count() const { return static_cast<uint32_t>(shards_.size()); }
  uint32_t ShardOf(const KeyHash& hash) const {
    return shift_ >= 64 ? 0 : static_cast<uint32_t>(hash.high >> shift_);
  }
  // Empty only read-only, for a state whose shards were never created (it has no keys).
  bool empty() const { return shards_.empty(); }
  ExactShard& shard(uint32_t i) { return *shards_[i]; }
  std::mutex& mutex(uint32_t i) { return locks_[i].mu; }

  // Checkpointed: commits every shard's open transaction and begins the next. On an error the
  // shards not yet committed keep their transaction for the next attempt; a shard whose COMMIT
  // failed and rolled back its rows makes the store broken() (the set's answers about those keys
  // are lost until it is reopened).
  Status CommitAll();
  // Checkpointed: opens every shard's first transaction.
  Status BeginAll();
  // Ok, or why the store lost keys it had answered for (then every call fails with it).
  Status broken() const;
  void SetBroken(Status status);

  uint64_t rows() const;
  size_t index_bytes() const;

 private:
  struct alignas(64) Lock {
    std::mutex mu;
  };
  ExactStore() = default;

  std::vector<std::unique_ptr<ExactShard>> shards_;
  std::unique_ptr<Lock[]> locks_;
  uint32_t shift_ = 64;  // 64 - log2(shards)
  std::atomic<bool> is_broken_{false};
  mutable std::mutex broken_mu_;
  Status broken_;  // guarded by broken_mu_
};

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_EXACT_STORE_H_
