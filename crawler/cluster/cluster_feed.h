// ClusterFeed: a cluster node's inboxes on one side, its local frontier on the other
// (docs/features/cluster.md, "The crawl cluster"). Three jobs, each with its own lock-step:
//
//   Feeding. A feeder thread reads entries from the partitions this node owns
//   (ClusterCoordinator::Poll) whenever fewer than low_water URLs read from them are outstanding
//   here, decodes each claim record (claim_record.h) and pushes the URL into the local frontier
//   with its depth and parent (a sitemap record as a sitemap, with its nesting level), remembering
//   url -> its inbox entries. An entry a re-crawl round
//   queued ("R <url>\n<fetch record>", ClusterCoordinator "Fetch records and re-crawl") gives
//   the URL's record to the crawl's FetchRecordStore (Hold), so the fetch asks conditionally,
//   with the validators another node may have stored. Politeness, robots.txt and
//   budgets then work as in a standalone crawl. Before it pushes what it polled it reads the
//   cluster's seeds again (ClusterSeeds), so the scope of the pages it fetches knows their seeds,
//   whichever node was given them.
//
//   Admission. Before a lease is fetched, Admit() asks whether this node may still send requests
//   to its partition's hosts (MayFetch(entry): the lease held and valid, and the entry read under
//   the current tenure); if not the lease is dropped here (Frontier::Abandon) and its entries
//   forgotten (ClusterCoordinator::Forget): the partition's next owner (or this node, once it
//   holds the partition again) fetches the URL.
//
//   Acknowledgement (with the checkpoint, as a consumer commits its offsets). An entry is
//   acknowledged only once its page is recorded (or its URL's rejection is in rejected.jsonl)
//   *and* covered by a checkpoint, because --resume cuts the outputs back to the last checkpoint:
//   an acknowledged entry is never handed out again, so its record must survive a kill -9.
//   Recorded() queues the URL's entries (and tells the coordinator, so that they no longer count
//   against its read bounds); the crawl's checkpoint takes what was queued before it began
//   (Checkpointing) and, once it committed (Committed), a sender thread sends one Ack for them. The
//   page's fetch record goes with the first of its entries, written by the same Ack. Fetchers do
//   not wait: after a kill -9 a node fetches again at most what it recorded since its last
//   checkpoint, as a standalone crawl does. When nothing is left to fetch here the feeder
//   checkpoints at once rather than at the next interval (the end of the crawl and a partition's
//   hand-over wait for the acknowledgements). With checkpoint_each_page (checkpoint_interval 0)
//   a fetcher checkpoints after its page and waits for the acknowledgement (AwaitDurable).

// The end: when nothing is outstanding here and the local frontier is idle, the feeder asks
// ClusterCoordinator::Finished() every finished_interval; once it is true, WaitForWork() returns
// false to every fetcher. A coordinator error() fails the crawl.
//
// Thread-safety: every method may be called from any thread (Checkpointing and Committed from
// the checkpoint, with the crawl's gate held exclusively); one mutex guards the outstanding map,
// the acknowledgement queues and the flags; no Redis call or checkpoint is made holding it.
#ifndef URLSIEVE_CRAWLER_CLUSTER_CLUSTER_FEED_H_
#define URLSIEVE_CRAWLER_CLUSTER_CLUSTER_FEED_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "crawler/cluster/cluster_coordinator.h"

namespace urlsieve {

class ClusterSeeds;
class ClusterUrlRouter;
class FetchRecordStore;
class Frontier;
class Logger;
class Scope;
class SeenRetry;
class UrlCanonicalizer;
struct FetchRecord;
struct Lease;

struct ClusterFeedOptions {
  size_t low_water = 256;    // poll when fewer URLs read from the inboxes are outstanding here
  size_t poll_batch = 4096;  // entries asked for per Poll (the coordinator shares them out)
  // Between polls that returned nothing. A Poll with no partition due asks Redis nothing (the
  // coordinator paces each partition), so this is short.
  std::chrono::milliseconds idle_poll{5};
  std::chrono::milliseconds finished_interval{250};
  // checkpoint_interval 0: each page is checkpointed and acknowledged before its fetcher goes on.
  bool checkpoint_each_page = false;
};

class ClusterFeed {
 public:
  struct Parts {
    ClusterCoordinator* coordinator;
    Frontier* frontier;
    const UrlCanonicalizer* fetch_form;
    Scope* scope;
    const ClusterUrlRouter* router;
    // The cluster's seeds, read again before polled entries are pushed (null: scope "any").
    ClusterSeeds* seeds;
    FetchRecordStore* records;  // the crawl's: re-fetches' records are held there
    Logger* log;
    // Makes the recorded pages and rejections durable (the crawl's checkpoint).
    std::function<Status()> checkpoint;
    // Fails the crawl (a coordinator error, a checkpoint that failed).
    std::function<void(const Status&)> fail;
  };
  ClusterFeed(Parts parts, ClusterFeedOptions options);
  // Stops both threads (Close() first, to acknowledge what was recorded).
  ~ClusterFeed();
  ClusterFeed(const ClusterFeed&) = delete;
  ClusterFeed& operator=(const ClusterFeed&) = delete;

