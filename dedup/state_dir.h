// StateDir: one open state directory (docs/formats/state-directory.md, "State files and the
// checkpoint protocol"): its lock, state.db with its urlsieve_meta table, the state's identity,
// format version and generation, the parameters it was created with, and the checkpoint
// transaction. A standalone SeenFilter owns one; so does a crawl (CrawlState,
// crawler/state/crawl_state.h), whose other parts (the frontier, the outputs, the counters) keep
// their tables in the same database. The seen set kept in the directory (bloom_seen_set.h) is
// opened on top of it. The layout, the recovery rules and the messages are described in
// seen_filter.h.
//
// The parameters are stored as seen_set_params.h spells them (as the Redis seen set does).
//
// What it does at Open, in order: creates the directory (writable), takes DIR/LOCK (state_lock.h:
// exclusive, or shared when read-only), refuses a missing or empty state.db beside a Bloom
// snapshot, opens state.db (creating it, WAL, when writable), refuses a foreign database, creates
// the meta rows of a new state (format, version, identity, the parameters, generation 0, and the
// exact store's table in exact mode) in one transaction, then reads them all back: format and
// version, the parameters (which override the requested ones, with a notice each), the
// generation and the identity. A version-1 state (no identity) is upgraded only by Upgrade(),
// which the seen set calls once it has checked its files by the version-1 rules.
//
// Transactions. Standalone (checkpointed = false) the directory has no transaction open between
// calls: a checkpoint (and each exact batch) is its own. Checkpointed (the crawl, `filter
// --exact`), a transaction is always open once OpenFirstTransaction() ran: writes accumulate in it
// and become durable together at Checkpoint(), which COMMITs and BEGINs the next.
//
// Thread-safety: none for the database (SqliteDb has none); the owner serializes its use (the seen
// set's lock, the crawl's gate). generation() may be read from any thread.
#ifndef URLSIEVE_DEDUP_STATE_DIR_H_
#define URLSIEVE_DEDUP_STATE_DIR_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/sqlite_db.h"
#include "base/status.h"
#include "dedup/seen_filter.h"
#include "dedup/seen_set.h"
#include "dedup/seen_set_params.h"
#include "dedup/state/state_identity.h"
#include "dedup/state/state_lock.h"
#include "url/url_canonicalizer.h"

namespace urlsieve {

class StateDir {
 public:
  struct Options {
    std::string path;
    StateParameters requested;  // for a new state; an existing one keeps its own
    bool read_only = false;     // writes nothing; NotFound when there is no state.db
    bool checkpointed = false;  // a transaction is always open (see above)
  };

  // Errors as SeenFilter::Open (seen_filter.h). Notices about stored parameters are appended to
  // `notices`.
  static Result<std::unique_ptr<StateDir>> Open(const Options& options,
                                                std::vector<SeenNotice>* notices);
  ~StateDir();
  StateDir(const StateDir&) = delete;
  StateDir& operator=(const StateDir&) = delete;

  // A version-1 state gets an identity, committed with the generation it got it at (a kUpgraded
  // notice). A no-op for a version-2 state; never called read-only.
  Status Upgrade(std::vector<SeenNotice>* notices);
  // Checkpointed: opens the first transaction, once the seen set is open. A no-op standalone.
  Status OpenFirstTransaction();

  // The checkpoint protocol: (standalone: BEGIN) → prepare(db, g + 1), where the parts write
  // their rows and the seen set its part → the generation row → COMMIT → generation() = g + 1 →
  // committed(g + 1) → (checkpointed: BEGIN the next). When prepare or the COMMIT fails,
  // standalone rolls back; checkpointed keeps the transaction, with its rows, for the next
  // attempt; the generation stays g. After the COMMIT, committed's error is returned, but the
  // next transaction is begun first.
  Status Checkpoint(const std::function<Status(SqliteDb&, uint64_t generation)>& prepare,
                    const std::function<Status(uint64_t generation)>& committed);

  SqliteDb& db() { return *db_; }
  const std::string& path() const { return path_; }
  std::string DbPath() const { return path_ + "/state.db"; }
  // DIR/name.
  std::string FilePath(std::string_view name) const { return path_ + "/" + std::string(name); }
  bool read_only() const { return read_only_; }
  bool checkpointed() const { return checkpointed_; }
  // FailedPrecondition "DIR was opened read-only".
  Status ReadOnlyError() const;

  // The stored parameters (the requested ones only for a state this open created).
  const StateParameters& parameters() const { return parameters_; }

  StateIdentity identity() const { return identity_; }  // zero while a version-1 state
  // The generation of the last committed checkpoint (or standalone exact batch).
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  // A standalone exact batch committed `generation` on its own (bloom_seen_set.h).
  void SetCommittedGeneration(uint64_t generation) {
    generation_.store(generation, std::memory_order_release);
  }
  // The generation a version-1 state got its identity at (urlsieve_meta upgraded_at_generation).
  std::optional<uint64_t> upgraded_at() const { return upgraded_at_; }

  // urlsieve_meta as read at Open: a value, or a number (nullopt when absent).
  std::optional<std::string> StoredMeta(std::string_view key) const;
  std::optional<uint64_t> StoredNumber(std::string_view key) const;
  // INSERT OR REPLACE into urlsieve_meta, in whatever transaction is open.
  Status WriteMeta(std::string_view key, const std::string& value);

  // Ok when a state file stamped (identity, generation) may belong to this state; else
  // Corruption naming it, state.db and both identities.
  Status CheckIdentity(const std::string& file, const StateIdentity& file_identity,
                       uint64_t file_generation) const;

 private:
  StateDir(const Options& options);
  // Open's steps, in order (see above).
  Status OpenDb(std::vector<SeenNotice>* notices);
  Status LockDirectory();
  // state.db opened (WAL when writable); *has_meta: whether it holds a urlsieve state.
  Status OpenDatabase(bool* has_meta);
  // The meta rows of a new state, with the requested parameters, in one transaction.
  Status CreateMeta();
  // urlsieve_meta into meta_, then format, version, parameters, generation and identity from it.
  Status ReadMeta();
  Status AdoptMeta();
  // A notice per stored parameter that differs from the requested one.
  void NoteStoredParameters(const StateParameters& requested,
                            std::vector<SeenNotice>* notices) const;

  const std::string path_;
  const bool read_only_;
  const bool checkpointed_;
  StateParameters parameters_;
  // Declared before db_, so it is released after the database is closed.
  std::unique_ptr<StateLock> lock_;
  std::unique_ptr<SqliteDb> db_;
  std::map<std::string, std::string, std::less<>> meta_;  // urlsieve_meta as read at Open
  StateIdentity identity_;
  bool version1_ = false;  // the state has no identity yet (format version 1)
  std::optional<uint64_t> upgraded_at_;
  std::atomic<uint64_t> generation_{0};
};

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_STATE_DIR_H_
