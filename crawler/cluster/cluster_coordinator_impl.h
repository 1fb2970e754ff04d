// ClusterCoordinator::Impl: the inside of one node's membership in a crawl cluster
// (crawler/cluster/cluster_coordinator.h has the protocol; docs/features/cluster.md, "The crawl
// cluster"). Internal: included by the coordinator's own files only, one concern each:
//   cluster_coordinator.cc     the public class, the Impl's construction, the heartbeat thread
//                              (Run / Tick: when to beat, renew, release, acquire and probe)
//   cluster_membership.cc      Join (meta hash, settings, registration, take-over) and Beat (the
//                              live nodes, hence the partitions this node wants)
//   cluster_leases.cc          acquisition, renewal, hand-over and loss of leases; MayFetch
//                              (fencing); Leave
//   cluster_inbox_reader.cc    Poll (reads and probes of the inboxes), Nudge, Ack, Forget
//   cluster_termination.cc     MarkSeeded and Finished (is the whole crawl over?)
//   cluster_recrawl.cc         re-crawl rounds: BeginRecrawl and the scans of the records
//   cluster_totals.cc          the counters this node publishes and the cluster's totals
// The settings comparison is crawler/cluster/cluster_settings.h.
//
// Thread-safety: as ClusterCoordinator's. One mutex (mu_) guards the partition table, the
// outstanding sets, the totals and the thread's schedule; members marked "under mu_" expect it
// held. Redis calls are made without it (a pool of clients, one per call; a partition being read
// or released is marked busy).
#ifndef URLSIEVE_CRAWLER_CLUSTER_CLUSTER_COORDINATOR_IMPL_H_
#define URLSIEVE_CRAWLER_CLUSTER_CLUSTER_COORDINATOR_IMPL_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "crawler/cluster/cluster_coordinator.h"
#include "crawler/cluster/cluster_keys.h"
#include "crawler/cluster/cluster_redis.h"
#include "redis/redis_client.h"
#include "redis/redis_reply.h"

namespace urlsieve {

namespace cluster_internal {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;

inline constexpr milliseconds kFastTick{100};  // while a wanted partition is not held, or draining
inline constexpr milliseconds kMaxBeatInterval{500};    // membership is read at least this often
inline constexpr milliseconds kMinProbeInterval{1000};  // inbox lengths for Totals, at most this
// Every held inbox is probed at least this often, whatever the heartbeats say.
inline constexpr std::chrono::seconds kSafetySweep{60};
// A list of partitions appended to longer than this is published as "*" (a sweep).
inline constexpr size_t kMaxAppendedList = 2048;
inline constexpr size_t kMaxPartitionsPerPoll = 64;  // reads (Function calls) per Poll
inline constexpr size_t kMaxProbesPerPoll = 256;     // XLEN probes per Poll
inline constexpr size_t kAckChunk = 512;

// `bytes` random bytes in hex (an instance's token, a new cluster's identity).
std::string RandomHex(size_t bytes);

}  // namespace cluster_internal

class ClusterCoordinator::Impl {
 public:
  using SteadyClock = cluster_internal::SteadyClock;
  using milliseconds = cluster_internal::milliseconds;

  explicit Impl(const ClusterOptions& options);
  ~Impl() { StopThread(); }

  // cluster_membership.cc
  Status Join(std::vector<std::string>* notices);

  const std::string& identity() const { return identity_; }
  const std::string& what() const { return what_; }
  uint32_t partitions() const { return options_.partitions; }
  const std::string& node_id() const { return options_.node_id; }

  // cluster_inbox_reader.cc
  Result<std::vector<InboxEntry>> Poll(size_t max);
  void Nudge(std::span<const uint32_t> partitions);
  void SetIdle(bool idle) {
    std::lock_guard<std::mutex> lock(mu_);
    idle_ = idle;
  }
  void Recorded(std::span<const InboxEntry> entries);
  Status Ack(std::span<const InboxEntry> entries);
  void Forget(std::span<const InboxEntry> entries);
  // cluster_leases.cc
  bool MayFetch(uint32_t partition, const uint64_t* tenure) const;
  Status Leave(bool finished);
  // cluster_termination.cc
  Status MarkSeeded();
  Result<bool> Finished();
  // cluster_recrawl.cc
  Status BeginRecrawl(std::chrono::seconds revisit_after);
  void SetLearnedDelays(ClusterCoordinator::LearnedDelays learned) {
    std::lock_guard<std::mutex> lock(mu_);
    learned_delays_ = std::move(learned);
  }
  uint64_t recrawl_round() const {
    std::lock_guard<std::mutex> lock(mu_);
    return recrawl_round_;
  }
  // cluster_totals.cc
  void Publish(const NodeCounters& counters);
  ClusterStatus Totals() const;

