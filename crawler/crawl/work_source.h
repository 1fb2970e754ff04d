// WorkSource: where a crawl's fetchers get their leases and where a finished page is given back
// (docs/architecture.md, "The seams").
//   - LocalWorkSource (local_work_source.h): the crawl's own frontier; its pending set is part of
//     the local checkpoint, so a recorded page is durable with the next checkpoint (or at once,
//     with checkpoint_interval 0);
//   - ClusterWorkSource (cluster_work_source.h): a cluster node's inboxes, read into its local
//     frontier; an inbox entry is acknowledged once the checkpoint holding its page committed.
//
// The loop: Next() → fetch → process → record (Recorded(), under the gate) → AwaitDurable()
// (after the gate is released) → Next() ...
//
// Thread-safety: Next, Recorded and AwaitDurable from any number of fetcher threads; Checkpoint
// from the checkpointing thread with the gate held exclusively; Stop from any thread.
#ifndef URLSIEVE_CRAWLER_CRAWL_WORK_SOURCE_H_
#define URLSIEVE_CRAWLER_CRAWL_WORK_SOURCE_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace urlsieve {

class SqliteDb;
struct FetchRecord;
struct Lease;
struct Rejection;

class WorkSource {
 public:
  virtual ~WorkSource() = default;

  // Before the fetchers start.
  virtual void Start() {}
  // The next lease for a fetcher; false: no more work for it (the crawl is over, or stopping).
  virtual bool Next(Lease* lease) = 0;
  // The page of `url`, or its rejection, is in the outputs (called under the gate, shared): its
  // work item may be released once durable. `record`: the URL's fetch record as the page left it
  // (null: a rejection, or no answer to record), for a source that keeps the records with the
  // work (a cluster's partitions; a local crawl's are in its checkpoint). Returns the ticket
  // AwaitDurable waits for.
  virtual uint64_t Recorded(std::string_view url, const FetchRecord* record) = 0;
  // A sitemap's lease is done (read, or given up): its work item may be released; nothing waits.
  virtual void SitemapDone(std::string_view /*url*/) {}
  // After a page was recorded, the gate released: returns once the page is as durable as this
  // source promises before its fetcher takes more work.
  virtual void AwaitDurable(uint64_t ticket) = 0;
  // Its part of a checkpoint, in the state's transaction with the gate held exclusively: the
  // pending set's changes, and the rejections decided outside the gate (for rejected.jsonl).
  virtual Status Checkpoint(SqliteDb& db, std::vector<Rejection>* rejections) = 0;
  // That checkpoint committed (the gate still held exclusively): every page Recorded() before it
  // is durable.
  virtual void Committed() {}
  // After the last fetcher ended: the final checkpoint and what must follow it.
  virtual Status Close() = 0;
  // Ends the waits for work (a stop).
  virtual void Stop() {}
  // Whether the crawl's work is done, not cut short by a stop.
  virtual bool Finished(bool stop_requested) const = 0;
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CRAWL_WORK_SOURCE_H_
