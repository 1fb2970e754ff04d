// ClusterCoordinator: one node's membership in a crawl cluster (docs/features/cluster.md, "The
// crawl cluster"): which partitions of the URL space it owns, the inboxes it reads, the
// acknowledgements it sends, and whether the whole crawl is over. The crawl itself (fetch, record,
// the local frontier) is the Crawler's; the seen test-and-set that fills the inboxes is the routed
// RedisSeenSet's (dedup/redis_seen_set.h, RedisSeenSetOptions::routed).
//
// Partitions. A URL belongs to partition p = ClusterPartitionOf(its politeness key, P); P is fixed
// when the cluster is created (1024 by default). Partition p's keys share the hash tag of the
// routed seen set's shard p, "{NAME:p}" (RedisShardKeyPrefix(NAME, p)); the cluster's own keys
// share "{NAME}" (crawler/cluster/cluster_keys.h):
//   urlsieve:{NAME:p}:inbox   stream of the URLs new to the cluster whose host is in p (appended by
//                             the seen set's Function, consumer group kClusterInboxGroup)
//   urlsieve:{NAME:p}:lease   string with a TTL: "ID@TOKEN" of the owner (TOKEN: the instance,
//                             so that a second process under the same id never renews the
//                             first one's lease), or "released" during the hand-over cool-down
//   urlsieve:{NAME}:cluster   hash: format, version, identity, partitions, settings (JSON), seeded
//   urlsieve:{NAME}:nodes     sorted set: node id -> heartbeat expiry (ms, Redis TIME)
//   urlsieve:{NAME}:node:ID   hash: the node's token, host, pid, state, published counters (pages,
//                             errors, links_new), beat_ms, for `urlsieve cluster status`
// Every step that reads and writes is one call of the Function library "urlsieve_cluster_v2"
// (crawler/cluster/cluster_function.h), loaded at Join (FUNCTION LOAD REPLACE, on every master) and
// again when a server answers "Function not found". Expiries and ages are Redis TIME of the server
// holding the key: no two machines' clocks are ever compared.
//
// Ownership. A background thread beats every min(lease_ttl / 5, 500 ms) (one call: the node's
// expiry = now + lease_ttl, its counters, and the list of nodes back) and renews every lease it
// holds every lease_ttl / 5. Partition p is *wanted* by the live node (expiry > now) with the
// highest rendezvous score XXH3(node id, seed p) (crawler/cluster/rendezvous.h), so a join or a
// leave moves only that node's share. While a wanted partition is not held the thread runs every
// 100 ms: a wanted partition is acquired as soon as its lease key is absent (a "released" key is
// tried again when its cool-down ends). A held partition that another node now wants is
// *drained*: Poll() stops returning its entries and, once every entry read from it is
// acknowledged or forgotten, its lease is released, leaving "released" with a TTL of the
// politeness delay (handover_delay), so the next owner's first request to one of its hosts comes
// at least that long after the last one of the previous owner. A node's lease of p is *valid*
// (MayFetch) until the time it sent its last successful acquisition or renewal + lease_ttl -
// handover_delay - lease_ttl / 10 (the margin: clock rates, and the time between MayFetch and the
// request), so a node that cannot renew (Redis down, a long pause) stops fetching p's hosts
// handover_delay before anyone else can acquire it. A renewal that finds the lease not its own
// (taken, or lapsed: someone may have held it meanwhile) *loses* p: p's outstanding entries are
// dropped here, and a new *tenure* (InboxEntry::tenure) begins at the next acquisition. Entries
// of an old tenure are to be forgotten, not fetched (MayFetch(entry) is false for them).
//
// Inboxes. Poll() reads, from the partitions held, valid and not draining, entries up to a bound
// of entries read and not yet recorded per partition (64) and in all (4096): first, after each
// acquisition, the partition's pending entries of any consumer (XAUTOCLAIM from 0 with min-idle
// 0: a dead or departed owner's unacknowledged entries, or this node's own from before a
// restart), skipping entries already outstanding here, when an XLEN says the inbox has any; then
// new ones (XREADGROUP ">"). A read is one Function call per partition that first checks the
// lease (a node that lost it reads nothing). A partition is *hot* while its reads bring entries,
// a claim is under way, or an append to it became known; a hot partition is read at a Poll while
// it has fewer than 48 of its 64 in hand (so a read brings a batch), before those with only a
// claim to make (up to 64 reads per Poll, in rotation). Appends become known without asking
// Redis per partition: this node's own (Nudge: the routed seen set said so), and the other
// nodes', which each publishes with its heartbeat as a numbered list of the partitions it did
// not hold whose inboxes it appended to since its previous list ("*" for more than 2048). A list
// skipped (a number that jumped: a heartbeat reply lost, a node first seen with lists behind it)
// makes a *sweep*: every held inbox probed once with XLEN (one plain command, in one pipeline
// with the reads, at most 256 per Poll); so does a timer every 60 s, the safety net for a list
// that named a partition's previous owner during a hand-over. An inbox longer than what this
// node holds of it becomes hot. A probe sent while an Ack is under way may miss an entry: the
// next sweep (or a list) finds it, nothing is lost.
// Ack() is XACK + XDEL in one call per partition, so the inbox holds only what is pending: Redis
// memory is bounded by the work not yet done. It is not lease-checked: a recorded page's entry
// is done whoever holds the partition now. An entry acknowledged is never handed out again; one
// forgotten (Forget: the node dropped it unfetched) is claimed again by this node while it holds
// the partition, else by the next owner. A read whose reply was lost (a fault) claims again too,
// so an entry delivered to this node's pending list is never stranded there.
//
// The end. The crawl is over when the cluster was seeded (MarkSeeded) and every inbox is empty
// (XLEN counts pending, unacknowledged entries too, because Ack deletes) on two scans of all
// partitions with no entry added in between (each partition's entries-added counter unchanged):
// an entry in flight anywhere is still in its inbox, and the links of a page are appended before
// its entry is acknowledged, so an empty inbox cannot hide work still to come. A cheap scan
// (XLEN of every inbox, one pipeline) comes first and answers "not over" while the crawl runs;
// with entries outstanding here it is not over and Redis is not asked. Nor is a re-crawl round
// over before every partition's records were scanned for it (below).
//
// Fetch records and re-crawl (docs/features/cluster.md, "Re-crawl"). Ack() also writes the fetch
// record of each recorded page into its partition's records hash, in the same call, so a record
// is in Redis exactly when its page's entry is acknowledged, and travels with the partition.
// BeginRecrawl starts a round (the cluster's recrawl_round + 1); each node learns it with its
// heartbeat and, for every partition it holds, scans the records (HSCAN steps in a Function, from
// the heartbeat thread), appending each due record to the inbox, marked queued so that no scan
// queues it twice. A partition handed over mid-scan is scanned by its next owner (the queued
// marks make a second scan harmless).
//
// Faults. A Redis that does not answer makes calls return kUnavailable (callers retry; the
// heartbeat retries by itself, beating first after a fault, and leases lapse, see "valid"
// above). A cluster meta hash missing or of another identity (a restart without persistence, a
// FLUSHALL) is the fatal error() "coordination state lost", naming the cluster and the server;
// so is another instance having taken this node's id after its heartbeat expired. Then every
// partition is dropped, MayFetch is false and Poll / Finished return the error: never a silent
// re-crawl or a silent stop.
//
// Thread-safety: every method may be called from any thread; one mutex guards the partition
// table and the outstanding sets, Redis calls are made without it (a pool of clients, one per
// call; a partition being read or released is marked busy).
#ifndef URLSIEVE_CRAWLER_CLUSTER_CLUSTER_COORDINATOR_H_
#define URLSIEVE_CRAWLER_CLUSTER_CLUSTER_COORDINATOR_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "redis/redis_address.h"
#include "redis/redis_connection.h"

