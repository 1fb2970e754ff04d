#include "crawler/state/shared_seen_set_source.h"

#include <utility>

#include "crawler/state/recorded_seen_set.h"
#include "dedup/state_dir.h"
#include "redis/redis_address.h"

namespace urlsieve {

Result<RedisSeenSetOptions> CrawlRedisSeenSetOptions(const std::string& url,
                                                     const std::string& name,
                                                     const CrawlStateOptions& state,
                                                     bool rebuild_bloom, const std::string& what) {
  if (url.empty() || name.empty()) return Status::InvalidArgument(what);
  if (rebuild_bloom) {
    return Status::InvalidArgument(
        "--rebuild rebuilds a local exact seen set; this crawl's seen set is in Redis");
  }
  Result<RedisAddress> address = RedisAddress::Parse(url);
  if (!address.ok()) return address.status();
  RedisSeenSetOptions options;
  options.address = *address;
  options.name = name;
  options.requested = {state.capacity, state.fp_rate, state.exact, state.canonicalize};
  options.requested.deletable = state.deletable;  // `urlsieve forget` can then forget in it
  return options;
}

SharedSeenSetSource::SharedSeenSetSource(RedisSeenSetOptions options)
    : options_(std::move(options)), server_(options_.address.ToString()) {}

SharedSeenSetSource::~SharedSeenSetSource() = default;

Status SharedSeenSetSource::BeforeOpen(bool) {
  // The server answers, the password is right, the name holds a set of ours or nothing. A set not
  // there yet is fine (a new crawl makes it).
  RedisSeenSetOptions probe_options = options_;
  probe_options.read_only = true;
  probe_options.front_cache_keys = 0;
  std::vector<SeenNotice> ignored;
  Result<std::unique_ptr<RedisSeenSet>> probed = RedisSeenSet::Open(probe_options, &ignored);
  if (probed.ok()) {
    probe_ = std::move(*probed);
  } else if (probed.status().code() != StatusCode::kNotFound) {
    return probed.status();
  }
  return Status::Ok();
}

Status SharedSeenSetSource::CheckRecorded(const StateDir& dir,
                                          const RecordedSeenSet& recorded) const {
  const std::string wanted =
      RecordedSeenSet::Describe(RecordedSeenSet::Kind::kShared, options_.name, server_);
  URLSIEVE_RETURN_IF_ERROR(
      CheckRecordedKind(dir, recorded, RecordedSeenSet::Kind::kShared, wanted));
  if (recorded.kind != RecordedSeenSet::Kind::kShared) return Status::Ok();
  if (recorded.name != options_.name || recorded.server != server_) {
    return Status::FailedPrecondition(dir.DbPath() + ": this crawl's seen set is " +
                                      recorded.Describe() + ", not " + wanted +
                                      ": resume it with " + recorded.ResumeFlags());
  }
  if (recorded.identity.empty()) return Status::Ok();
  // A set deleted since (and perhaps made again by another crawl) has forgotten the crawl's URLs:
  // going on would fetch them all again, or lose the claims of this crawl.
  if (probe_ == nullptr) {
    return Status::FailedPrecondition(
        dir.DbPath() + ": this crawl's seen set, " + recorded.Describe() +
        ", no longer exists in Redis (identity " + recorded.identity +
        "): the URLs it had seen are gone, so the crawl cannot be continued (nothing was "
        "changed)");
  }
  if (probe_->identity().ToHex() != recorded.identity) {
    return Status::FailedPrecondition(
        dir.DbPath() + ": " + recorded.Describe() + " is not the set this crawl used: its " +
        "identity is " + probe_->identity().ToHex() + ", the crawl's was " + recorded.identity +
        " (was it deleted and made again?); nothing was changed");
  }
  return Status::Ok();
}

Result<OpenedSeenSet> SharedSeenSetSource::Open(StateDir& dir, std::vector<SeenNotice>* notices) {
  RecordedSeenSet recorded = RecordedSeenSet::Read(dir);
  URLSIEVE_RETURN_IF_ERROR(CheckRecorded(dir, recorded));
  probe_.reset();
  // The claim log is this state's: the keys told new after its last committed checkpoint come
  // back in UncommittedClaims.
  RedisSeenSetOptions options = options_;
  options.claim_log = dir.identity().ToHex();
  options.committed_generation = dir.generation();
  Result<std::unique_ptr<RedisSeenSet>> set = RedisSeenSet::Open(options, notices);
  if (!set.ok()) return set.status();
  const std::string identity = (*set)->identity().ToHex();
  const std::string described =
      RecordedSeenSet::Describe(RecordedSeenSet::Kind::kShared, options_.name, server_);
  if (!recorded.identity.empty() && recorded.identity != identity) {
    return Status::FailedPrecondition(dir.DbPath() + ": " + described +
                                      " changed identity while it was opened (" +
                                      recorded.identity + ", now " + identity + ")");
  }
  // Before the first insert, so a crash can never leave claims the state does not point to.
  URLSIEVE_RETURN_IF_ERROR(RecordedSeenSet::Write(
      dir, {RecordedSeenSet::Kind::kShared, server_, options_.name, identity, ""}));
  Result<std::vector<std::string>> claims = (*set)->UncommittedClaims();
  if (!claims.ok()) return claims.status();
  OpenedSeenSet opened;
  opened.parameters = (*set)->parameters();
  opened.set = std::move(*set);
  opened.shared = described;
  opened.uncommitted_claims = std::move(*claims);
  return opened;
}

}  // namespace urlsieve
