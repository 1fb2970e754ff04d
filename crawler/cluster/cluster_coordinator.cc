// ClusterCoordinator: the public class over its Impl (crawler/cluster/cluster_coordinator_impl.h,
// which lists the files of each concern), the Impl's construction, its error messages, and the
// heartbeat thread that keeps the node's membership and leases alive.
#include "crawler/cluster/cluster_coordinator.h"

#include <xxhash.h>

#include <algorithm>
#include <utility>

#include "crawler/cluster/cluster_coordinator_impl.h"
#include "crawler/cluster/cluster_keys.h"
#include "dedup/redis_seen_set.h"

namespace urlsieve {

using cluster_internal::kFastTick;
using cluster_internal::kMaxBeatInterval;
using cluster_internal::kMinProbeInterval;
using cluster_internal::RandomHex;
using cluster_internal::SteadyClock;
using std::chrono::milliseconds;

uint32_t ClusterPartitionOf(std::string_view politeness_key, uint32_t partitions) {
  if (partitions == 0) return 0;
  const uint64_t hash = XXH3_64bits(politeness_key.data(), politeness_key.size());
  // The high 64 bits of hash * partitions, in 64-bit halves (exact: the low half's own low 32
  // bits cannot carry past bit 64).
  const uint64_t high = (hash >> 32) * partitions;
  const uint64_t low = (hash & 0xffffffffu) * partitions;
  return static_cast<uint32_t>((high + (low >> 32)) >> 32);
}

ClusterCoordinator::Impl::Impl(const ClusterOptions& options)
    : options_(options),
      pool_(options.address, options.timeouts),
      server_(options.address.ToString()),
      token_(RandomHex(8)),
      meta_key_(ClusterMetaKey(options.name)),
      nodes_key_(ClusterNodesKey(options.name)),
      node_key_(ClusterNodeKey(options.name, options.node_id)),
      parts_(options.partitions) {
  what_ = "the crawl cluster '";
  what_ += options.name;
  what_ += "' at ";
  what_ += server_;
  beat_interval_ = std::min(std::max(milliseconds(1), options.lease_ttl / 5), kMaxBeatInterval);
  probe_interval_ = std::max(options.lease_ttl / 5, kMinProbeInterval);
  // docs/features/cluster.md, "Ownership": a lease is used until the last heartbeat of its tenure
  // was sent + lease_ttl - handover_delay - margin, so the next owner (who may take it once the
  // heartbeat's expiry has passed) never sends a request to one of its hosts within
  // handover_delay of ours; the margin covers clock rates and the time between MayFetch and the
  // request.
  valid_for_ = options.lease_ttl - options.handover_delay - options.lease_ttl / 10;
  for (uint32_t p = 0; p < options.partitions; ++p) {
    parts_[p].lease_key = ClusterLeaseKey(options.name, p);
    parts_[p].inbox_key = ClusterInboxKey(options.name, p);
    parts_[p].records_key = ClusterRecordsKey(options.name, p);
    parts_[p].recrawl_key = ClusterRecrawlKey(options.name, p);
  }
  totals_.name = options.name;
  totals_.server = server_;
  totals_.partitions = options.partitions;
}

std::string ClusterCoordinator::Impl::Where(std::string_view doing) const {
  std::string out(doing);
  out += " (";
  out += what_;
  out += ")";
  return out;
}

Status ClusterCoordinator::Impl::StateLost(const std::string& detail) const {
  std::string message = "coordination state lost: ";
  message += what_;
  message += ": ";
  message += detail;
  message +=
      " (the Redis server restarted without persistence, or its data was flushed); the node "
      "stops rather than re-crawl or end the crawl silently";
  return Status::FailedPrecondition(std::move(message));
}

Status ClusterCoordinator::Impl::ReplyError(const RedisReply& reply, std::string_view doing) const {
  if (reply.str.rfind("STATELOST", 0) == 0) return StateLost(reply.str);
  return RedisErrorStatus(server_, Where(doing), reply);
}

void ClusterCoordinator::Impl::StopThread() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ClusterCoordinator::Impl::Run() {
  std::unique_ptr<RedisClient> client;
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_ || !error_.ok()) return;
    }
    SteadyClock::time_point wake = SteadyClock::now() + kFastTick;
    if (client == nullptr) {
      auto taken = pool_.Take();
      if (taken.ok()) {
        client = std::move(taken).value();
      } else {
        std::lock_guard<std::mutex> lock(mu_);
        need_beat_ = true;
      }
    }
    if (client != nullptr) wake = Tick(*client);
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_until(lock, wake, [this] { return stop_ || wake_; });
    wake_ = false;
  }
}

