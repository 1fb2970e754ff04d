#include "crawler/cluster/cluster_work_source.h"

#include <iterator>

#include "crawler/cluster/cluster_feed.h"
#include "frontier/frontier.h"

namespace urlsieve {

void ClusterWorkSource::Start() { feed_->Start(); }

bool ClusterWorkSource::Next(Lease* lease) {
  for (;;) {
    const uint64_t generation = feed_->generation();
    if (!frontier_->Next(lease)) {
      drain_rejections_();
      if (!feed_->WaitForWork(generation)) return false;
      continue;
    }
    if (feed_->Admit(*lease)) return true;
  }
}

uint64_t ClusterWorkSource::Recorded(std::string_view url, const FetchRecord* record) {
  return feed_->Recorded(url, record);
}

void ClusterWorkSource::SitemapDone(std::string_view url) { feed_->SitemapDone(url); }

void ClusterWorkSource::AwaitDurable(uint64_t ticket) { feed_->AwaitDurable(ticket); }

Status ClusterWorkSource::Checkpoint(SqliteDb&, std::vector<Rejection>* rejections) {
  // What was recorded before this checkpoint is acknowledged once it commits.
  feed_->Checkpointing();
  std::vector<Rejection> drained =
      frontier_->DrainRejections();  // no pending set to drop them from
  std::move(drained.begin(), drained.end(), std::back_inserter(*rejections));
  return Status::Ok();
}

void ClusterWorkSource::Committed() { feed_->Committed(); }

Status ClusterWorkSource::Close() {
  // The node's last checkpoint is its feed's: the recorded entries are acknowledged after it.
  return feed_->Close();
}

void ClusterWorkSource::Stop() { feed_->Stop(); }

bool ClusterWorkSource::Finished(bool) const { return feed_->finished(); }

}  // namespace urlsieve