namespace urlsieve {

inline constexpr uint32_t kDefaultClusterPartitions = 1024;
inline constexpr uint32_t kMaxClusterPartitions = 65536;

// The partition of a politeness key (frontier/politeness_key.h): XXH3-64 of the key, reduced to
// [0, partitions) by multiply-high. Every node must compute it alike: it is part of the format.
uint32_t ClusterPartitionOf(std::string_view politeness_key, uint32_t partitions);

struct ClusterOptions {
  RedisAddress address;  // --cluster
  std::string name;      // --cluster-name: 1-64 characters of [A-Za-z0-9_.-]
  // This node (1-64 characters of [A-Za-z0-9_.-]); the crawl keeps it in its state so that
  // --resume comes back as the same node. A live node with the same id is an error at Join,
  // unless its record names a process of this host that no longer runs (a --resume after a
  // kill -9): then this one takes over (a notice says so) and the old leases lapse.
  std::string node_id;
  uint32_t partitions = kDefaultClusterPartitions;  // for a new cluster; must match an existing one
  std::chrono::milliseconds lease_ttl{10000};
  // The politeness delay (the crawl's delay_ms): the cool-down a released partition keeps before
  // another node may take it. Must be below lease_ttl / 2.
  std::chrono::milliseconds handover_delay{1000};
  // The options every node must share, as a JSON object (canonicalization, politeness key,
  // scope, seen-set parameters...: what makes the nodes' keys and partitions agree). The first
  // node stores it; a node whose settings differ is refused with the keys that differ.
  std::string settings;
  RedisTimeouts timeouts;
  // Bounds of the entries read and neither recorded, acknowledged nor forgotten (Poll reads no
  // more).
  size_t max_outstanding_per_partition = 64;
  size_t max_outstanding = 4096;
};

// One URL record read from an inbox.
struct InboxEntry {
  uint32_t partition = 0;
  std::string id;       // the stream entry id
  std::string payload;  // what the seen set appended (the crawler's claim record)
  // Which of this node's tenures of the partition the entry was read under (it counts
  // acquisitions and losses): after a loss and a re-acquisition the same entry may be handed out
  // again under a new tenure, and Forget / MayFetch(entry) of the old copy do not touch the new.
  uint64_t tenure = 0;
  // For Ack, set once the entry's page is recorded: its URL (fetch form; "" for none) and the
  // text of its fetch record (crawler/state/fetch_record_text.h; "" keeps the stored record,
  // no longer queued).
  std::string record_url;
  std::string record;
};

// What a node publishes with its heartbeat, for status and the progress line.
struct NodeCounters {
  uint64_t pages = 0;
  uint64_t errors = 0;
  uint64_t links_new = 0;
};

struct ClusterNodeStatus {
  std::string id;
  std::string host;
  int64_t pid = 0;
  std::string state;  // "running", "stopped", "finished"
  bool alive = false;
  int64_t heartbeat_age_ms = 0;
  uint32_t partitions = 0;  // leases held
  NodeCounters counters;
};

struct ClusterStatus {
  std::string name;
  std::string server;  // the address, without its password
  uint32_t partitions = 0;
  bool seeded = false;
  std::vector<ClusterNodeStatus> nodes;
  uint32_t unowned_partitions = 0;  // no live lease
  uint64_t pending = 0;             // entries in all inboxes (XLEN), in flight included
  uint64_t in_flight = 0;           // read by a node and not acknowledged (XPENDING)
  uint64_t pages = 0;               // sum of the nodes' published counters
  uint64_t errors = 0;
  uint64_t fetch_records = 0;    // the partitions' fetch records (HLEN)
  uint64_t recrawl_round = 0;    // the latest re-crawl round (0: none)
  uint32_t recrawl_scanned = 0;  // partitions whose records were scanned for it
  std::string ToJson() const;    // the --json form of `urlsieve cluster status`
  std::string ToText() const;    // the human form
};

// Reads a cluster's state without joining it: NotFound when there is no such cluster.
Result<ClusterStatus> ReadClusterStatus(const RedisAddress& address, std::string_view name,
                                        const RedisTimeouts& timeouts = {});

class ClusterCoordinator {
 public:
  // Connects, checks or creates the cluster's meta hash (partitions and settings must match:
  // FailedPrecondition naming what differs), registers the node and starts the heartbeat.
  // Errors name the server: kUnavailable (no server), kFailedPrecondition (not Redis, wrong
  // password, Redis without Functions, settings that differ, a live node with the same id).
  // Nothing is written before the server has answered and the settings were checked.
  static Result<std::unique_ptr<ClusterCoordinator>> Join(const ClusterOptions& options,
                                                          std::vector<std::string>* notices);
  // Stops the heartbeat; leases still held lapse after lease_ttl (Leave hands them back first).
  ~ClusterCoordinator();
  ClusterCoordinator(const ClusterCoordinator&) = delete;
  ClusterCoordinator& operator=(const ClusterCoordinator&) = delete;

