#include "crawler/cluster/cluster_feed.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "base/logger.h"
#include "crawler/cluster/cluster_seeds.h"
#include "crawler/cluster/cluster_url_router.h"
#include "crawler/crawl/scope.h"
#include "crawler/crawl/seen_retry.h"
#include "crawler/state/claim_record.h"
#include "crawler/state/fetch_record.h"
#include "crawler/state/fetch_record_text.h"
#include "frontier/frontier.h"
#include "url/url_canonicalizer.h"

namespace urlsieve {
namespace {

// At most 200 bytes of an untrusted payload, control bytes escaped.
std::string Excerpt(std::string_view text) {
  std::string out;
  for (unsigned char c : text.substr(0, 200)) {
    if (c < 0x20 || c >= 0x7f) {
      static constexpr char kHex[] = "0123456789ABCDEF";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (text.size() > 200) out += "...";
  return out;
}

// Where outstanding_ keeps a URL's entries: a sitemap's apart from a page of the same URL.
std::string OutstandingKey(bool sitemap, std::string_view url) {
  return sitemap ? "S " + std::string(url) : std::string(url);
}

// An entry a re-crawl round queued: "R <url>\n<fetch record text>" (cluster_function.lua).
std::optional<FetchRecord> DecodeRefetch(std::string_view payload) {
  if (payload.substr(0, 2) != "R ") return std::nullopt;
  payload.remove_prefix(2);
  const size_t end = payload.find('\n');
  if (end == std::string_view::npos || end == 0) return std::nullopt;
  return DecodeFetchRecord(payload.substr(0, end), payload.substr(end + 1));
}

}  // namespace

ClusterFeed::ClusterFeed(Parts parts, ClusterFeedOptions options)
    : parts_(std::move(parts)), options_(options) {
  SeenRetryOptions retry;
  retry.what = parts_.coordinator->what();
  ack_retry_ = std::make_unique<SeenRetry>(
      retry, [log = parts_.log](const std::string& message) { log->Info(message); });
  seed_retry_ = std::make_unique<SeenRetry>(
      retry, [log = parts_.log](const std::string& message) { log->Info(message); });
}

ClusterFeed::~ClusterFeed() {
  Stop();
  if (feeder_.joinable()) feeder_.join();
  StopSender();
}

void ClusterFeed::Start() {
  feeder_ = std::thread([this] { FeederLoop(); });
  sender_ = std::thread([this] { SenderLoop(); });
}

uint64_t ClusterFeed::generation() const {
  std::lock_guard<std::mutex> lock(mu_);
  return generation_;
}

bool ClusterFeed::WaitForWork(uint64_t generation) {
  std::unique_lock<std::mutex> lock(mu_);
  work_cv_.wait(lock, [&] { return generation_ != generation || stopped_; });
  return !stopped_;
}

bool ClusterFeed::Admit(const Lease& lease) {
  if (lease.kind == Lease::Kind::kRobots) {
    // A robots.txt request is a request to the partition's hosts too.
    const uint32_t partition = parts_.router->PartitionOf(lease.url);
    if (parts_.coordinator->MayFetch(partition)) return true;
    parts_.frontier->Abandon(lease);  // the next page of the origin asks again
    return false;
  }
  // Entries read under an earlier tenure of their partition (lost and taken again since) are
  // forgotten: a copy read under the new tenure may be on its way.
  std::vector<InboxEntry> forget;
  bool admitted = false;
  std::optional<uint32_t> partition;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = outstanding_.find(OutstandingKey(lease.kind == Lease::Kind::kSitemap, lease.url));
    if (it != outstanding_.end()) {
      partition = it->second.partition;
      std::vector<InboxEntry>& entries = it->second.entries;
      auto keep = std::stable_partition(entries.begin(), entries.end(), [&](const InboxEntry& e) {
        return parts_.coordinator->MayFetch(e);
      });
      std::move(keep, entries.end(), std::back_inserter(forget));
      entries.erase(keep, entries.end());
      outstanding_entries_ -= forget.size();
      admitted = !entries.empty();
      if (!admitted) outstanding_.erase(it);
    }
  }
  if (!partition) {
    // Not read from an inbox (it cannot be: every URL of a node's frontier is); the partition's
    // lease decides.
    partition = parts_.router->PartitionOf(lease.url);
    admitted = parts_.coordinator->MayFetch(*partition);
  }
  if (!forget.empty()) {
    parts_.coordinator->Forget(forget);
    feeder_cv_.notify_one();
  }
  if (admitted) return true;
  // The partition was handed over (or its lease lapsed): its next owner fetches the URL.
  parts_.frontier->Abandon(lease);
  parts_.log->Debug("partition " + std::to_string(*partition) +
                    " is no longer this node's: " + lease.url + " is left to its next owner");
  return false;
}

uint64_t ClusterFeed::Recorded(std::string_view url, const FetchRecord* record) {
  return Release(OutstandingKey(false, url), record ? EncodeFetchRecord(*record) : std::string(),
                 /*page=*/true);
}

void ClusterFeed::SitemapDone(std::string_view url) {
  Release(OutstandingKey(true, url), std::string(), /*page=*/false);
}

uint64_t ClusterFeed::Release(const std::string& key, std::string record, bool page) {
  uint64_t ticket = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = outstanding_.find(key);
    if (it == outstanding_.end()) return 0;
    std::vector<InboxEntry>& entries = it->second.entries;
    if (page) {
      entries.front().record_url = it->first;
      entries.front().record = std::move(record);
    }
    outstanding_entries_ -= entries.size();
    // No longer counted against the coordinator's read bounds: they wait for the checkpoint.
    parts_.coordinator->Recorded(entries);
    std::move(entries.begin(), entries.end(), std::back_inserter(to_ack_));
    outstanding_.erase(it);
    ticket = ++recorded_ticket_;
  }
  feeder_cv_.notify_one();
  return ticket;
}

void ClusterFeed::AwaitDurable(uint64_t ticket) {
  if (!options_.checkpoint_each_page || ticket == 0) return;
  if (Status saved = parts_.checkpoint(); !saved.ok()) {
    parts_.fail(saved);
    return;
  }
  std::unique_lock<std::mutex> lock(mu_);
  acked_cv_.wait(lock, [&] { return acked_ticket_ >= ticket || sender_closing_; });
}

void ClusterFeed::Checkpointing() {
  std::lock_guard<std::mutex> lock(mu_);
  // Appended: a checkpoint that failed leaves its entries to the next one.
  std::move(to_ack_.begin(), to_ack_.end(), std::back_inserter(checkpointing_.entries));
  to_ack_.clear();
  checkpointing_.upto = recorded_ticket_;
}

void ClusterFeed::Committed() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    to_send_.push_back(std::move(checkpointing_));
    checkpointing_ = SendBatch{};
  }
  sender_cv_.notify_one();
}

