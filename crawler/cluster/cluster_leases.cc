// A node's partition leases (crawler/cluster/cluster_coordinator.h, "Ownership"): acquiring the
// wanted ones, renewing the held ones, handing over the drained ones with the politeness cool-down,
// and fencing: a lease is used (MayFetch) only while valid, and one found lost ends its tenure.
#include <algorithm>
#include <map>
#include <utility>

#include "crawler/cluster/cluster_coordinator_impl.h"
#include "crawler/cluster/cluster_function.h"
#include "crawler/cluster/cluster_keys.h"

namespace urlsieve {

using cluster_internal::SteadyClock;
using std::chrono::milliseconds;

std::vector<RedisCommand> ClusterCoordinator::Impl::LeaseCommands(const char* function,
                                                                  std::span<const uint32_t> which,
                                                                  milliseconds ms) const {
  std::vector<RedisCommand> commands;
  commands.reserve(which.size());
  for (uint32_t p : which) {
    commands.push_back(
        Fcall(function, {parts_[p].lease_key}, {lease_value_, std::to_string(ms.count())}));
  }
  return commands;
}

std::vector<RedisCommand> ClusterCoordinator::Impl::ReleaseCommands(
    std::span<const uint32_t> which) const {
  ClusterCoordinator::LearnedDelays learned;
  {
    std::lock_guard<std::mutex> lock(mu_);
    learned = learned_delays_;
  }
  // The cool-down keeps the longest delay this node keeps for the partition's hosts: the next
  // owner's first request (its robots.txt) comes no sooner after our last.
  const std::map<uint32_t, milliseconds> delays =
      learned ? learned() : std::map<uint32_t, milliseconds>{};
  std::vector<RedisCommand> commands;
  commands.reserve(which.size());
  for (uint32_t p : which) {
    milliseconds cool_down = options_.handover_delay;
    if (auto it = delays.find(p); it != delays.end()) cool_down = std::max(cool_down, it->second);
    commands.push_back(Fcall(kClusterRelease, {parts_[p].lease_key},
                             {lease_value_, std::to_string(cool_down.count())}));
  }
  return commands;
}

template <typename Take>
Status ClusterCoordinator::Impl::TakeLeaseReplies(std::span<const uint32_t> which,
                                                  const std::vector<RedisReply>& replies,
                                                  std::string_view doing, Take take) {
  Status first;
  for (size_t i = 0; i < which.size(); ++i) {
    Partition& part = parts_[which[i]];
    const RedisReply& reply = replies[i];
    if (reply.is_error()) {
      if (first.ok()) first = ReplyError(reply, std::string(doing) + part.lease_key);
      continue;
    }
    take(i, part, reply);
  }
  return first;
}

template <typename Take>
Status ClusterCoordinator::Impl::CallLeases(RedisClient& client, const char* function,
                                            std::span<const uint32_t> which, milliseconds ms,
                                            std::string_view doing, Take take) {
  if (which.empty()) return Status::Ok();
  const std::vector<RedisCommand> commands = LeaseCommands(function, which, ms);
  const SteadyClock::time_point sent = SteadyClock::now();
  std::vector<RedisReply> replies;
  URLSIEVE_RETURN_IF_ERROR(Call(client, commands, &replies));
  if (function == std::string_view(kClusterAcquire)) {
    // Not held until the replicas have it: acquiring again is harmless (the Function renews a
    // lease of ours), a lease a failover forgot could be taken by another node meanwhile.
    std::vector<std::string> keys;
    for (uint32_t p : which) keys.push_back(parts_[p].lease_key);
    URLSIEVE_RETURN_IF_ERROR(WaitForReplicas(client, keys));
  }
  std::lock_guard<std::mutex> lock(mu_);
  return TakeLeaseReplies(
      which, replies, doing,
      [&](size_t i, Partition& part, const RedisReply& reply) { take(i, part, reply, sent); });
}

Status ClusterCoordinator::Impl::RenewAll(RedisClient& client) {
  std::vector<uint32_t> which;
  std::vector<uint64_t> epochs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (uint32_t p = 0; p < parts_.size(); ++p) {
      if (!parts_[p].held) continue;
      which.push_back(p);
      epochs.push_back(parts_[p].epoch);
    }
  }
  return CallLeases(
      client, kClusterRenew, which, options_.lease_ttl, "renewing ",
      [&](size_t i, Partition& part, const RedisReply& reply, SteadyClock::time_point sent) {
        if (part.epoch != epochs[i] || !part.held) return;
        if (!reply.elements.empty() && reply.elements[0].integer == 1) {
          part.valid_until = sent + valid_for_;
        } else {
          // It lapsed (and was taken, or may have been): not ours any more.
          MarkLost(which[i]);
        }
      });
}

