#include "crawler/crawl/local_work_source.h"

#include <utility>

#include "frontier/frontier.h"

namespace urlsieve {

LocalWorkSource::LocalWorkSource(Frontier* frontier, std::function<Status()> checkpoint,
                                 std::function<void(const Status&)> fail, bool checkpoint_each_page)
    : frontier_(frontier),
      checkpoint_(std::move(checkpoint)),
      fail_(std::move(fail)),
      checkpoint_each_page_(checkpoint_each_page) {}

bool LocalWorkSource::Next(Lease* lease) { return frontier_->Next(lease); }

void LocalWorkSource::AwaitDurable(uint64_t) {
  if (!checkpoint_each_page_) return;
  Status status = checkpoint_();
  if (!status.ok()) fail_(status);
}

Status LocalWorkSource::Checkpoint(SqliteDb& db, std::vector<Rejection>* rejections) {
  return frontier_->Checkpoint(db, rejections);
}

}  // namespace urlsieve