  Status error() const {
    std::lock_guard<std::mutex> lock(mu_);
    return error_;
  }

 private:
  struct Partition {
    std::string lease_key;
    std::string inbox_key;
    std::string records_key;
    std::string recrawl_key;
    uint64_t scanned_round = 0;  // the last re-crawl round whose scan this node saw through
    std::string scan_cursor;     // the HSCAN cursor of the round's scan ("" from the start)
    bool wanted = false;
    bool held = false;
    std::string stale_holder;  // the lease value found, of no live node's tenure: taken over
    bool draining = false;     // held, wanted by another node: released once nothing is outstanding
    bool busy = false;         // a read or a release of it is under way
    uint64_t epoch = 0;        // counts acquisitions and losses: a reply of an older epoch is stale
    SteadyClock::time_point valid_until{};
    SteadyClock::time_point next_acquire{};
    std::string claim_cursor;  // XAUTOCLAIM resumes here; "" when the claim is through
    bool claim_check = false;  // acquired: probe first, claim from "0-0" if the inbox has entries
    uint64_t swept = 0;        // the last sweep that probed it
    bool reclaim = false;      // an entry was forgotten: claim the pending entries again
    bool hot = false;     // read at every Poll: its last read brought entries, or it was nudged
    uint64_t nudges = 0;  // counts Nudge calls: a read or probe sent before one cannot cool it
    // Entry id -> whether it is recorded (waiting for its checkpoint and Ack).
    std::unordered_map<std::string, bool> outstanding;
    size_t recorded = 0;  // of outstanding
    // Entries read and not yet recorded: what the read bounds count.
    size_t unrecorded() const { return outstanding.size() - recorded; }
  };

  // One read or probe of a Poll, as sent.
  struct PollAsk {
    uint32_t partition;
    uint64_t epoch;
    uint64_t nudges;  // the partition's nudge count when asked
    bool probe;       // XLEN, not a read
    size_t known;     // probe: entries outstanding here when it was sent
    std::string cursor;
  };

  // A node's tenure (it counts the node's instances and the lapses of their heartbeats) and
  // whether it was alive, as a heartbeat saw them.
  struct NodeTenure {
    uint64_t tenure = 0;
    bool alive = false;
  };
  // What a heartbeat's reply says of the cluster (cluster_membership.cc).
  struct Heartbeat {
    bool seeded = false;
    uint64_t recrawl_round = 0;  // the cluster's latest re-crawl round (0: none)
    int64_t recrawl_revisit_s = 0;
    std::vector<ClusterNodeStatus> nodes;
    std::vector<std::string> live;                        // the live nodes' ids, sorted
    std::unordered_map<std::string, NodeTenure> tenures;  // every node's
    uint64_t tenure = 0;                                  // this node's
    // The other nodes' last lists of partitions appended to: their number and "p,p,..." ("*":
    // too many).
    struct AppendedList {
      uint64_t number = 0;
      std::string targets;
    };
    std::map<std::string, AppendedList> appended;
    bool all_idle = true;  // every live node is idle (this one as it last published)
    uint64_t pages = 0;
    uint64_t errors = 0;
  };

  // The heartbeat thread (cluster_coordinator.cc).
  void StartThread() {
    thread_ = std::thread([this] { Run(); });
  }
  void StopThread();
  void Run();
  // One round of the heartbeat thread; returns when it wants to run again.
  SteadyClock::time_point Tick(RedisClient& client);
  // Whether a step of the round failed (then the round stops; a lost state is fatal).
  bool Faulted(const Status& status);

