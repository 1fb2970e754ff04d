// CrawlState: the crawl's state directory (OUT/state) and its checkpoints
// (docs/formats/state-directory.md, "State files and the checkpoint protocol"). It owns the
// directory (StateDir: the lock, the identity, state.db, the generation), the seen set kept in it,
// and the checkpoint gate, and runs the checkpoint protocol; the other parts of the crawl keep
// their durable rows in the same database and are given it only inside Restore() and Checkpoint():
//   - the seen set (SeenSet, opened here, with the SeenFilter the crawler asks for URLs);
//   - the frontier's pending set (Frontier::Checkpoint / Restore);
//   - the outputs' sizes and checksums and the crawl's counters (crawl_checkpoint.h);
//   - the fetch record of each URL fetched, for a re-crawl (fetch_record.h).
//
// Checkpoint protocol (invariants 2 and 4). A transaction on state.db is always open. Under the
// gate held exclusively (no fetcher is between a seen-insert and its page's Done()):
// write_parts(db) writes the frontier's delta, the rejections, the output marks and the counters
// into it; the seen set prepares its part (SeenSet::PrepareCheckpoint: the Bloom delta record or
// snapshot, its meta rows); the new generation is written and COMMITted; the seen set finishes
// (SeenSet::CheckpointCommitted: a snapshot's rename); the next transaction is begun. A crash at
// any point returns every part to the last committed generation together.
//
// The gate: a fetcher holds it shared from the moment it inserts a page's links into the seen set
// until the page's Done(), so a checkpoint never records a URL in the seen set that is not yet
// pending (nor a page in the outputs whose links are not).
//
// A shared seen set (docs/features/redis-seen-set.md, "The Redis seen set"). With seen_redis_url
// the seen set is a RedisSeenSet (dedup/redis_seen_set.h) shared with other crawls, while
// everything else (frontier, outputs, counters, checkpoints) stays in this directory. state.db
// records which set the crawl uses (urlsieve_meta: seen_redis_server, seen_redis_name,
// seen_redis_identity, written, and committed, before the first insert): resuming with another set,
// or with none, or a crawl begun with its own set with a shared one, is FailedPrecondition, and so
// is a set that was deleted (and re-created) since. The set's keys outlive a crash of the crawl
// while the frontier returns to its checkpoint, so the crawl inserts with claims (the set's claim
// log is named by this state's identity, SeenSet::InsertHashedIfNewClaiming): Open reads the claims
// made after the last committed generation (uncommitted_claims()), for the crawl to queue again,
// and each checkpoint's CheckpointCommitted trims them. Nothing is written to Redis or to the
// directory before the server has answered (a wrong password, a port that is not Redis, a name
// holding another type are errors that leave no trace).
//
// A crawl cluster (docs/features/cluster.md, "The crawl cluster"). With cluster_url the crawl is
// one node of a cluster: the seen set is the cluster's routed RedisSeenSet (named after the
// cluster, one shard per partition; a URL told new is appended to its partition's inbox in the same
// step, so it needs no claim log), and state.db records the cluster (urlsieve_meta: cluster_server,
// cluster_name, cluster_identity — ClusterCoordinator::identity() — and cluster_node_id). The
// node id is settled here: the one recorded, else the one asked for, else a generated one (the
// host name and 6 random hex digits). join_cluster is called with it — for a new state before
// anything is written, so a cluster that refuses the node leaves no trace — and its identity is
// recorded or checked. --resume with another cluster, with none, with another node id, or of a
// cluster deleted and made again since, is FailedPrecondition naming the command that works.
//
// Thread-safety: Checkpoint() may be called from any thread (it takes the gate exclusively);
// Restore() before any fetcher runs. The seen set and filter are thread-safe (seen_set.h).
#ifndef URLSIEVE_CRAWLER_STATE_CRAWL_STATE_H_
#define URLSIEVE_CRAWLER_STATE_CRAWL_STATE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "dedup/redis_seen_set.h"
#include "dedup/seen_filter.h"
#include "dedup/seen_set.h"
#include "url/url_canonicalizer.h"