void ClusterFeed::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
  }
  work_cv_.notify_all();
  feeder_cv_.notify_all();
  ack_retry_->Stop();
  seed_retry_->Stop();
}

bool ClusterFeed::finished() const {
  std::lock_guard<std::mutex> lock(mu_);
  return finished_;
}

uint64_t ClusterFeed::outstanding() const {
  std::lock_guard<std::mutex> lock(mu_);
  return outstanding_entries_;
}

Status ClusterFeed::Close() {
  Stop();
  if (feeder_.joinable()) feeder_.join();
  // The last checkpoint: what it holds is acknowledged, then the sender ends.
  Status saved = parts_.checkpoint();
  StopSender();
  return saved;
}

void ClusterFeed::StopSender() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    sender_closing_ = true;
  }
  sender_cv_.notify_all();
  acked_cv_.notify_all();
  if (sender_.joinable()) sender_.join();
}

void ClusterFeed::Push(std::vector<InboxEntry> entries) {
  for (InboxEntry& entry : entries) {
    std::optional<ClaimRecord> record = DecodeClaim(entry.payload);
    std::optional<FetchRecord> refetch;
    if (!record) {
      refetch = DecodeRefetch(entry.payload);
      if (refetch) record = ClaimRecord{false, refetch->depth, refetch->url, refetch->parent};
    }
    std::optional<CanonicalUrl> url;
    if (record) {
      Result<CanonicalUrl> parsed = parts_.fetch_form->Canonicalize(record->url);
      if (parsed.ok()) url = std::move(*parsed);
    }
    if (!url) {
      // Not ours to fetch, and no other node could do better with it: said, and acknowledged
      // (with the next checkpoint) so that it does not hold up the end of the crawl.
      parts_.log->Info("warning: " + parts_.coordinator->what() + ": inbox entry " + entry.id +
                       " of partition " + std::to_string(entry.partition) +
                       " is not a URL record, skipped: " + Excerpt(entry.payload));
      parts_.coordinator->Recorded({&entry, 1});
      std::lock_guard<std::mutex> lock(mu_);
      to_ack_.push_back(std::move(entry));
      continue;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto [it, inserted] = outstanding_.try_emplace(OutstandingKey(record->sitemap, url->key()));
      it->second.partition = entry.partition;
      it->second.entries.push_back(std::move(entry));
      ++outstanding_entries_;
      if (!inserted) continue;  // the same URL twice (a Redis that lost writes): fetched once
    }
    if (record->sitemap) {
      parts_.frontier->PushSitemap(*url, record->depth, record->parent);
      continue;
    }
    if (refetch) parts_.records->Hold(std::move(*refetch));
    if (record->depth == 0 && record->parent.empty()) parts_.scope->AddSeed(*url);
    parts_.frontier->Push(*url, record->depth, record->parent);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++generation_;
  }
  work_cv_.notify_all();
}

