#include "crawler/crawl/shared_admission.h"

#include <chrono>
#include <memory>

#include "base/logger.h"
#include "crawler/crawl/seen_retry.h"
#include "crawler/crawl/url_router.h"
#include "crawler/state/claim_record.h"
#include "dedup/state_seen_set.h"

namespace urlsieve {

SharedAdmission::SharedAdmission(StateSeenSet* seen_set, UrlRouter* router, SeenRetry* retry,
                                 Logger* log, std::string what)
    : seen_set_(seen_set), router_(router), retry_(retry), log_(log), what_(std::move(what)) {}

void SharedAdmission::Stop() { retry_->Stop(); }

Result<Admitted> SharedAdmission::Admit(LinkBatch* batch) {
  const size_t n = batch->keys.size();
  // What a resumed crawl needs to queue a URL again that the set told it new after its last
  // checkpoint (StateSeenSet::InsertHashedIfNewClaiming).
  std::vector<std::string> claims;
  claims.reserve(n);
  for (const CanonicalUrl& url : batch->urls) {
    claims.push_back(EncodeClaim(url.key(), batch->depth, batch->parent));
  }
  std::vector<std::string_view> payloads(claims.begin(), claims.end());
  std::unique_ptr<bool[]> is_new(new bool[n]());
  std::chrono::steady_clock::duration retried_for{};
  Status inserted = retry_->Run(
      [&] {
        return seen_set_->InsertHashedIfNewClaiming(batch->keys, batch->hashes, payloads,
                                                    std::span<bool>(is_new.get(), n));
      },
      &retried_for);
  // Answered too late to be the lost first run's answers (SeenRetry: kSeenReplayWindow), "seen"
  // may be wrong: the batch is treated as unanswered.
  const bool too_late = inserted.ok() && retried_for > kSeenReplayWindow;
  if (!inserted.ok() || too_late) return RouteUnanswered(batch, inserted, too_late);
  Admitted admitted;
  admitted.fresh = static_cast<int>(batch->KeepNew(is_new.get()));
  URLSIEVE_RETURN_IF_ERROR(router_->Route(batch->urls, batch->depth, batch->parent));
  return admitted;
}

Result<Admitted> SharedAdmission::RouteUnanswered(LinkBatch* batch, const Status& inserted,
                                                  bool too_late) {
  const size_t n = batch->keys.size();
  std::unique_ptr<bool[]> first(new bool[n]());
  {
    std::lock_guard<std::mutex> lock(unanswered_mu_);
    for (size_t i = 0; i < n; ++i) first[i] = unanswered_keys_.emplace(batch->keys[i]).second;
  }
  Admitted admitted;
  admitted.answered = false;
  admitted.fresh = static_cast<int>(batch->KeepNew(first.get()));
  URLSIEVE_RETURN_IF_ERROR(router_->Route(batch->urls, batch->depth, batch->parent));
  const std::string links =
      std::to_string(admitted.fresh) + " links of " +
      (batch->parent.empty() ? std::string("the seeds") : std::string(batch->parent));
  if (too_late) {
    log_->Info(what_ + " answered after an outage longer than it replays " +
               "answers: queued the " + links + " as they are (some may be fetched twice)");
    return admitted;
  }
  if (inserted.code() == StatusCode::kUnavailable && retry_->stopped()) {
    log_->Info("stopping while " + what_ + " does not answer: queued the " + links +
               " without its answer (some may be fetched twice)");
    return admitted;
  }
  return inserted;
}

Result<SitemapQueued> SharedAdmission::AdmitSitemap(const CanonicalUrl& url, uint32_t nesting,
                                                    std::string_view parent) {
  router_->RouteSitemap(url, nesting, parent);
  return SitemapQueued::kLocally;
}

}  // namespace urlsieve
