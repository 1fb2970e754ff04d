// RecordedSeenSet: what a crawl's state.db records of the seen set the crawl uses when that set is
// not its own (docs/formats/state-directory.md, `urlsieve_meta`): a set shared in Redis
// (seen_redis_server, seen_redis_name, seen_redis_identity) or a crawl cluster's routed set
// (cluster_server, cluster_name, cluster_identity, cluster_node_id). The rows are written once,
// each committing on its own before the first insert, and every later open checks them: a crawl
// continues only on the set it began with, and a refusal names the flags that resume it.
//
// Thread-safety: none; used while a CrawlState opens (seen_set_source.h).
#ifndef URLSIEVE_CRAWLER_STATE_RECORDED_SEEN_SET_H_
#define URLSIEVE_CRAWLER_STATE_RECORDED_SEEN_SET_H_

#include <string>

#include "base/status.h"

namespace urlsieve {

class StateDir;

struct RecordedSeenSet {
  enum class Kind {
    kOwn,      // nothing recorded: the set in the state directory
    kShared,   // a seen set shared in Redis (--seen-redis)
    kCluster,  // a crawl cluster's (--cluster)
  };
  Kind kind = Kind::kOwn;
  std::string server;    // "redis://host:port/db" as RedisAddress::ToString writes it
  std::string name;      // the set's, or the cluster's
  std::string identity;  // the set's, or the cluster's ("" when not recorded yet)
  std::string node_id;   // kCluster: this node's ("" when not recorded yet)

  static RecordedSeenSet Read(const StateDir& dir);
  // Writes the rows of `recorded` (kShared or kCluster) that differ from what `dir` holds.
  static Status Write(StateDir& dir, const RecordedSeenSet& recorded);

  // "the seen set 'NAME' at SERVER", "the crawl cluster 'NAME' at SERVER".
  static std::string Describe(Kind kind, const std::string& name, const std::string& server);
  std::string Describe() const { return Describe(kind, name, server); }
  // The flags that resume the crawl on it: "--seen-redis SERVER --name NAME",
  // "--cluster SERVER --cluster-name NAME".
  std::string ResumeFlags() const;
};

// FailedPrecondition when `dir` recorded another kind of seen set than `wanted` (described as
// `wanted_text`, see Describe), or when a crawl that committed a checkpoint with its own set is
// asked to go on with one in Redis; the message names the flags that work. Ok otherwise.
Status CheckRecordedKind(const StateDir& dir, const RecordedSeenSet& recorded,
                         RecordedSeenSet::Kind wanted, const std::string& wanted_text);

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_STATE_RECORDED_SEEN_SET_H_