  // Starts the feeder and the sender.
  void Start();

  // Fetchers. generation() changes with every push from the inboxes; WaitForWork(g) blocks until
  // it differs from g (true), or until the crawl is over or stopping (false: the fetcher ends).
  uint64_t generation() const;
  bool WaitForWork(uint64_t generation);
  // Whether the lease may be fetched; false: it was dropped (see "Admission").
  bool Admit(const Lease& lease);
  // The page of `url` is recorded, or its rejection: its entries are to be acknowledged, with
  // `record` (null: the stored record stays, no longer queued). Returns a ticket for
  // AwaitDurable (0: the URL was not read from an inbox).
  uint64_t Recorded(std::string_view url, const FetchRecord* record);
  // A sitemap's lease is done (read, or given up): its entries are to be acknowledged.
  void SitemapDone(std::string_view url);
  // With checkpoint_each_page: checkpoints and blocks until the entries of `ticket` are
  // acknowledged (or the sender stopped). Otherwise returns at once.
  void AwaitDurable(uint64_t ticket);
  // The crawl's checkpoint: Checkpointing() in its transaction, before the outputs are synced
  // (what was recorded until now is in them); Committed() once it committed.
  void Checkpointing();
  void Committed();

  // The end of the feeding: no more polls; WaitForWork returns false. For RequestStop.
  void Stop();
  // Whether the whole cluster's crawl is over (Finished() said so).
  bool finished() const;
  // After the last fetcher ended: stops the feeder, runs one last checkpoint, sends the
  // acknowledgements it allows and stops the sender. Returns that checkpoint's status.
  Status Close();

  // URLs read from the inboxes and not yet acknowledged or forgotten.
  uint64_t outstanding() const;

 private:
  struct Outstanding {
    uint32_t partition = 0;
    std::vector<InboxEntry> entries;
  };
  enum class Acks { kNone, kToCheckpoint, kToSend };
  void FeederLoop();
  void SenderLoop();  // acknowledges what the checkpoints covered, in order
  void StopSender();  // once everything committed is sent
  // Pushes what Poll returned; false when nothing was read.
  void Push(std::vector<InboxEntry> entries);
  // Nothing to fetch here: nothing outstanding, the local frontier empty.
  bool LocalIdle();
  // What the recorded entries still wait for.
  Acks PendingAcks();
  // Queues the entries outstanding under `key` for acknowledgement (with `record`, the first, when
  // `page`); returns the ticket (0: none outstanding).
  uint64_t Release(const std::string& key, std::string record, bool page);
  Status AckBatch(const std::vector<InboxEntry>& batch);

  const Parts parts_;
  const ClusterFeedOptions options_;
  std::unique_ptr<SeenRetry> ack_retry_;   // the Acks' retries while Redis does not answer
  std::unique_ptr<SeenRetry> seed_retry_;  // the feeder's, for the seeds

  mutable std::mutex mu_;
  std::condition_variable work_cv_;    // fetchers waiting for work
  std::condition_variable feeder_cv_;  // the feeder waiting for room or a stop
  std::condition_variable acked_cv_;   // fetchers waiting for their acknowledgement
  std::condition_variable sender_cv_;  // the sender waiting for a committed batch
  std::unordered_map<std::string, Outstanding> outstanding_;
  uint64_t outstanding_entries_ = 0;
  // Acknowledgement batches (upto: the last ticket they cover).
  struct SendBatch {
    std::vector<InboxEntry> entries;
    uint64_t upto = 0;
  };
  std::vector<InboxEntry> to_ack_;  // recorded since the last checkpoint began
  SendBatch checkpointing_;         // taken by the checkpoint under way (or one that failed)
  std::deque<SendBatch> to_send_;   // committed, not yet acknowledged, oldest first
  uint64_t recorded_ticket_ = 0;    // the last ticket Recorded() gave
  uint64_t acked_ticket_ = 0;       // every ticket up to this one is acknowledged
  uint64_t generation_ = 0;
  bool stopped_ = false;         // no more feeding (Stop, or the end)
  bool finished_ = false;        // Finished() said so
  bool sender_closing_ = false;  // the sender ends once to_send_ is empty

  std::thread feeder_;
  std::thread sender_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CLUSTER_CLUSTER_FEED_H_