  // The cluster's identity (32 hex), stored by the crawl's state so that --resume joins the same
  // cluster, not one created since under the same name.
  const std::string& identity() const;
  uint32_t partitions() const;
  const std::string& node_id() const;
  // "the crawl cluster 'NAME' at redis://host:port/db", for messages.
  const std::string& what() const;

  // Up to `max` entries to work on (see "Inboxes"); empty when nothing is available now. One
  // pipelined round: reads of the hot partitions (at most 64) and the XLEN probes of a sweep or
  // of partitions just acquired; nothing is sent when none is due (the caller polls).
  // kUnavailable when Redis does not answer: retry.
  Result<std::vector<InboxEntry>> Poll(size_t max);
  // This node appended entries to these partitions' inboxes (the routed seen set said their URLs
  // were new): those it holds are read at the next Poll; the others are named in the list its
  // next heartbeat publishes, for their owners.
  void Nudge(std::span<const uint32_t> partitions);
  // Whether this node has nothing to do (nothing in hand, its frontier empty, nothing to
  // acknowledge): published with the heartbeat (see "Inboxes" and "The end").
  void SetIdle(bool idle);
  // These entries' pages are recorded (or their URLs rejected), to be acknowledged once a
  // checkpoint holds them: they no longer count against the read bounds (max_outstanding...), but
  // stay outstanding (a claim skips them, a draining partition waits for them) until Ack, even
  // those read under an earlier tenure of their partition (fetched while its lease lapsed).
  void Recorded(std::span<const InboxEntry> entries);
  // Acknowledges entries whose pages are recorded or whose URLs were rejected (XACK + XDEL).
  Status Ack(std::span<const InboxEntry> entries);
  // Drops outstanding entries without acknowledging them (a lease lost or lapsing: the URL is
  // left to the partition's owner).
  void Forget(std::span<const InboxEntry> entries);
  // Whether this node may send a request to a host of partition p now (held and valid).
  bool MayFetch(uint32_t partition) const;
  // The same for an entry: also false when it was read under an earlier tenure of its partition
  // (lost since, and perhaps handed out again): such an entry is to be forgotten, not fetched.
  bool MayFetch(const InboxEntry& entry) const;

