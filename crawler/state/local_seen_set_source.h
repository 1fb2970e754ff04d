// LocalSeenSetSource: the seen set kept in the crawl's own state directory (bloom_seen_set.h:
// Bloom-only, exact, deletable), checkpointed by the crawl. A state that records a set in Redis
// is refused with the flags that resume it (recorded_seen_set.h).
//
// Thread-safety: as SeenSetSource.
#ifndef URLSIEVE_CRAWLER_STATE_LOCAL_SEEN_SET_SOURCE_H_
#define URLSIEVE_CRAWLER_STATE_LOCAL_SEEN_SET_SOURCE_H_

#include <vector>

#include "crawler/state/seen_set_source.h"

namespace urlsieve {

class LocalSeenSetSource final : public SeenSetSource {
 public:
  // `rebuild_bloom`: rebuild an exact state's Bloom filter from its store (--rebuild).
  explicit LocalSeenSetSource(bool rebuild_bloom = false) : rebuild_bloom_(rebuild_bloom) {}

  Result<OpenedSeenSet> Open(StateDir& dir, std::vector<SeenNotice>* notices) override;
  bool InStateDirectory() const override { return true; }

 private:
  const bool rebuild_bloom_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_STATE_LOCAL_SEEN_SET_SOURCE_H_