SteadyClock::time_point ClusterCoordinator::Impl::Tick(RedisClient& client) {
  const SteadyClock::time_point now = SteadyClock::now();
  bool beat_due;
  {
    std::lock_guard<std::mutex> lock(mu_);
    beat_due = need_beat_ || now >= next_beat_;
  }
  if (beat_due) {
    Status status = Beat(client, options_.lease_ttl, "running");
    std::lock_guard<std::mutex> lock(mu_);
    if (!status.ok()) {
      if (status.code() == StatusCode::kUnavailable) {
        need_beat_ = true;
      } else {
        Fail(status);  // the state is lost, or the node's id was taken over: fatal
      }
      return SteadyClock::now() + kFastTick;
    }
    need_beat_ = false;
    next_beat_ = now + beat_interval_;
  }
  bool probe_due;
  {
    std::lock_guard<std::mutex> lock(mu_);
    probe_due = totals_asked_ && now >= next_probe_;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (now >= next_safety_sweep_) {
      ++sweep_;
      next_safety_sweep_ = now + cluster_internal::kSafetySweep;
    }
  }
  // Each step stops the round at a fault: the next round beats first.
  if (Faulted(ReleaseDrained(client))) return SteadyClock::now() + kFastTick;
  if (Faulted(AcquireWanted(client))) return SteadyClock::now() + kFastTick;
  if (Faulted(ScanForRecrawl(client))) return SteadyClock::now() + kFastTick;
  if (probe_due) {
    if (!Faulted(ProbeTotals(client))) {
      std::lock_guard<std::mutex> lock(mu_);
      next_probe_ = now + probe_interval_;
      totals_asked_ = false;
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  SteadyClock::time_point wake = next_beat_;
  for (const Partition& part : parts_) {
    if ((part.wanted && !part.held) || part.draining || Scanning()) {
      wake = std::min(wake, SteadyClock::now() + kFastTick);
      break;
    }
  }
  return wake;
}

bool ClusterCoordinator::Impl::Faulted(const Status& status) {
  if (status.ok()) return false;
  std::lock_guard<std::mutex> lock(mu_);
  if (status.code() == StatusCode::kUnavailable) {
    need_beat_ = true;
  } else if (status.message().rfind("coordination state lost", 0) == 0) {
    Fail(status);
  } else {
    need_beat_ = true;  // an unexpected reply: try again, beating first
  }
  return true;
}

ClusterCoordinator::ClusterCoordinator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ClusterCoordinator::~ClusterCoordinator() = default;

Result<std::unique_ptr<ClusterCoordinator>> ClusterCoordinator::Join(
    const ClusterOptions& options, std::vector<std::string>* notices) {
  const std::string server = options.address.ToString();
  if (!IsClusterIdentifier(options.name)) {
    return Status::InvalidArgument("the cluster name '" + options.name +
                                   "' must be 1-64 characters of [A-Za-z0-9_.-]");
  }
  if (!IsClusterIdentifier(options.node_id)) {
    return Status::InvalidArgument("the node id '" + options.node_id +
                                   "' must be 1-64 characters of [A-Za-z0-9_.-]");
  }
  if (options.partitions < 1 || options.partitions > kMaxClusterPartitions) {
    return Status::InvalidArgument("a crawl cluster has 1 to " +
                                   std::to_string(kMaxClusterPartitions) + " partitions, not " +
                                   std::to_string(options.partitions));
  }
  if (options.lease_ttl.count() < 10) {
    return Status::InvalidArgument("the lease TTL must be at least 10 ms, not " +
                                   std::to_string(options.lease_ttl.count()) + " ms");
  }
  if (options.handover_delay.count() < 0 || options.handover_delay * 2 >= options.lease_ttl) {
    return Status::InvalidArgument("the hand-over delay (" +
                                   std::to_string(options.handover_delay.count()) +
                                   " ms, the politeness delay) must be below half the lease TTL (" +
                                   std::to_string(options.lease_ttl.count()) + " ms)");
  }
  if (options.max_outstanding_per_partition == 0 || options.max_outstanding == 0) {
    return Status::InvalidArgument("the bounds of outstanding entries must be positive");
  }
  auto impl = std::make_unique<Impl>(options);
  URLSIEVE_RETURN_IF_ERROR(impl->Join(notices));
  return std::unique_ptr<ClusterCoordinator>(new ClusterCoordinator(std::move(impl)));
}

const std::string& ClusterCoordinator::identity() const { return impl_->identity(); }
uint32_t ClusterCoordinator::partitions() const { return impl_->partitions(); }
const std::string& ClusterCoordinator::node_id() const { return impl_->node_id(); }
const std::string& ClusterCoordinator::what() const { return impl_->what(); }
Result<std::vector<InboxEntry>> ClusterCoordinator::Poll(size_t max) { return impl_->Poll(max); }
void ClusterCoordinator::Nudge(std::span<const uint32_t> partitions) { impl_->Nudge(partitions); }
void ClusterCoordinator::SetIdle(bool idle) { impl_->SetIdle(idle); }
void ClusterCoordinator::Recorded(std::span<const InboxEntry> entries) { impl_->Recorded(entries); }
Status ClusterCoordinator::Ack(std::span<const InboxEntry> entries) { return impl_->Ack(entries); }
void ClusterCoordinator::Forget(std::span<const InboxEntry> entries) { impl_->Forget(entries); }
bool ClusterCoordinator::MayFetch(uint32_t partition) const {
  return impl_->MayFetch(partition, nullptr);
}
bool ClusterCoordinator::MayFetch(const InboxEntry& entry) const {
  return impl_->MayFetch(entry.partition, &entry.tenure);
}
Status ClusterCoordinator::MarkSeeded() { return impl_->MarkSeeded(); }
void ClusterCoordinator::SetLearnedDelays(LearnedDelays learned) {
  impl_->SetLearnedDelays(std::move(learned));
}
uint64_t ClusterCoordinator::recrawl_round() const { return impl_->recrawl_round(); }
Status ClusterCoordinator::BeginRecrawl(std::chrono::seconds revisit_after) {
  return impl_->BeginRecrawl(revisit_after);
}
Result<bool> ClusterCoordinator::Finished() { return impl_->Finished(); }
void ClusterCoordinator::Publish(const NodeCounters& counters) { impl_->Publish(counters); }
ClusterStatus ClusterCoordinator::Totals() const { return impl_->Totals(); }
Status ClusterCoordinator::error() const { return impl_->error(); }
Status ClusterCoordinator::Leave(bool finished) { return impl_->Leave(finished); }

}  // namespace urlsieve
