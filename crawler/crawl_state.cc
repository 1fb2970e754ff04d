#include "crawler/crawl_state.h"

#include <mutex>
#include <optional>
#include <string_view>

#include "base/sqlite_db.h"
#include "dedup/bloom_seen_set.h"
#include "dedup/redis_address.h"
#include "dedup/redis_seen_set.h"
#include "dedup/state_dir.h"

namespace urlsieve {
namespace {

// urlsieve_meta rows of a crawl whose seen set is shared in Redis (crawl_state.h).
constexpr std::string_view kServerRow = "seen_redis_server";
constexpr std::string_view kNameRow = "seen_redis_name";
constexpr std::string_view kIdentityRow = "seen_redis_identity";

std::string Describe(const std::string& name, const std::string& server) {
  std::string text = "the seen set '";
  text += name;
  text += "' at ";
  text += server;
  return text;
}

}  // namespace

CrawlState::~CrawlState() = default;

Result<std::unique_ptr<CrawlState>> CrawlState::Open(const CrawlStateOptions& options) {
  const bool shared = !options.seen_redis_url.empty() || !options.seen_redis_name.empty();
  std::unique_ptr<RedisSeenSet> probe;
  RedisSeenSetOptions redis_options;
  if (shared) {
    if (options.seen_redis_url.empty() || options.seen_redis_name.empty()) {
      return Status::InvalidArgument(
          "a shared seen set needs both the server (--seen-redis) and the set's name (--name)");
    }
    if (options.rebuild_bloom) {
      return Status::InvalidArgument(
          "--rebuild rebuilds a local exact seen set; this crawl's seen set is in Redis");
    }
    Result<RedisAddress> address = RedisAddress::Parse(options.seen_redis_url);
    if (!address.ok()) return address.status();
    redis_options.address = *address;
    redis_options.name = options.seen_redis_name;
    redis_options.requested = {options.capacity, options.fp_rate, options.exact,
                               options.canonicalize};
    // Before anything is written, here or in Redis: the server answers, the password is right,
    // the name holds a set of ours or nothing. A set not there yet is fine (a new crawl makes it).
    RedisSeenSetOptions probe_options = redis_options;
    probe_options.read_only = true;
    probe_options.front_cache_keys = 0;
    std::vector<SeenNotice> ignored;
    Result<std::unique_ptr<RedisSeenSet>> probed = RedisSeenSet::Open(probe_options, &ignored);
    if (probed.ok()) {
      probe = std::move(*probed);
    } else if (probed.status().code() != StatusCode::kNotFound) {
      return probed.status();
    }
  }

  std::unique_ptr<CrawlState> state(new CrawlState());
  StateDir::Options dir_options;
  dir_options.path = options.dir;
  dir_options.requested = {options.capacity, options.fp_rate, options.exact, options.canonicalize};
  dir_options.checkpointed = true;
  std::vector<SeenNotice> dir_notices;
  auto dir = StateDir::Open(dir_options, &dir_notices);
  if (!dir.ok()) return dir.status();
  state->dir_ = std::move(*dir);
  if (!shared) {
    state->notices_ = std::move(dir_notices);
    if (std::optional<std::string> name = state->dir_->StoredMeta(kNameRow)) {
      return Status::FailedPrecondition(
          state->dir_->DbPath() + ": this crawl's seen set is shared in Redis (" +
          Describe(*name, state->dir_->StoredMeta(kServerRow).value_or("?")) +
          "): resume it with --seen-redis and --name");
    }
    StateSeenSetOptions set_options;
    set_options.rebuild_bloom = options.rebuild_bloom;
    set_options.saves = false;  // its checkpoints are the crawl's
    auto set = OpenStateSeenSet(state->dir_.get(), set_options, &state->notices_);
    if (!set.ok()) return set.status();
    state->seen_set_ = std::move(*set);
    state->seen_ =
        SeenFilter::Over(state->seen_set_.get(), state->dir_->parameters().AsFilterOptions());
  } else {
    // The Redis set's parameters are the ones in effect (its notices say so); the local copy in
    // state.db only records what the crawl asked for.
    for (SeenNotice& notice : dir_notices) {
      if (notice.kind != SeenNotice::Kind::kStoredParameters) {
        state->notices_.push_back(std::move(notice));
      }
    }
    URLSIEVE_RETURN_IF_ERROR(state->CheckSharedSeenSet(redis_options, probe.get()));
    probe.reset();
    URLSIEVE_RETURN_IF_ERROR(state->OpenSharedSeenSet(redis_options));
  }
  URLSIEVE_RETURN_IF_ERROR(state->dir_->OpenFirstTransaction());
  return state;
}

Status CrawlState::CheckSharedSeenSet(const RedisSeenSetOptions& redis_options,
                                      const RedisSeenSet* existing) {
  const std::string server = redis_options.address.ToString();
  const std::string wanted = Describe(redis_options.name, server);
  const std::optional<std::string> name = dir_->StoredMeta(kNameRow);
  const std::optional<std::string> recorded_server = dir_->StoredMeta(kServerRow);
  const std::optional<std::string> identity = dir_->StoredMeta(kIdentityRow);
  if (!name) {
    // A crawl that committed a checkpoint with its own seen set has its keys there.
    if (dir_->generation() > 0) {
      return Status::FailedPrecondition(
          dir_->DbPath() + ": this crawl keeps its own seen set in " + dir_->path() +
          ", so it cannot continue on " + wanted +
          ": resume it without --seen-redis, or start the shared crawl in another --out directory");
    }
    return Status::Ok();
  }
  const std::string recorded = Describe(*name, recorded_server.value_or("?"));
  if (*name != redis_options.name || recorded_server.value_or("") != server) {
    return Status::FailedPrecondition(dir_->DbPath() + ": this crawl's seen set is " + recorded +
                                      ", not " + wanted + ": resume it with --seen-redis " +
                                      recorded_server.value_or("?") + " --name " + *name);
  }
  if (identity) {
    // A set deleted since (and perhaps made again by another crawl) has forgotten the crawl's
    // URLs: going on would fetch them all again, or lose the claims of this crawl.
    if (existing == nullptr) {
      return Status::FailedPrecondition(
          dir_->DbPath() + ": this crawl's seen set, " + recorded +
          ", no longer exists in Redis (identity " + *identity +
          "): the URLs it had seen are gone, so the crawl cannot be continued (nothing was "
          "changed)");
    }
    if (existing->identity().ToHex() != *identity) {
      return Status::FailedPrecondition(
          dir_->DbPath() + ": " + recorded + " is not the set this crawl used: its identity is " +
          existing->identity().ToHex() + ", the crawl's was " + *identity +
          " (was it deleted and made again?); nothing was changed");
    }
  }
  return Status::Ok();
}

Status CrawlState::OpenSharedSeenSet(const RedisSeenSetOptions& options) {
  RedisSeenSetOptions redis_options = options;
  const std::string server = redis_options.address.ToString();
  // The claim log is this state's: the keys told new after its last committed checkpoint come
  // back in UncommittedClaims (seen_set.h).
  redis_options.claim_log = dir_->identity().ToHex();
  redis_options.committed_generation = dir_->generation();
  Result<std::unique_ptr<RedisSeenSet>> set = RedisSeenSet::Open(redis_options, &notices_);
  if (!set.ok()) return set.status();
  const std::string identity = (*set)->identity().ToHex();
  if (std::optional<std::string> recorded = dir_->StoredMeta(kIdentityRow)) {
    if (*recorded != identity) {
      return Status::FailedPrecondition(
          dir_->DbPath() + ": " + Describe(redis_options.name, server) +
          " changed identity while it was opened (" + *recorded + ", now " + identity + ")");
    }
  } else {
    // No transaction is open yet (OpenFirstTransaction comes after): each row commits on its own,
    // before the first insert, so a crash can never leave claims the state does not point to.
    URLSIEVE_RETURN_IF_ERROR(dir_->WriteMeta(kServerRow, server));
    URLSIEVE_RETURN_IF_ERROR(dir_->WriteMeta(kNameRow, redis_options.name));
    URLSIEVE_RETURN_IF_ERROR(dir_->WriteMeta(kIdentityRow, identity));
  }
  Result<std::vector<std::string>> claims = (*set)->UncommittedClaims();
  if (!claims.ok()) return claims.status();
  uncommitted_claims_ = std::move(*claims);
  const StateParameters parameters = (*set)->parameters();
  seen_set_ = std::move(*set);
  seen_ = SeenFilter::Over(seen_set_.get(), parameters.AsFilterOptions());
  shared_seen_set_ = Describe(redis_options.name, server);
  return Status::Ok();
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
      [&](uint64_t generation) -> Status {
        Status status = seen_set_->CheckpointCommitted(generation);
        // A shared set trims its claim log here. When Redis does not answer, the claims stay
        // until a later checkpoint trims them; they are of committed generations, which the
        // next open does not hand back, so nothing is queued twice and the crawl goes on.
        if (status.code() == StatusCode::kUnavailable) return Status::Ok();
        return status;
      });
}

}  // namespace urlsieve
