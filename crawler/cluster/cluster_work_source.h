// ClusterWorkSource: the WorkSource of a node of a crawl cluster (work_source.h; docs/features/
// cluster.md). Its leases come from the local frontier, which the feed (ClusterFeed) fills from
// the inboxes of the partitions this node owns. When the frontier runs dry while the inboxes may
// still have work, a fetcher waits for the feed instead of ending, until the cluster's crawl is
// over or a stop; a lease whose partition this node no longer owns is dropped (ClusterFeed::
// Admit). A recorded page's inbox entries are acknowledged once the checkpoint that holds its
// record committed; its fetcher does not wait for that (ClusterFeed, "Acknowledgement"). The
// frontier's pending set is not checkpointed: the inboxes are the truth.
//
// Thread-safety: as ClusterFeed and Frontier (both thread-safe); `drain_rejections` must be
// callable from any fetcher thread.
#ifndef URLSIEVE_CRAWLER_CLUSTER_CLUSTER_WORK_SOURCE_H_
#define URLSIEVE_CRAWLER_CLUSTER_CLUSTER_WORK_SOURCE_H_

#include <functional>

#include "crawler/crawl/work_source.h"

namespace urlsieve {

class ClusterFeed;
class Frontier;

class ClusterWorkSource final : public WorkSource {
 public:
  // Both must outlive the source. `drain_rejections` records the frontier's rejections while a
  // fetcher waits for work.
  ClusterWorkSource(ClusterFeed* feed, Frontier* frontier, std::function<void()> drain_rejections)
      : feed_(feed), frontier_(frontier), drain_rejections_(std::move(drain_rejections)) {}

  void Start() override;
  bool Next(Lease* lease) override;
  uint64_t Recorded(std::string_view url, const FetchRecord* record) override;
  void SitemapDone(std::string_view url) override;
  void AwaitDurable(uint64_t ticket) override;
  Status Checkpoint(SqliteDb& db, std::vector<Rejection>* rejections) override;
  void Committed() override;
  Status Close() override;
  void Stop() override;
  bool Finished(bool stop_requested) const override;

 private:
  ClusterFeed* const feed_;
  Frontier* const frontier_;
  const std::function<void()> drain_rejections_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CLUSTER_CLUSTER_WORK_SOURCE_H_
