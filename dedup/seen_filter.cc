#include "dedup/seen_filter.h"

#include "base/fork_generation.h"
#include "dedup/bloom/key_hash.h"
#include "dedup/bloom_seen_set.h"
#include "dedup/generational_seen_set.h"
#include "dedup/redis_seen_set.h"
#include "dedup/state_dir.h"
#include "url/tracking_params.h"

namespace urlsieve {
namespace {

// Per-thread buffers of the batch paths, so that a steady stream of batches allocates nothing.
struct Scratch {
  std::vector<std::string> keys;
  std::vector<std::string_view> views;
  std::vector<KeyHash> hashes;
  std::vector<uint32_t> positions;
  std::unique_ptr<bool[]> is_new;
  size_t is_new_size = 0;
  bool* IsNew(size_t n) {
    if (n > is_new_size) {
      is_new.reset(new bool[n]);
      is_new_size = n;
    }
    return is_new.get();
  }
};

Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

// The options that make no sense with a Redis seen set, and a Redis URL without a set name (or
// the reverse): InvalidArgument naming them.
Status CheckRedisOptions(const SeenFilterOptions& options) {
  if (options.redis_url.empty()) {
    if (!options.redis_name.empty()) {
      return Status::InvalidArgument("a Redis set name (\"" + options.redis_name +
                                     "\") needs a Redis URL");
    }
    return Status::Ok();
  }
  if (options.redis_name.empty()) {
    return Status::InvalidArgument("a Redis seen set needs a name (redis_name) as well as the URL");
  }
  if (!options.state_dir.empty()) {
    return Status::InvalidArgument("a Redis seen set and a state directory (" + options.state_dir +
                                   ") exclude each other: the set lives in Redis");
  }
  if (options.checkpointed || options.rebuild_bloom) {
    return Status::InvalidArgument(
        "a Redis seen set is not checkpointed and has no Bloom filter to rebuild: every insert "
        "is in Redis when it returns");
  }
  return Status::Ok();
}

// revisit_after (docs/features/generational.md): a generational Bloom filter, or, exact, the
// store's first-seen times.
Status CheckRevisitOptions(const SeenFilterOptions& options) {
  if (options.revisit_after.count() < 0) {
    return Status::InvalidArgument("revisit_after must not be negative");
  }
  if (options.revisit_after.count() == 0) return Status::Ok();
  return GenerationalSeenSet::CheckOptions(options.revisit_after, options.generations);
}

}  // namespace

SeenFilter::SeenFilter(const SeenFilterOptions& options)
    : options_(options), canonicalizer_(options.canonicalize), fork_generation_(ForkGeneration()) {}

SeenFilter::~SeenFilter() {
  if (ForkGeneration() == fork_generation_) return;
  // A fork() child: the state directory, its lock and database, the snapshot a close would write,
  // the Redis connections are the parent's. Dropped unclosed; the child's exit frees the memory.
  (void)owned_set_.release();
  (void)dir_.release();
}

Status SeenFilter::CheckProcess() const {
  if (ForkGeneration() == fork_generation_) return Status::Ok();
  return Status::FailedPrecondition(
      "this SeenFilter was opened before a fork(), in the parent process: a child cannot use it "
      "(its state, lock and connections stay the parent's). Open a new SeenFilter in the child; "
      "over Redis, any number of processes share the set, and a state directory takes one at a "
      "time");
}

Result<std::unique_ptr<SeenFilter>> SeenFilter::Open(const SeenFilterOptions& options) {
  if (options.capacity == 0) return Status::InvalidArgument("capacity must be positive");
  if (!(options.fp_rate > 0 && options.fp_rate < 1)) {
    return Status::InvalidArgument("fp_rate must be in (0, 1)");
  }
  URLSIEVE_RETURN_IF_ERROR(CheckTrackingExceptions(options.canonicalize.tracking_exceptions));
  URLSIEVE_RETURN_IF_ERROR(CheckRedisOptions(options));
  if (!options.redis_url.empty()) return OpenRedis(options);  // RedisSeenSet checks the rest
  URLSIEVE_RETURN_IF_ERROR(CheckRevisitOptions(options));
  if (options.deletable && options.revisit_after.count() > 0) {
    return Status::InvalidArgument(
        "deletable and revisit_after do not combine: a time-aware filter forgets by ageing its "
        "generations; choose one");
  }
  if (options.deletable && options.exact) {
    return Status::InvalidArgument(
        "deletable is for a Bloom-only filter: exact mode forgets without it (the exact store "
        "deletes the key)");
  }
  if (options.state_dir.empty() && (options.exact || options.checkpointed)) {
    return Status::InvalidArgument("exact and checkpointed modes need a state directory");
  }
  if (options.state_dir.empty() && (options.read_only || options.rebuild_bloom)) {
    return Status::InvalidArgument("read_only and rebuild_bloom need a state directory");
  }
  if (options.read_only && (options.checkpointed || options.rebuild_bloom)) {
    return Status::InvalidArgument("a read-only open cannot be checkpointed or rebuild the state");
  }
  std::unique_ptr<SeenFilter> filter(new SeenFilter(options));
  if (options.state_dir.empty()) {
    if (options.revisit_after.count() > 0) {
      auto set =
          GenerationalSeenSet::InMemory({options.capacity, options.fp_rate, options.revisit_after,
                                         options.generations, options.clock});
      if (!set.ok()) return set.status();
      filter->owned_set_ = std::move(*set);
      filter->set_ = filter->owned_set_.get();
      return filter;
    }
    auto set = BloomSeenSet::InMemory(options.capacity, options.fp_rate, options.deletable);
    if (!set.ok()) return set.status();
    filter->owned_set_ = std::move(*set);
    filter->set_ = filter->owned_set_.get();
    return filter;
  }
  StateDir::Options dir_options;
  dir_options.path = options.state_dir;
  dir_options.requested = {options.capacity, options.fp_rate, options.exact, options.canonicalize};
  if (options.revisit_after.count() > 0) {
    dir_options.requested.revisit_after_s = static_cast<uint64_t>(options.revisit_after.count());
    dir_options.requested.generations = options.generations;
  }
  dir_options.requested.deletable = options.deletable;
  dir_options.read_only = options.read_only;
  dir_options.checkpointed = options.checkpointed;
  auto dir = StateDir::Open(dir_options, &filter->notices_);
  if (!dir.ok()) return dir.status();
  filter->dir_ = std::move(*dir);
  const StateParameters& stored = filter->dir_->parameters();
  filter->options_.capacity = stored.capacity;
  filter->options_.fp_rate = stored.fp_rate;
  filter->options_.exact = stored.exact;
  filter->options_.deletable = stored.deletable;
  filter->options_.canonicalize = stored.canonicalize;
  filter->options_.revisit_after = std::chrono::seconds(stored.revisit_after_s);
  filter->options_.generations =
      stored.revisit_after_s > 0 ? stored.generations : options.generations;
  filter->canonicalizer_ = UrlCanonicalizer(stored.canonicalize);
  StateSeenSetOptions set_options;
  set_options.rebuild_bloom = options.rebuild_bloom;
  set_options.clock = options.clock;
  auto set = OpenStateSeenSet(filter->dir_.get(), set_options, &filter->notices_);
  if (!set.ok()) return set.status();
  filter->owned_set_ = std::move(*set);
  filter->set_ = filter->owned_set_.get();
  URLSIEVE_RETURN_IF_ERROR(filter->dir_->OpenFirstTransaction());
  return filter;
}

Result<std::unique_ptr<SeenFilter>> SeenFilter::OpenRedis(const SeenFilterOptions& options) {
  auto address = RedisAddress::Parse(options.redis_url);
  if (!address.ok()) return address.status();
  std::unique_ptr<SeenFilter> filter(new SeenFilter(options));
  RedisSeenSetOptions set_options;
  set_options.address = std::move(*address);
  set_options.name = options.redis_name;
  set_options.requested = {options.capacity, options.fp_rate, options.exact, options.canonicalize};
  set_options.requested.revisit_after_s = static_cast<uint64_t>(options.revisit_after.count());
  set_options.requested.generations = options.generations;
  set_options.requested.deletable = options.deletable;
  set_options.clock = options.clock;
  set_options.front_cache_keys = options.redis_front_cache_keys;
  set_options.read_only = options.read_only;
  set_options.accept_loss = options.redis_accept_loss;
  auto set = RedisSeenSet::Open(set_options, &filter->notices_);
  if (!set.ok()) return set.status();
  // An existing set keeps the parameters it was created with (a notice says so when they differ
  // from the requested ones), as a state directory does.
  const StateParameters& stored = (*set)->parameters();
  filter->options_.capacity = stored.capacity;
  filter->options_.fp_rate = stored.fp_rate;
  filter->options_.exact = stored.exact;
  filter->options_.canonicalize = stored.canonicalize;
  filter->options_.revisit_after = std::chrono::seconds(stored.revisit_after_s);
  filter->options_.generations = stored.generations;
  filter->options_.deletable = stored.deletable;
  filter->canonicalizer_ = UrlCanonicalizer(stored.canonicalize);
  filter->owned_set_ = std::move(*set);
  filter->set_ = filter->owned_set_.get();
  return filter;
}

std::unique_ptr<SeenFilter> SeenFilter::Over(SeenSet* set, const SeenFilterOptions& options) {
  std::unique_ptr<SeenFilter> filter(new SeenFilter(options));
  filter->set_ = set;
  return filter;
}

Status SeenFilter::Checkpoint() {
  URLSIEVE_RETURN_IF_ERROR(CheckProcess());
  if (owned_set_ != nullptr && dir_ == nullptr && options_.redis_url.empty()) {
    return Status::FailedPrecondition("an in-memory SeenFilter has no state");
  }
  return set_->Save();
}

Result<bool> SeenFilter::InsertIfNew(std::string_view url) {
  URLSIEVE_RETURN_IF_ERROR(CheckProcess());
  Scratch& s = ThreadScratch();
  if (s.keys.empty()) s.keys.emplace_back();
  URLSIEVE_RETURN_IF_ERROR(canonicalizer_.CanonicalizeTo(url, &s.keys[0]));
  const std::string_view key = s.keys[0];
  return set_->InsertHashedKeyIfNew(key, HashKey(key));
}

Status SeenFilter::InsertIfNewBatch(std::span<const std::string_view> urls,
                                    std::vector<SeenResult>* out) {
  URLSIEVE_RETURN_IF_ERROR(CheckProcess());
  Scratch& s = ThreadScratch();
  if (s.keys.size() < urls.size()) s.keys.resize(urls.size());
  s.views.clear();
  s.hashes.clear();
  s.positions.clear();
  out->resize(urls.size());
  for (size_t i = 0; i < urls.size(); ++i) {
    Status status = canonicalizer_.CanonicalizeTo(urls[i], &s.keys[i]);
    if (!status.ok()) {
      (*out)[i] = SeenResult{Verdict::kInvalid, std::move(status)};
      continue;
    }
    s.views.push_back(s.keys[i]);
    s.hashes.push_back(HashKey(s.keys[i]));
    s.positions.push_back(static_cast<uint32_t>(i));
  }
  bool* is_new = s.IsNew(s.views.size());
  URLSIEVE_RETURN_IF_ERROR(set_->InsertHashedIfNew(s.views, s.hashes, {is_new, s.views.size()}));
  for (size_t j = 0; j < s.positions.size(); ++j) {
    SeenResult& r = (*out)[s.positions[j]];
    r.verdict = is_new[j] ? Verdict::kNew : Verdict::kSeen;
    r.error = Status();
  }
  return Status::Ok();
}

Result<bool> SeenFilter::Forget(std::string_view url) {
  std::vector<ForgetResult> out;
  URLSIEVE_RETURN_IF_ERROR(ForgetBatch({&url, 1}, &out));
  if (out[0].outcome == ForgetOutcome::kInvalid) return out[0].error;
  return out[0].outcome == ForgetOutcome::kForgotten;
}

Status SeenFilter::ForgetBatch(std::span<const std::string_view> urls,
                               std::vector<ForgetResult>* out) {
  URLSIEVE_RETURN_IF_ERROR(CheckProcess());
  Scratch& s = ThreadScratch();
  if (s.keys.size() < urls.size()) s.keys.resize(urls.size());
  s.views.clear();
  s.hashes.clear();
  s.positions.clear();
  out->assign(urls.size(), ForgetResult());
  for (size_t i = 0; i < urls.size(); ++i) {
    Status status = canonicalizer_.CanonicalizeTo(urls[i], &s.keys[i]);
    if (!status.ok()) {
      (*out)[i] = ForgetResult{ForgetOutcome::kInvalid, std::move(status)};
      continue;
    }
    s.views.push_back(s.keys[i]);
    s.hashes.push_back(HashKey(s.keys[i]));
    s.positions.push_back(static_cast<uint32_t>(i));
  }
  bool* forgotten = s.IsNew(s.views.size());
  URLSIEVE_RETURN_IF_ERROR(set_->ForgetHashed(s.views, s.hashes, {forgotten, s.views.size()}));
  for (size_t j = 0; j < s.positions.size(); ++j) {
    (*out)[s.positions[j]].outcome =
        forgotten[j] ? ForgetOutcome::kForgotten : ForgetOutcome::kNotThere;
  }
  return Status::Ok();
}

Result<bool> SeenFilter::Contains(std::string_view url) const {
  URLSIEVE_RETURN_IF_ERROR(CheckProcess());
  std::string key;
  URLSIEVE_RETURN_IF_ERROR(canonicalizer_.CanonicalizeTo(url, &key));
  return set_->ContainsHashed(key, HashKey(key));
}

}  // namespace urlsieve
