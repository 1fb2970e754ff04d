#include "crawler/crawl_state.h"

#include <mutex>

#include "base/sqlite_db.h"
#include "dedup/bloom_seen_set.h"
#include "dedup/state_dir.h"

namespace urlsieve {

CrawlState::~CrawlState() = default;

Result<std::unique_ptr<CrawlState>> CrawlState::Open(const CrawlStateOptions& options) {
  std::unique_ptr<CrawlState> state(new CrawlState());
  StateDir::Options dir_options;
  dir_options.path = options.dir;
  dir_options.requested = {options.capacity, options.fp_rate, options.exact, options.canonicalize};
  dir_options.checkpointed = true;
  auto dir = StateDir::Open(dir_options, &state->notices_);
  if (!dir.ok()) return dir.status();
  state->dir_ = std::move(*dir);
  StateSeenSetOptions set_options;
  set_options.rebuild_bloom = options.rebuild_bloom;
  set_options.saves = false;  // its checkpoints are the crawl's
  auto set = OpenStateSeenSet(state->dir_.get(), set_options, &state->notices_);
  if (!set.ok()) return set.status();
  state->seen_set_ = std::move(*set);
  state->seen_ =
      SeenFilter::Over(state->seen_set_.get(), state->dir_->parameters().AsFilterOptions());
  URLSIEVE_RETURN_IF_ERROR(state->dir_->OpenFirstTransaction());
  return state;
}

uint64_t CrawlState::generation() const { return dir_->generation(); }

Status CrawlState::Restore(const std::function<Status(SqliteDb&)>& read_parts) {
  return read_parts(dir_->db());
}

Status CrawlState::Checkpoint(const std::function<Status(SqliteDb&)>& write_parts) {
  std::unique_lock<std::shared_mutex> gate(gate_);
  return dir_->Checkpoint(
      [&](SqliteDb& db, uint64_t generation) -> Status {
        URLSIEVE_RETURN_IF_ERROR(write_parts(db));
        return seen_set_->PrepareCheckpoint(db, generation);
      },
      [&](uint64_t generation) { return seen_set_->CheckpointCommitted(generation); });
}

}  // namespace urlsieve
