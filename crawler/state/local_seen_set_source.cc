#include "crawler/state/local_seen_set_source.h"

#include "crawler/state/recorded_seen_set.h"
#include "dedup/bloom_seen_set.h"
#include "dedup/state_dir.h"

namespace urlsieve {

Result<OpenedSeenSet> LocalSeenSetSource::Open(StateDir& dir, std::vector<SeenNotice>* notices) {
  URLSIEVE_RETURN_IF_ERROR(CheckRecordedKind(dir, RecordedSeenSet::Read(dir),
                                             RecordedSeenSet::Kind::kOwn, "its own seen set"));
  StateSeenSetOptions options;
  options.rebuild_bloom = rebuild_bloom_;
  options.saves = false;  // its checkpoints are the crawl's
  Result<std::unique_ptr<StateSeenSet>> set = OpenStateSeenSet(&dir, options, notices);
  if (!set.ok()) return set.status();
  OpenedSeenSet opened;
  opened.set = std::move(*set);
  opened.parameters = dir.parameters();
  return opened;
}

}  // namespace urlsieve
