// Placeholder until the Redis seen set lands: Open fails, so nothing else is reachable.
#include "dedup/redis_seen_set.h"

namespace urlsieve {

class RedisSeenSet::Impl {};

Result<std::unique_ptr<RedisSeenSet>> RedisSeenSet::Open(const RedisSeenSetOptions& options,
                                                         std::vector<SeenNotice>*) {
  return Status::Unsupported(options.address.ToString() + ": the Redis seen set is not built yet");
}
RedisSeenSet::RedisSeenSet(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RedisSeenSet::~RedisSeenSet() = default;
Status RedisSeenSet::InsertHashedIfNew(std::span<const std::string_view>, std::span<const KeyHash>,
                                       std::span<bool>) {
  return Status::Unsupported("not built");
}
Status RedisSeenSet::InsertHashedIfNewClaiming(std::span<const std::string_view>,
                                               std::span<const KeyHash>,
                                               std::span<const std::string_view>,
                                               std::span<bool>) {
  return Status::Unsupported("not built");
}
Result<std::vector<std::string>> RedisSeenSet::UncommittedClaims() const {
  return Status::Unsupported("not built");
}
Result<bool> RedisSeenSet::ContainsHashed(std::string_view, const KeyHash&) const {
  return Status::Unsupported("not built");
}
SeenStats RedisSeenSet::Stats() const { return {}; }
StateIdentity RedisSeenSet::identity() const { return {}; }
Status RedisSeenSet::Save() { return Status::Ok(); }
Status RedisSeenSet::PrepareCheckpoint(SqliteDb&, uint64_t) { return Status::Ok(); }
Status RedisSeenSet::CheckpointCommitted(uint64_t) { return Status::Ok(); }
const StateParameters& RedisSeenSet::parameters() const {
  static const StateParameters none;
  return none;
}
Result<RedisSeenSetUsage> RedisSeenSet::Usage() const { return Status::Unsupported("not built"); }
uint64_t RedisSeenSet::round_trips() const { return 0; }
uint64_t RedisSeenSet::keys_sent() const { return 0; }

}  // namespace urlsieve
