#include "dedup/content_seen_filter.h"

#include <utility>

#include "base/fork_generation.h"
#include "dedup/content/local_content_seen_set.h"
#include "dedup/content/redis_content_seen_set.h"
#include "redis/redis_address.h"

namespace urlsieve {

ContentSeenFilter::ContentSeenFilter(const ContentSeenFilterOptions& options)
    : options_(options), fork_generation_(ForkGeneration()) {}

ContentSeenFilter::~ContentSeenFilter() {
  if (ForkGeneration() == fork_generation_) return;
  // A fork() child: the Redis connections (and a local set's mutex, which another thread of the
  // parent may have held at the fork) are the parent's. Dropped unclosed, as SeenFilter does; the
  // child's exit frees the memory.
  (void)set_.release();
}

Status ContentSeenFilter::CheckProcess() const {
  if (ForkGeneration() == fork_generation_) return Status::Ok();
  return Status::FailedPrecondition(
      "this content-seen set was opened before a fork(), in the parent process: a child cannot "
      "use it (its connections and lock stay the parent's). Open a new one in the child; over "
      "Redis, any number of processes share the set");
}

Result<std::unique_ptr<ContentSeenFilter>> ContentSeenFilter::Open(
    const ContentSeenFilterOptions& options) {
  if (options.max_distance < 0 || options.max_distance > 7) {
    return Status::InvalidArgument("content-seen set: max_distance must be 0 .. 7, not " +
                                   std::to_string(options.max_distance));
  }
  if (options.redis_url.empty() != options.redis_name.empty()) {
    return Status::InvalidArgument(
        "content-seen set: a set shared in Redis needs both redis_url and redis_name");
  }
  std::unique_ptr<ContentSeenFilter> filter(new ContentSeenFilter(options));
  if (options.redis_url.empty()) {
    ContentSeenOptions local;
    local.max_distance = options.max_distance;
    local.near = options.near;
    auto set = LocalContentSeenSet::Open(nullptr, local);
    if (!set.ok()) return set.status();
    filter->set_ = std::move(set).value();
    return filter;
  }
  auto address = RedisAddress::Parse(options.redis_url);
  if (!address.ok()) return address.status();
  RedisContentSeenSetOptions shared;
  shared.address = std::move(*address);
  shared.name = options.redis_name;
  shared.max_distance = options.max_distance;
  shared.near = options.near;
  auto set = RedisContentSeenSet::Open(shared);
  if (!set.ok()) return set.status();
  filter->set_ = std::move(set).value();
  return filter;
}

Result<ContentVerdict> ContentSeenFilter::Test(const ContentFingerprint& fingerprint,
                                               const ContentCopy& page) {
  URLSIEVE_RETURN_IF_ERROR(CheckProcess());
  return set_->Test(fingerprint, page);
}

Result<bool> ContentSeenFilter::Forget(const ContentFingerprint& fingerprint, std::string_view id) {
  URLSIEVE_RETURN_IF_ERROR(CheckProcess());
  return set_->Forget(fingerprint, id);
}

uint64_t ContentSeenFilter::size() const { return set_->size(); }

}  // namespace urlsieve
