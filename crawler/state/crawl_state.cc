#include "crawler/state/crawl_state.h"

#include <filesystem>
#include <mutex>
#include <utility>

#include "base/sqlite_db.h"
#include "dedup/state_dir.h"

namespace urlsieve {

StateParameters CrawlStateOptions::Requested() const {
  StateParameters requested{capacity, fp_rate, exact, canonicalize};
  requested.deletable = deletable && !exact;
  return requested;
}

CrawlState::~CrawlState() = default;

Result<std::unique_ptr<CrawlState>> CrawlState::Open(const CrawlStateOptions& options,
                                                     SeenSetSource& source) {
  // Whatever must leave no trace when it fails (a shared set's server probed, a new cluster node
  // joined) comes before the directory is made.
  URLSIEVE_RETURN_IF_ERROR(
      source.BeforeOpen(std::filesystem::exists(std::filesystem::path(options.dir) / "state.db")));
  std::unique_ptr<CrawlState> state(new CrawlState());
  StateDir::Options dir_options;
  dir_options.path = options.dir;
  dir_options.requested = options.Requested();
  dir_options.checkpointed = true;
  std::vector<SeenNotice> dir_notices;
  auto dir = StateDir::Open(dir_options, &dir_notices);
  if (!dir.ok()) return dir.status();
  state->dir_ = std::move(*dir);
  for (SeenNotice& notice : dir_notices) {
    // A set in Redis has parameters of its own (its notices say so); the local copy in state.db
    // only records what the crawl asked for.
    if (source.InStateDirectory() || notice.kind != SeenNotice::Kind::kStoredParameters) {
      state->notices_.push_back(std::move(notice));
    }
  }
  Result<OpenedSeenSet> opened = source.Open(*state->dir_, &state->notices_);
  if (!opened.ok()) return opened.status();
  state->seen_set_ = std::move(opened->set);
  state->seen_ = SeenFilter::Over(state->seen_set_.get(), opened->parameters.AsFilterOptions());
  state->shared_seen_set_ = std::move(opened->shared);
  state->uncommitted_claims_ = std::move(opened->uncommitted_claims);
  URLSIEVE_RETURN_IF_ERROR(state->dir_->OpenFirstTransaction());
  return state;
}

uint64_t CrawlState::generation() const { return dir_->generation(); }

Status CrawlState::Restore(const std::function<Status(SqliteDb&)>& read_parts) {
  return read_parts(dir_->db());
}

Status CrawlState::Checkpoint(const std::function<Status(SqliteDb&)>& write_parts,
                              const std::function<void()>& committed) {
  std::unique_lock<std::shared_mutex> gate(gate_);
  return dir_->Checkpoint(
      [&](SqliteDb& db, uint64_t generation) -> Status {
        URLSIEVE_RETURN_IF_ERROR(write_parts(db));
        return seen_set_->PrepareCheckpoint(db, generation);
      },
      [&](uint64_t generation) -> Status {
        if (committed) committed();
        Status status = seen_set_->CheckpointCommitted(generation);
        // A shared set trims its claim log here. When Redis does not answer, the claims stay
        // until a later checkpoint trims them; they are of committed generations, which the
        // next open does not hand back, so nothing is queued twice and the crawl goes on.
        if (status.code() == StatusCode::kUnavailable) return Status::Ok();
        return status;
      });
}

}  // namespace urlsieve
