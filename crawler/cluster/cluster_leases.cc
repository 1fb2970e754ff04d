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
  std::vector<RedisCommand> commands;
  std::vector<std::string> keys;
  std::string value;  // this node's lease value as asked for (a tenure may begin meanwhile)
  const SteadyClock::time_point now = SteadyClock::now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (left_ || lease_value_.empty()) return Status::Ok();
    value = lease_value_;
    for (uint32_t p = 0; p < parts_.size(); ++p) {
      const Partition& part = parts_[p];
      if (!part.wanted || part.held || part.busy || now < part.next_acquire) continue;
      which.push_back(p);
      keys.push_back(part.lease_key);
      commands.push_back(Fcall(kClusterAcquire, {part.lease_key}, {value, part.stale_holder}));
    }
  }
  if (which.empty()) return Status::Ok();
  const SteadyClock::time_point sent = SteadyClock::now();
  std::vector<RedisReply> replies;
  URLSIEVE_RETURN_IF_ERROR(Call(client, commands, &replies));
  // Not held until the replicas have it: acquiring again is harmless (the Function answers 1 for
  // a lease of ours), a lease a failover forgot could be taken by another node meanwhile.
  URLSIEVE_RETURN_IF_ERROR(WaitForReplicas(client, keys));
  std::lock_guard<std::mutex> lock(mu_);
  return TakeLeaseReplies(which, replies, "acquiring ",
                          [&](size_t, Partition& part, const RedisReply& reply) {
                            // A tenure begun meanwhile: the value taken is not ours any more.
                            if (value != lease_value_) return;
                            TakeAcquireReply(part, reply, sent);
                          });
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
    part.claim_check = true;  // the previous owner's unacknowledged entries first, if any
    part.reclaim = false;
    return;
  }
  const std::string holder = reply.elements.size() >= 2 ? reply.elements[1].str : std::string();
  const long long pttl = reply.elements.size() >= 3 ? reply.elements[2].integer : 0;
  milliseconds wait{0};
  part.stale_holder.clear();
  if (holder == kClusterLeaseReleased) {
    wait = milliseconds(std::max(5LL, pttl));  // the cool-down: try the moment it ends
  } else if (StaleLease(holder)) {
    // Its holder stopped fetching a delay before its heartbeat's expiry: taken over at once, if
    // it still holds that value.
    part.stale_holder = holder;
  } else {
    wait = milliseconds(250);  // a live node's, draining for us: released soon
  }
  part.next_acquire = SteadyClock::now() + wait;
}

bool ClusterCoordinator::Impl::StaleLease(std::string_view value) const {
  const std::string_view owner = ClusterLeaseOwner(value);
  const size_t hash = value.rfind('#');
  if (owner.empty() || hash == std::string_view::npos) return false;
  const auto node = tenures_.find(std::string(owner));
  // A node this node has not heard of yet (it joined after the last heartbeat) is alive.
  if (node == tenures_.end()) return false;
  const uint64_t tenure = std::strtoull(std::string(value.substr(hash + 1)).c_str(), nullptr, 10);
  // A later tenure than the heartbeat saw is newer than what this node knows: alive.
  if (tenure > node->second.tenure) return false;
  return tenure < node->second.tenure || !node->second.alive;
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
  part.claim_check = false;
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