Status ClusterCoordinator::Impl::ReleaseDrained(RedisClient& client) {
  std::vector<uint32_t> which;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (uint32_t p = 0; p < parts_.size(); ++p) {
      Partition& part = parts_[p];
      if (!part.held || !part.draining || part.busy || !part.outstanding.empty()) continue;
      part.busy = true;
      which.push_back(p);
    }
  }
  if (which.empty()) return Status::Ok();
  const std::vector<RedisCommand> commands = ReleaseCommands(which);
  std::vector<RedisReply> replies;
  Status status = Call(client, commands, &replies);
  std::lock_guard<std::mutex> lock(mu_);
  for (uint32_t p : which) parts_[p].busy = false;
  if (!status.ok()) return status;
  return TakeLeaseReplies(which, replies, "releasing ",
                          [&](size_t i, Partition& part, const RedisReply&) {
                            // Released (or already not ours): either way, not held.
                            if (part.held) MarkLost(which[i]);
                          });
}

Status ClusterCoordinator::Impl::AcquireWanted(RedisClient& client) {
  std::vector<uint32_t> which;
  const SteadyClock::time_point now = SteadyClock::now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (left_) return Status::Ok();
    for (uint32_t p = 0; p < parts_.size(); ++p) {
      const Partition& part = parts_[p];
      if (!part.wanted || part.held || part.busy || now < part.next_acquire) continue;
      which.push_back(p);
    }
  }
  return CallLeases(client, kClusterAcquire, which, options_.lease_ttl, "acquiring ",
                    [&](size_t, Partition& part, const RedisReply& reply,
                        SteadyClock::time_point sent) { TakeAcquireReply(part, reply, sent); });
}

void ClusterCoordinator::Impl::TakeAcquireReply(Partition& part, const RedisReply& reply,
                                                SteadyClock::time_point sent) {
  if (reply.elements.empty()) return;
  if (reply.elements[0].integer == 1) {
    if (!part.wanted) {
      // Unwanted meanwhile: keep it and drain it (nothing outstanding: released next round).
      part.draining = true;
    }
    part.held = true;
    ++part.epoch;
    part.valid_until = sent + valid_for_;
    part.claim_cursor = "0-0";  // the previous owner's unacknowledged entries first
    part.reclaim = false;
    part.idle_backoff = milliseconds(0);
    part.next_ask = SteadyClock::time_point{};
    part.last_entry = SteadyClock::now();
    return;
  }
  long long pttl = reply.elements.size() >= 3 ? reply.elements[2].integer : 0;
  milliseconds wait;
  if (reply.elements.size() >= 2 && reply.elements[1].str == kClusterLeaseReleased) {
    wait = milliseconds(std::max(5LL, pttl));  // the cool-down: try the moment it ends
  } else {
    wait = std::clamp(milliseconds(pttl), milliseconds(50), milliseconds(250));
  }
  part.next_acquire = SteadyClock::now() + wait;
}

void ClusterCoordinator::Impl::MarkLost(uint32_t p) {
  Partition& part = parts_[p];
  // The entries read and not recorded are the next owner's now. The recorded ones stay until
  // their Ack (which is not lease-checked), so that a claim after this node takes p again skips
  // them rather than fetching their pages twice.
  outstanding_ -= part.unrecorded();
  std::erase_if(part.outstanding, [](const auto& entry) { return !entry.second; });
  part.held = false;
  part.draining = false;
  part.claim_cursor.clear();
  part.reclaim = false;
  part.valid_until = SteadyClock::time_point{};
  ++part.epoch;
}

void ClusterCoordinator::Impl::Fail(Status status) {
  if (error_.ok()) error_ = std::move(status);
  for (uint32_t p = 0; p < parts_.size(); ++p) {
    if (parts_[p].held) MarkLost(p);
  }
}

bool ClusterCoordinator::Impl::MayFetch(uint32_t partition, const uint64_t* tenure) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (partition >= parts_.size() || !error_.ok()) return false;
  const Partition& part = parts_[partition];
  if (tenure != nullptr && *tenure != part.epoch) return false;
  return part.held && SteadyClock::now() < part.valid_until;
}

Status ClusterCoordinator::Impl::Leave(bool finished) {
  StopThread();
  std::vector<uint32_t> which;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (left_) return Status::Ok();
    left_ = true;
    if (!error_.ok()) return error_;
    for (uint32_t p = 0; p < parts_.size(); ++p) {
      if (parts_[p].held) which.push_back(p);
    }
  }
  const std::vector<RedisCommand> commands = ReleaseCommands(which);
  auto client = pool_.Take();
  if (!client.ok()) return client.status();
  std::vector<RedisReply> replies;
  Status status = commands.empty() ? Status::Ok() : Call(**client, commands, &replies);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (status.ok() && !replies.empty()) {
      status = TakeLeaseReplies(which, replies, "releasing ",
                                [](size_t, Partition&, const RedisReply&) {});
    }
    for (uint32_t p : which) MarkLost(p);
  }
  Status beat = Beat(**client, milliseconds(0), finished ? "finished" : "stopped");
  pool_.Give(std::move(client).value());
  if (!status.ok()) return status;
  return beat;
}

}  // namespace urlsieve