namespace urlsieve {

class RedisSeenSet;
class SqliteDb;
class StateDir;
struct RedisSeenSetOptions;

struct CrawlStateOptions {
  std::string dir;         // OUT/state; created if missing
  uint64_t capacity = 0;   // the seen set's, for a new state (an existing one keeps its own)
  double fp_rate = 0;      // ditto
  bool exact = false;      // ditto
  bool deletable = false;  // ditto: a counting Bloom filter (docs/features/forgetting.md,
                           // "Forgetting")
  CanonicalizeOptions canonicalize;  // ditto: the rules the seen set's keys are made with
  bool rebuild_bloom = false;        // rebuild the Bloom filter from the exact store (--rebuild)
  // A seen set shared in Redis instead of the local one (see above): the server
  // (redis://[[user]:password@]host:port[/db]) and the set's name. Both empty: the local set.
  std::string seen_redis_url;
  std::string seen_redis_name;
  // A crawl cluster (see above): the server and the cluster's name (both or neither; they
  // exclude seen_redis_*), this node's id ("" = recorded or generated) and, for a new cluster,
  // its partition count.
  std::string cluster_url;
  std::string cluster_name;
  std::string node_id;
  uint32_t partitions = 0;
  // The stream each partition's new URLs are appended to (the cluster's inboxes: its key names
  // are the cluster's, crawler/cluster/cluster_keys.h).
  RedisNewKeyStream inbox;
  // Joins the cluster as the given node id: the cluster's identity and partition count, or why
  // not (nothing is written then). Required with cluster_url.
  struct ClusterJoined {
    std::string identity;
    uint32_t partitions = 0;
  };
  std::function<Result<ClusterJoined>(const std::string& node_id)> join_cluster;
};

class CrawlState {
 public:
  // Opens or creates the state: the errors of SeenFilter::Open (a state in use by another
  // process, a foreign, mixed-up or damaged state, ...), with every file left as it was; with a
  // shared set, those of RedisSeenSet::Open (kUnavailable: no server; kFailedPrecondition: a wrong
  // password, not Redis, another type under the name), InvalidArgument for a bad address or name,
  // and FailedPrecondition for a set other than the one the state records (see above).
  static Result<std::unique_ptr<CrawlState>> Open(const CrawlStateOptions& options);
  ~CrawlState();
  CrawlState(const CrawlState&) = delete;
  CrawlState& operator=(const CrawlState&) = delete;

  // The parts read what the last checkpoint recorded (before any fetcher runs).
  Status Restore(const std::function<Status(SqliteDb&)>& read_parts);
  // A checkpoint (see above): takes the gate exclusively, runs write_parts(db) in the open
  // transaction, then the seen set's part, and commits a new generation.
  Status Checkpoint(const std::function<Status(SqliteDb&)>& write_parts);

  // Held shared by a fetcher from seen-insert to Done(); exclusively by Checkpoint().
  std::shared_mutex& gate() { return gate_; }

  SeenSet& seen_set() { return *seen_set_; }
  // The URL-level calls over the seen set, with the canonicalizer options the state's keys are
  // made with (the stored ones).
  SeenFilter& seen() { return *seen_; }
  // Stored parameters in effect, a Bloom filter rebuilt, a state upgraded.
  const std::vector<SeenNotice>& notices() const { return notices_; }
  uint64_t generation() const;

  // A shared seen set: "the seen set 'NAME' at redis://host:port/db", for messages; "" when the
  // set is the state's own.
  const std::string& shared_seen_set() const { return shared_seen_set_; }
  // The claims (payloads given to InsertHashedIfNewClaiming) the shared set holds for keys it
  // told this crawl "new" after the last committed checkpoint, read at Open: URLs the crawl must
  // queue again. Empty for the local set.
  const std::vector<std::string>& uncommitted_claims() const { return uncommitted_claims_; }

  // A node of a cluster: its id (recorded in state.db); "" otherwise.
  const std::string& node_id() const { return node_id_; }
  // A node of a cluster: the routed seen set (InsertRouted); null otherwise.
  RedisSeenSet* routed_seen_set() const { return routed_; }

 private:
  CrawlState() = default;
  // The shared set in Redis: what state.db records against what was asked (`existing`: the set
  // as the server holds it now, read-only; null when there is none), then opened with this
  // state's claim log (see above).
  Status CheckSharedSeenSet(const RedisSeenSetOptions& redis_options, const RedisSeenSet* existing);
  Status OpenSharedSeenSet(const RedisSeenSetOptions& redis_options);
  // A node of a cluster: checks the rows state.db holds against `options`, settles the node id
  // (see above) and joins the cluster unless `joined` says it is done already.
  Status CheckCluster(const CrawlStateOptions& options,
                      std::optional<CrawlStateOptions::ClusterJoined>* joined);
  Status OpenRoutedSeenSet(RedisSeenSetOptions redis_options,
                           const CrawlStateOptions::ClusterJoined& joined);

  std::vector<SeenNotice> notices_;
  std::string shared_seen_set_;
  std::vector<std::string> uncommitted_claims_;
  std::string node_id_;
  RedisSeenSet* routed_ = nullptr;  // seen_set_, when it is a cluster's
  // Declared in this order so that the seen set is closed before the database and the lock.
  std::unique_ptr<StateDir> dir_;
  std::unique_ptr<SeenSet> seen_set_;
  std::unique_ptr<SeenFilter> seen_;
  std::shared_mutex gate_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_STATE_CRAWL_STATE_H_
