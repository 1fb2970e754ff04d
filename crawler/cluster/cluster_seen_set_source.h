// ClusterSeenSetSource: the seen set of a node of a crawl cluster (docs/features/cluster.md): the
// cluster's routed RedisSeenSet (dedup/redis_seen_set.h; named after the cluster, one shard per
// partition, a URL told new appended to its partition's inbox in the same step, so it needs no
// claim log).
//
// The node id is settled here: the one state.db recorded, else the one asked for, else a
// generated one (the host name and 6 random hex digits). `join` is called with it — for a new
// state before the directory is made (BeforeOpen), so a cluster that refuses the node leaves no
// trace — and the cluster's identity is recorded or checked (recorded_seen_set.h). --resume with
// another cluster, with none, with another node id, or of a cluster deleted and made again
// since, is FailedPrecondition naming the flags that work.
//
// Thread-safety: as SeenSetSource; node_id() and routed() once Open returned.
#ifndef URLSIEVE_CRAWLER_CLUSTER_CLUSTER_SEEN_SET_SOURCE_H_
#define URLSIEVE_CRAWLER_CLUSTER_CLUSTER_SEEN_SET_SOURCE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "crawler/state/seen_set_source.h"
#include "dedup/redis_seen_set.h"

namespace urlsieve {

struct RecordedSeenSet;

class ClusterSeenSetSource final : public SeenSetSource {
 public:
  struct Joined {
    std::string identity;  // the cluster's
    uint32_t partitions = 0;
  };
  // Joins the cluster as the given node id, or says why not (then nothing was written).
  using Join = std::function<Result<Joined>(const std::string& node_id)>;

  // `options`: the routed set's (CrawlRedisSeenSetOptions, shared_seen_set_source.h) with the
  // inbox stream; `node_id`: the id asked for ("" = recorded or generated).
  ClusterSeenSetSource(RedisSeenSetOptions options, std::string node_id, Join join);
  ~ClusterSeenSetSource() override;

  Status BeforeOpen(bool state_exists) override;
  Result<OpenedSeenSet> Open(StateDir& dir, std::vector<SeenNotice>* notices) override;

  // After Open: the node's id, and the routed set (owned by the CrawlState, which outlives the
  // deployment's use of it).
  const std::string& node_id() const { return node_id_; }
  RedisSeenSet* routed() const { return routed_; }

 private:
  // The id asked for, else a new one (the host name and 6 random hex digits).
  std::string AskedOrGenerated() const;
  // The rows state.db holds against this node's cluster and id; settles node_id_.
  Status CheckRecorded(const StateDir& dir, const RecordedSeenSet& recorded);

  RedisSeenSetOptions options_;
  const std::string asked_node_id_;
  const Join join_;
  const std::string server_;
  std::string node_id_;
  std::optional<Joined> joined_;
  RedisSeenSet* routed_ = nullptr;
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CLUSTER_CLUSTER_SEEN_SET_SOURCE_H_
