// SeenSetSource: where a crawl state's seen set comes from (docs/architecture.md, "One crawl,
// three deployments"): the set kept in the state directory (local_seen_set_source.h), a set
// shared in Redis (shared_seen_set_source.h) or a crawl cluster's routed set
// (crawler/cluster/cluster_seen_set_source.h). CrawlState owns the directory and the checkpoint
// protocol; the source knows its kind of set: what must happen before the directory is touched,
// what the state must have recorded (recorded_seen_set.h), and how the set opens.
//
// Thread-safety: none; CrawlState::Open calls BeforeOpen, then Open, from one thread.
#ifndef URLSIEVE_CRAWLER_STATE_SEEN_SET_SOURCE_H_
#define URLSIEVE_CRAWLER_STATE_SEEN_SET_SOURCE_H_

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "dedup/seen_set_params.h"
#include "dedup/state_seen_set.h"

namespace urlsieve {

class StateDir;

struct OpenedSeenSet {
  std::unique_ptr<StateSeenSet> set;
  StateParameters parameters;  // in effect (a Redis set's own; the directory's for its own set)
  // A set in Redis: "the seen set 'NAME' at redis://host:port/db", for messages; "" for the
  // state's own.
  std::string shared;
  // The claims (StateSeenSet::UncommittedClaims) of keys told this crawl "new" after its last
  // committed checkpoint: URLs it must queue again.
  std::vector<std::string> uncommitted_claims;
};

class SeenSetSource {
 public:
  virtual ~SeenSetSource() = default;

  // Before the state directory is made or opened (`state_exists`: its state.db is there): what
  // must leave no trace when it fails (a shared set's server probed, a new cluster node joined).
  virtual Status BeforeOpen(bool state_exists) {
    (void)state_exists;
    return Status::Ok();
  }
  // With the directory open and no transaction begun: checks what the state recorded of its seen
  // set, opens the set and records it (rows that commit on their own, before the first insert).
  // Notices of the open (stored parameters in effect, a rebuilt filter) go to `notices`.
  virtual Result<OpenedSeenSet> Open(StateDir& dir, std::vector<SeenNotice>* notices) = 0;
  // Whether the set lives in the state directory (then the directory's stored parameters are
  // the ones in effect, and its notices about them apply).
  virtual bool InStateDirectory() const { return false; }
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_STATE_SEEN_SET_SOURCE_H_