  // Membership (cluster_membership.cc).
  Result<std::map<std::string, std::string>> ReadMeta(RedisClient& client);
  // Runs a Function that writes the meta hash and waits for the replicas to have it: its reply,
  // or the error (`doing` names what was being done; a lost state fails the node).
  Result<RedisReply> WriteMeta(RedisCommand command, std::string_view doing);
  RedisCommand RegisterCommand(const std::string& settings_text, const std::string& takeover) const;
  // The register Function's "LIVE ..." answer: another live instance holds this node id. True
  // (and `takeover` set) when it is a previous instance of this host that no longer runs.
  bool TakeOverDeadInstance(const std::string& live_reply, std::string* takeover,
                            std::vector<std::string>* notices) const;
  Status LiveNodeError(const std::string& live_reply) const;
  Status Beat(RedisClient& client, milliseconds ttl, const std::string& state);
  // `kept`: nodes counted alive though their expiry passed, if still running (see
  // outage_grace_until_).
  Result<Heartbeat> ParseHeartbeat(const RedisReply& reply,
                                   const std::vector<std::string>& kept) const;
  // Under mu_: what the other nodes' idleness and appended counters say about probing and the
  // end (see "Inboxes", "The end").
  void NoteActivity(const Heartbeat& heartbeat);
  // Under mu_: the partitions this node wants among `live`.
  void AssignPartitions(std::vector<std::string> live);

  // Leases (cluster_leases.cc).
  Status ReleaseDrained(RedisClient& client);
  Status AcquireWanted(RedisClient& client);
  // Release of each partition of `which`, with its cool-down (see LearnedDelays).
  std::vector<RedisCommand> ReleaseCommands(std::span<const uint32_t> which) const;
  // Under mu_: applies `take(i, part, reply)` to every reply that is not an error; returns the
  // first error reply, as "<doing><lease key>".
  template <typename Take>
  Status TakeLeaseReplies(std::span<const uint32_t> which, const std::vector<RedisReply>& replies,
                          std::string_view doing, Take take);
  // Under mu_.
  void TakeAcquireReply(Partition& part, const RedisReply& reply, SteadyClock::time_point sent);
  // Under mu_: whether a lease value found is of a tenure that is over (its node's heartbeat
  // expired in it, or a later tenure of the node began), as of the last heartbeat.
  bool StaleLease(std::string_view value) const;
  void MarkLost(uint32_t p);
  void Fail(Status status);

  // The inbox reader (cluster_inbox_reader.cc). Under mu_ unless said.
  Status PlanPoll(size_t max, std::vector<PollAsk>* asks, std::vector<RedisCommand>* commands);
  // Whether a partition may be read or probed now: held, valid, not draining, with room.
  bool Askable(const Partition& part, SteadyClock::time_point now) const;
  // Whether it is read rather than probed: it has entries, or a claim to make.
  static bool WantsRead(const Partition& part, size_t low_water);
  // A hot partition is read again once it has fewer than this in hand (48 of 64): a read then
  // brings a batch.
  size_t ReadLowWater() const {
    const size_t max = options_.max_outstanding_per_partition;
    return std::max<size_t>(1, max - max / 4);
  }
  std::vector<uint32_t> ChooseReads(size_t budget, SteadyClock::time_point now);
  std::vector<uint32_t> ChooseProbes(SteadyClock::time_point now);
  // Without mu_: one pipeline on a client of the pool.
  Status Send(std::span<const RedisCommand> commands, std::vector<RedisReply>* replies);
  Result<std::vector<InboxEntry>> TakePollReplies(std::span<const PollAsk> asks, Status status,
                                                  std::vector<RedisReply>& replies);
  void TakeReadReply(const PollAsk& ask, RedisReply& reply, std::vector<InboxEntry>* entries);
  void TakeProbeReply(const PollAsk& ask, const RedisReply& reply);
  // A partition with entries: read at every Poll, its idle back-off reset.
  void MarkActive(Partition& part);
  // A partition that had nothing is asked again later, the longer the quieter it has been.
  Result<std::vector<RedisCommand>> AckCommands(std::span<const InboxEntry> entries) const;

  // Termination (cluster_termination.cc): scan `scan` of Finished; `added` holds each
  // partition's entries-added counter as of the previous scan.
  Result<bool> JudgeEndScan(int scan, const std::vector<RedisReply>& replies,
                            std::vector<long long>* added);
  Status MetaLost(const RedisReply& meta) const;

  // Re-crawl (cluster_recrawl.cc): one scan step of each partition held whose scan of the
  // current round is not through.
  Status ScanForRecrawl(RedisClient& client);
  // Under mu_: whether a scan is under way here.
  bool Scanning() const;

  // Totals (cluster_totals.cc).
  Status ProbeTotals(RedisClient& client);
  // Under mu_.
  void RecordHeartbeat(Heartbeat& heartbeat);
  void CountOwnPartitions(std::vector<ClusterNodeStatus>& nodes) const;

