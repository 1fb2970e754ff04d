// LocalWorkSource: the WorkSource of a crawl that keeps its pending work itself (work_source.h):
// leases come from the local frontier, whose pending set is written in every checkpoint. With
// checkpoint_interval 0 each page is checkpointed before its fetcher takes the next lease.
//
// Thread-safety: as the Frontier (thread-safe); `checkpoint` must be callable from any thread.
#ifndef URLSIEVE_CRAWLER_CRAWL_LOCAL_WORK_SOURCE_H_
#define URLSIEVE_CRAWLER_CRAWL_LOCAL_WORK_SOURCE_H_

#include <functional>

#include "crawler/crawl/work_source.h"

namespace urlsieve {

class Frontier;

class LocalWorkSource final : public WorkSource {
 public:
  // `frontier` must outlive the source. `checkpoint` runs the crawl's checkpoint; `fail` fails
  // the crawl. checkpoint_each_page: checkpoint after every page (checkpoint_interval 0).
  LocalWorkSource(Frontier* frontier, std::function<Status()> checkpoint,
                  std::function<void(const Status&)> fail, bool checkpoint_each_page);

  bool Next(Lease* lease) override;
  uint64_t Recorded(std::string_view, const FetchRecord*) override { return 0; }
  void AwaitDurable(uint64_t ticket) override;
  Status Checkpoint(SqliteDb& db, std::vector<Rejection>* rejections) override;
  Status Close() override { return checkpoint_(); }
  bool Finished(bool stop_requested) const override { return !stop_requested; }

 private:
  Frontier* const frontier_;
  const std::function<Status()> checkpoint_;
  const std::function<void(const Status&)> fail_;
  const bool checkpoint_each_page_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CRAWL_LOCAL_WORK_SOURCE_H_