bool ClusterFeed::LocalIdle() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (outstanding_entries_ > 0) return false;
  }
  const FrontierStats stats = parts_.frontier->Stats();
  return stats.pending == 0 && stats.in_flight == 0;
}

ClusterFeed::Acks ClusterFeed::PendingAcks() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!to_ack_.empty()) return Acks::kToCheckpoint;
  if (!checkpointing_.entries.empty() || !to_send_.empty() || acked_ticket_ < recorded_ticket_) {
    return Acks::kToSend;
  }
  return Acks::kNone;
}

void ClusterFeed::FeederLoop() {
  auto next_finished_check = std::chrono::steady_clock::now();
  bool unavailable_said = false;
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopped_) {
    const bool room = outstanding_entries_ < options_.low_water;
    lock.unlock();
    bool got = false;
    if (Status error = parts_.coordinator->error(); !error.ok()) {
      parts_.fail(error);
      lock.lock();
      break;
    }
    if (room) {
      Result<std::vector<InboxEntry>> polled = parts_.coordinator->Poll(options_.poll_batch);
      if (!polled.ok()) {
        if (polled.status().code() != StatusCode::kUnavailable) {
          parts_.fail(polled.status());
          lock.lock();
          break;
        }
        if (!unavailable_said) {
          parts_.log->Info("reading the inboxes: " + polled.status().message() + " (retrying)");
          unavailable_said = true;
        }
      } else {
        unavailable_said = false;
        if (!polled->empty()) {
          got = true;
          Status seeds = parts_.seeds == nullptr
                             ? Status::Ok()
                             : seed_retry_->Run([this] { return parts_.seeds->Refresh(); });
          if (!seeds.ok()) {
            // Stopping during an outage, or an error: the entries stay pending, unfetched.
            if (!seed_retry_->stopped()) parts_.fail(seeds);
            parts_.coordinator->Forget(*polled);
            lock.lock();
            break;
          }
          Push(std::move(*polled));
        }
      }
    }
    const auto now = std::chrono::steady_clock::now();
    const bool idle = !got && LocalIdle();
    parts_.coordinator->SetIdle(idle && PendingAcks() == Acks::kNone);
    if (idle && now >= next_finished_check) {
      next_finished_check = now + options_.finished_interval;
      const Acks acks = PendingAcks();
      if (acks != Acks::kNone) {
        // Nothing to fetch here: checkpoint now rather than at the next interval, so that the
        // entries are acknowledged (the end, and a hand-over, wait for them).
        Status saved = acks == Acks::kToCheckpoint ? parts_.checkpoint() : Status::Ok();
        lock.lock();
        if (!saved.ok()) {
          parts_.fail(saved);
          break;
        }
        feeder_cv_.wait_for(lock, options_.idle_poll, [&] { return stopped_; });
        continue;
      }
      Result<bool> finished = parts_.coordinator->Finished();
      if (finished.ok() && *finished) {
        lock.lock();
        finished_ = true;
        stopped_ = true;
        work_cv_.notify_all();
        break;
      }
      if (!finished.ok() && finished.status().code() != StatusCode::kUnavailable) {
        parts_.fail(finished.status());
        lock.lock();
        break;
      }
    }
    lock.lock();
    if (got && outstanding_entries_ < options_.low_water) continue;
    feeder_cv_.wait_for(lock, options_.idle_poll, [&] {
      return stopped_ || (!room && outstanding_entries_ < options_.low_water);
    });
  }
}

Status ClusterFeed::AckBatch(const std::vector<InboxEntry>& batch) {
  Status acked = ack_retry_->Run([&] { return parts_.coordinator->Ack(batch); });
  if (acked.ok()) return acked;
  if (acked.code() == StatusCode::kUnavailable && ack_retry_->stopped()) {
    parts_.log->Info("stopping while " + parts_.coordinator->what() +
                     " does not answer: " + std::to_string(batch.size()) +
                     " recorded URLs stay pending in their inboxes (their next owner fetches "
                     "them again)");
    return Status::Ok();
  }
  return acked;
}

void ClusterFeed::SenderLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    sender_cv_.wait(lock, [&] { return !to_send_.empty() || sender_closing_; });
    if (to_send_.empty()) break;  // closing, and everything is sent
    SendBatch next = std::move(to_send_.front());
    to_send_.pop_front();
    lock.unlock();
    if (!next.entries.empty()) {
      Status acked = AckBatch(next.entries);
      if (!acked.ok()) parts_.fail(acked);
    }
    lock.lock();
    acked_ticket_ = std::max(acked_ticket_, next.upto);
    acked_cv_.notify_all();
  }
}

}  // namespace urlsieve