  // Errors (cluster_coordinator.cc).
  Status LoadLibrary(RedisClient& client) { return LoadClusterLibrary(client); }
  Status Call(RedisClient& client, std::span<const RedisCommand> commands,
              std::vector<RedisReply>* replies) {
    return RunClusterFunctions(client, commands, replies);
  }
  // The writes `client` sent to the masters of `keys`, on their replicas (WaitForReplicas), for
  // the ones a failover must not lose: the meta hash when created, "seeded", a lease acquired
  // (lost, another node could take the partition while this one still fetches its hosts).
  // docs/features/cluster.md, "Failover".
  static Status WaitForReplicas(RedisClient& client, std::span<const std::string> keys) {
    return client.WaitForReplicas(keys, kReplicaWaitMs, /*lagging=*/nullptr);
  }
  // How long WaitForReplicas waits for a master's replicas: on a LAN they answer in well under a
  // millisecond; one that does not within this is lagging or gone, and the write is left as safe
  // as asynchronous replication makes it.
  static constexpr int kReplicaWaitMs = 250;
  RedisCommand Fcall(const char* function, std::initializer_list<std::string> keys,
                     std::vector<std::string> args) const {
    return ClusterFcall(function, keys, std::move(args));
  }
  std::string Where(std::string_view doing) const;
  Status StateLost(const std::string& detail) const;
  Status ReplyError(const RedisReply& reply, std::string_view doing) const;

  const ClusterOptions options_;
  ClusterClientPool pool_;
  const std::string server_;
  const std::string token_;
  // This node's lease value ("ID@TOKEN#TENURE"), set by each heartbeat that starts a tenure:
  // written under mu_ by the heartbeat thread, read there without it, elsewhere under mu_.
  std::string lease_value_;
  uint64_t tenure_ = 0;  // 0 before the first heartbeat
  // Each node's tenure and liveness as of the last heartbeat. Under mu_.
  std::unordered_map<std::string, NodeTenure> tenures_;
  // Activity (cluster_membership.cc NoteActivity; under mu_): whether this node is idle (SetIdle,
  // published with each heartbeat); the partitions it did not hold whose inboxes it appended to
  // since its last published list (Nudge), and the number of lists it published; the last list
  // number seen of every other node; whether every live node was idle with nothing appended
  // since the previous heartbeat; and the sweep generation (a partition probed in a sweep has
  // swept == sweep_).
  bool idle_ = true;  // until the feed says otherwise (a coordinator without one is never busy)
  std::set<uint32_t> appended_to_;
  uint64_t appended_lists_ = 0;
  std::map<std::string, uint64_t> others_appended_;
  bool cluster_quiet_ = false;
  uint64_t sweep_ = 0;
  SteadyClock::time_point next_safety_sweep_{};
  const std::string meta_key_;
  const std::string nodes_key_;
  const std::string node_key_;
  std::string what_;
  std::string identity_;
  milliseconds beat_interval_{};
  milliseconds probe_interval_{};
  milliseconds valid_for_{};

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool wake_ = false;  // a drained partition can be released now
  bool left_ = false;
  mutable bool totals_asked_ = false;  // inbox lengths are probed only for a caller of Totals
  bool need_beat_ = true;  // after a fault: the next round beats first (a lost state shows there)
  Status error_;
  NodeCounters published_;
  ClusterStatus totals_;
  std::vector<std::string> live_;
  // docs/features/cluster.md, "Failover": whether a heartbeat of this node failed (Redis did not
  // answer), and until when, after an outage, the nodes live before it are not judged dead by an
  // expiry that passed: they could not beat either. Under mu_.
  bool beat_missed_ = false;
  SteadyClock::time_point outage_grace_until_{};
  std::vector<Partition> parts_;
  size_t outstanding_ = 0;  // entries of every partition's outstanding
  size_t recorded_ = 0;     // of those, recorded
  ClusterCoordinator::LearnedDelays learned_delays_;
  uint64_t recrawl_round_ = 0;  // from the heartbeat
  int64_t recrawl_revisit_s_ = 0;
  uint32_t rotate_ = 0;       // where the next probes start
  uint32_t read_rotate_ = 0;  // where the next reads start (when more than a Poll's are hot)
  SteadyClock::time_point next_beat_{};
  SteadyClock::time_point next_probe_{};
  std::thread thread_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CLUSTER_CLUSTER_COORDINATOR_IMPL_H_
