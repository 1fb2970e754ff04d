// RedisSeenSet's public face (redis_seen_set.h): Open, and each method forwarded to Impl, whose
// parts live in the redis_seen_set_*.cc files (redis_seen_set_impl.h lists them).
#include "dedup/redis_seen_set.h"

#include "dedup/redis_seen_set_impl.h"

namespace urlsieve {

// RedisSeenSet

Result<std::unique_ptr<RedisSeenSet>> RedisSeenSet::Open(const RedisSeenSetOptions& options,
                                                         std::vector<SeenNotice>* notices) {
  std::vector<SeenNotice> ignored;
  if (notices == nullptr) notices = &ignored;
  auto random = StateIdentity::Random();
  if (!random.ok()) return random.status();
  auto impl = std::make_unique<Impl>(options, random->ToHex().substr(0, 16));
  URLSIEVE_RETURN_IF_ERROR(impl->OpenSet(notices));
  return std::unique_ptr<RedisSeenSet>(new RedisSeenSet(std::move(impl)));
}

std::string RedisShardKeyPrefix(std::string_view name, uint32_t shard) {
  std::string out = "urlsieve:{";
  out += name;
  out += ':';
  out += std::to_string(shard);
  out += "}:";
  return out;
}

RedisSeenSet::RedisSeenSet(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RedisSeenSet::~RedisSeenSet() = default;

Status RedisSeenSet::InsertHashedIfNew(std::span<const std::string_view> keys,
                                       std::span<const KeyHash> hashes, std::span<bool> is_new) {
  return impl_->Insert({}, keys, hashes, {}, is_new);
}

Status RedisSeenSet::InsertHashedIfNewClaiming(std::span<const std::string_view> keys,
                                               std::span<const KeyHash> hashes,
                                               std::span<const std::string_view> payloads,
                                               std::span<bool> is_new) {
  return impl_->Insert({}, keys, hashes, payloads, is_new);
}

Status RedisSeenSet::InsertRouted(std::span<const uint32_t> shards,
                                  std::span<const std::string_view> keys,
                                  std::span<const KeyHash> hashes,
                                  std::span<const std::string_view> payloads,
                                  std::span<bool> is_new) {
  if (!impl_->routed()) {
    return Status::InvalidArgument(impl_->What() +
                                   " is not routed: InsertRouted is for a set opened routed");
  }
  return impl_->Insert(shards, keys, hashes, payloads, is_new);
}

Status RedisSeenSet::ForgetHashed(std::span<const std::string_view> keys,
                                  std::span<const KeyHash> hashes, std::span<bool> forgotten) {
  if (keys.size() != hashes.size()) {
    return Status::InvalidArgument(impl_->What() + ": keys and hashes differ in size");
  }
  return impl_->Forget({}, hashes, forgotten);
}

Result<uint64_t> RedisSeenSet::DeleteAll() { return impl_->DeleteAll(); }

Status RedisSeenSet::ForgetRouted(std::span<const uint32_t> shards,
                                  std::span<const std::string_view> keys,
                                  std::span<const KeyHash> hashes, std::span<bool> forgotten) {
  if (keys.size() != hashes.size()) {
    return Status::InvalidArgument(impl_->What() + ": keys and hashes differ in size");
  }
  return impl_->Forget(shards, hashes, forgotten);
}

Result<std::vector<std::string>> RedisSeenSet::UncommittedClaims() const {
  return impl_->UncommittedClaims();
}

Result<bool> RedisSeenSet::ContainsHashed(std::string_view, const KeyHash& hash) const {
  return impl_->ContainsHashed(hash);
}

SeenStats RedisSeenSet::Stats() const { return impl_->Stats(); }
StateIdentity RedisSeenSet::identity() const { return impl_->identity(); }

Status RedisSeenSet::Save() {
  if (impl_->has_claim_log()) {
    return Status::FailedPrecondition(
        "the Redis seen set of a crawl is checkpointed by the crawl: Save is not its to call");
  }
  return Status::Ok();
}

Status RedisSeenSet::PrepareCheckpoint(SqliteDb&, uint64_t) { return Status::Ok(); }

Status RedisSeenSet::CheckpointCommitted(uint64_t generation) {
  return impl_->CheckpointCommitted(generation);
}

const StateParameters& RedisSeenSet::parameters() const { return impl_->parameters(); }
Result<RedisSeenSetUsage> RedisSeenSet::Usage() const { return impl_->Usage(); }
uint64_t RedisSeenSet::round_trips() const { return impl_->round_trips(); }
uint64_t RedisSeenSet::keys_sent() const { return impl_->keys_sent(); }

}  // namespace urlsieve
