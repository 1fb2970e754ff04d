// SeenState: a state directory and the seen set kept in it, opened and checkpointed the way the
// crawl's CrawlState does it (StateDir, OpenStateSeenSet, SeenFilter::Over, StateDir::Checkpoint
// with the set's PrepareCheckpoint / CheckpointCommitted), for the dedup tests that need tables of
// their own in the checkpoint's transaction, or a COMMIT that fails.
// Thread-safety: none; one test thread.
#ifndef URLSIEVE_TESTS_DEDUP_SEEN_STATE_H_
#define URLSIEVE_TESTS_DEDUP_SEEN_STATE_H_

#include <functional>
#include <memory>
#include <vector>

#include "base/sqlite_db.h"
#include "dedup/bloom_seen_set.h"
#include "dedup/seen_filter.h"
#include "dedup/state_dir.h"

namespace urlsieve::testing {

struct SeenState {
  // The options of SeenFilter::Open (state_dir set); the set's Save() works in either mode.
  static Result<std::unique_ptr<SeenState>> Open(const SeenFilterOptions& o) {
    auto state = std::make_unique<SeenState>();
    StateDir::Options dir_options;
    dir_options.path = o.state_dir;
    dir_options.requested = {o.capacity, o.fp_rate, o.exact, o.canonicalize};
    dir_options.requested.deletable = o.deletable;
    if (o.revisit_after.count() > 0) {
      dir_options.requested.revisit_after_s = static_cast<uint64_t>(o.revisit_after.count());
      dir_options.requested.generations = o.generations;
    }
    dir_options.read_only = o.read_only;
    dir_options.checkpointed = o.checkpointed;
    auto dir = StateDir::Open(dir_options, &state->notices);
    if (!dir.ok()) return dir.status();
    state->dir = std::move(*dir);
    StateSeenSetOptions set_options;
    set_options.rebuild_bloom = o.rebuild_bloom;
    set_options.clock = o.clock;
    auto set = OpenStateSeenSet(state->dir.get(), set_options, &state->notices);
    if (!set.ok()) return set.status();
    state->set = std::move(*set);
    state->filter = SeenFilter::Over(state->set.get(), state->dir->parameters().AsFilterOptions());
    URLSIEVE_RETURN_IF_ERROR(state->dir->OpenFirstTransaction());
    return state;
  }

  // A checkpoint with write_parts(db) in its transaction.
  Status Checkpoint(const std::function<Status(SqliteDb&)>& write_parts = nullptr) {
    return dir->Checkpoint(
        [&](SqliteDb& db, uint64_t generation) -> Status {
          if (write_parts) URLSIEVE_RETURN_IF_ERROR(write_parts(db));
          return set->PrepareCheckpoint(db, generation);
        },
        [&](uint64_t generation) { return set->CheckpointCommitted(generation); });
  }

  SqliteDb& db() { return dir->db(); }

  std::vector<SeenNotice> notices;
  // In this order: the set is closed before the database and the lock.
  std::unique_ptr<StateDir> dir;
  std::unique_ptr<StateSeenSet> set;
  std::unique_ptr<SeenFilter> filter;
};

}  // namespace urlsieve::testing

#endif  // URLSIEVE_TESTS_DEDUP_SEEN_STATE_H_