  // Records that the seeds are in the inboxes (the crawl cannot end before).
  Status MarkSeeded();
  // Starts a re-crawl round (see "Fetch records and re-crawl"); records without an interval are
  // due after `revisit_after` (0: every record).
  Status BeginRecrawl(std::chrono::seconds revisit_after);
  // The longest delay this node keeps for each partition's hosts, where longer than the configured
  // one (a robots.txt Crawl-delay it learned): a partition is released with it as its cool-down,
  // so a learned Crawl-delay travels with the partition. Called from the heartbeat thread and
  // Leave, without the coordinator's lock.
  using LearnedDelays = std::function<std::map<uint32_t, std::chrono::milliseconds>()>;
  void SetLearnedDelays(LearnedDelays learned);
  // The cluster's latest re-crawl round as this node last heard it (0: none).
  uint64_t recrawl_round() const;
  // Whether the whole crawl is over (see "The end"). Up to three pipelined scans of every
  // partition (one XLEN each while the crawl runs): call it when this node is idle, not in a hot
  // loop.
  Result<bool> Finished();

  // Published with the next heartbeat.
  void Publish(const NodeCounters& counters);
  // The cluster's totals as of the last heartbeat (nodes' counters summed; the inbox lengths,
  // pending and in_flight, are probed at most every max(lease_ttl / 5, 1 s) and only while
  // Totals is being called; unowned_partitions is left 0: ReadClusterStatus reads the leases).
  ClusterStatus Totals() const;
  // The heartbeat's fatal error ("coordination state lost", the node's id taken over), or OK.
  Status error() const;

  // Hands every partition back: stops Poll, releases each lease (with the hand-over cool-down)
  // and marks the node "stopped" (or "finished" when `finished`). Entries outstanding and not
  // acknowledged stay pending in their inboxes for the next owner. Call after the last fetch has
  // been recorded and acknowledged.
  Status Leave(bool finished);

 private:
  class Impl;
  explicit ClusterCoordinator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CLUSTER_CLUSTER_COORDINATOR_H_
