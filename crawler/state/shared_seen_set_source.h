// SharedSeenSetSource: a seen set shared in Redis (dedup/redis_seen_set.h; docs/features/
// redis-seen-set.md) by crawls that keep everything else (frontier, outputs, counters,
// checkpoints) in their own state directory (--seen-redis, --name).
//
// Before the directory is touched the server is probed (read-only): a wrong address or password,
// a port that is not Redis, a name holding another type are errors that leave no trace. state.db
// records which set the crawl uses (recorded_seen_set.h), before the first insert: resuming with
// another set, with none, or a crawl begun with its own set, is FailedPrecondition naming the
// flags that work, and so is a set deleted (and perhaps made again) since. The set's keys outlive
// a crash of the crawl while the frontier returns to its checkpoint, so the set is opened with a
// claim log named by the state's identity (StateSeenSet::InsertHashedIfNewClaiming): the claims
// made after the last committed generation come back for the crawl to queue again, and each
// checkpoint's CheckpointCommitted trims them.
//
// Thread-safety: as SeenSetSource.
#ifndef URLSIEVE_CRAWLER_STATE_SHARED_SEEN_SET_SOURCE_H_
#define URLSIEVE_CRAWLER_STATE_SHARED_SEEN_SET_SOURCE_H_

#include <memory>
#include <string>
#include <vector>

#include "crawler/state/crawl_state.h"
#include "crawler/state/seen_set_source.h"
#include "dedup/redis_seen_set.h"

namespace urlsieve {

struct RecordedSeenSet;

// The options of a crawl's seen set in Redis at `url` under `name`, created with the parameters
// of `state`; InvalidArgument for a bad address, or when the server or name is missing (`what`:
// "a shared seen set needs both the server (--seen-redis) and the set's name (--name)" or the
// like), and for what only a local set does (--rebuild; Unsupported for --deletable).
Result<RedisSeenSetOptions> CrawlRedisSeenSetOptions(const std::string& url,
                                                     const std::string& name,
                                                     const CrawlStateOptions& state,
                                                     bool rebuild_bloom, const std::string& what);

class SharedSeenSetSource final : public SeenSetSource {
 public:
  explicit SharedSeenSetSource(RedisSeenSetOptions options);
  ~SharedSeenSetSource() override;

  Status BeforeOpen(bool state_exists) override;
  Result<OpenedSeenSet> Open(StateDir& dir, std::vector<SeenNotice>* notices) override;

 private:
  // What state.db records against what was asked, and against the set as the server holds it now
  // (probe_; null when there is none).
  Status CheckRecorded(const StateDir& dir, const RecordedSeenSet& recorded) const;

  const RedisSeenSetOptions options_;
  const std::string server_;  // options_.address, as recorded
  std::unique_ptr<RedisSeenSet> probe_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_STATE_SHARED_SEEN_SET_SOURCE_H_
