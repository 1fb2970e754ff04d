// A node's reading of the inboxes of the partitions it holds
// (crawler/cluster/cluster_coordinator.h, "Inboxes"): each Poll reads the hot partitions and probes
// the others that are due, in one pipeline; entries read are outstanding until acknowledged (Ack:
// XACK + XDEL) or forgotten.
#include <algorithm>
#include <map>
#include <utility>

#include "crawler/cluster/cluster_coordinator_impl.h"
#include "crawler/cluster/cluster_function.h"
#include "dedup/redis_seen_set.h"

namespace urlsieve {

using cluster_internal::kAckChunk;
using cluster_internal::kMaxPartitionsPerPoll;
using cluster_internal::kMaxProbesPerPoll;
using cluster_internal::SteadyClock;
using std::chrono::milliseconds;

Result<std::vector<InboxEntry>> ClusterCoordinator::Impl::Poll(size_t max) {
  std::vector<PollAsk> asks;
  std::vector<RedisCommand> commands;
  {
    std::lock_guard<std::mutex> lock(mu_);
    URLSIEVE_RETURN_IF_ERROR(PlanPoll(max, &asks, &commands));
  }
  if (commands.empty()) return std::vector<InboxEntry>{};
  std::vector<RedisReply> replies;
  Status status = Send(commands, &replies);
  return TakePollReplies(asks, std::move(status), replies);
}

Status ClusterCoordinator::Impl::PlanPoll(size_t max, std::vector<PollAsk>* asks,
                                          std::vector<RedisCommand>* commands) {
  if (!error_.ok()) return error_;
  if (left_ || max == 0) return Status::Ok();
  const size_t unrecorded = outstanding_ - recorded_;
  const size_t total_room =
      options_.max_outstanding > unrecorded ? options_.max_outstanding - unrecorded : 0;
  const size_t budget = std::min(max, total_room);
  if (budget == 0) return Status::Ok();
  const SteadyClock::time_point now = SteadyClock::now();
  const std::vector<uint32_t> reads = ChooseReads(budget, now);
  const std::vector<uint32_t> probes = ChooseProbes(now);
  const size_t share = reads.empty() ? 0 : std::max<size_t>(1, budget / reads.size());
  for (uint32_t p : reads) {
    Partition& part = parts_[p];
    const size_t room = options_.max_outstanding_per_partition - part.unrecorded();
    const size_t n = std::min(room, share);
    if (part.claim_cursor.empty() && (part.reclaim || part.claim_check)) {
      part.claim_cursor = "0-0";  // read before its claim check: the read claims
      part.reclaim = false;
      part.claim_check = false;
    }
    part.busy = true;
    asks->push_back({p, part.epoch, part.nudges, false, 0, part.claim_cursor});
    commands->push_back(Fcall(kClusterRead, {part.lease_key, part.inbox_key},
                              {lease_value_, std::string(kClusterInboxGroup), options_.node_id,
                               std::to_string(n), part.claim_cursor}));
  }
  for (uint32_t p : probes) {
    Partition& part = parts_[p];
    part.busy = true;
    asks->push_back({p, part.epoch, part.nudges, true, part.outstanding.size(), ""});
    commands->push_back(RedisCommand{{"XLEN", part.inbox_key}, 1});
  }
  return Status::Ok();
}

bool ClusterCoordinator::Impl::Askable(const Partition& part, SteadyClock::time_point now) const {
  return part.held && !part.draining && !part.busy && now < part.valid_until &&
         part.unrecorded() < options_.max_outstanding_per_partition;
}

bool ClusterCoordinator::Impl::WantsRead(const Partition& part, size_t low_water) {
  // A hot partition with at least low_water entries in hand is read again once fewer are left:
  // its hosts have work meanwhile, and the next read brings a batch rather than an entry or two.
  return (part.hot && part.unrecorded() < low_water) || part.reclaim || !part.claim_cursor.empty();
}

std::vector<uint32_t> ClusterCoordinator::Impl::ChooseReads(size_t budget,
                                                            SteadyClock::time_point now) {
  // Reads go first to the partitions known to have entries (their last read brought some, this
  // node appended to them, or a claim is under way): they are asked at every Poll, so a busy
  // partition never waits behind the idle ones' rotation.
  // Those with entries (hot) come before those with only a claim to make.
  const uint32_t count = static_cast<uint32_t>(parts_.size());
  std::vector<uint32_t> reads;
  const size_t max_reads = std::min(budget, kMaxPartitionsPerPoll);
  for (int tier = 0; tier < 2; ++tier) {
    for (uint32_t k = 0; k < count && reads.size() < max_reads; ++k) {
      const uint32_t p = (read_rotate_ + k) % count;
      const Partition& part = parts_[p];
      if (Askable(part, now) && WantsRead(part, ReadLowWater()) && part.hot == (tier == 0)) {
        reads.push_back(p);
      }
    }
  }
  if (!reads.empty()) read_rotate_ = (reads.back() + 1) % count;
  return reads;
}

std::vector<uint32_t> ClusterCoordinator::Impl::ChooseProbes(SteadyClock::time_point now) {
  // The others, when due, are probed with XLEN (one plain command, no Function): an inbox longer
  // than what this node holds of it has something to read, and is read at the next Poll. A probe
  // that misses an entry (an Ack under way) only delays it to the next probe or sweep.
  const uint32_t count = static_cast<uint32_t>(parts_.size());
  std::vector<uint32_t> probes;
  uint32_t last = rotate_;
  for (uint32_t k = 0; k < count && probes.size() < kMaxProbesPerPoll; ++k) {
    const uint32_t p = (rotate_ + k) % count;
    Partition& part = parts_[p];
    if (!Askable(part, now) || part.hot || WantsRead(part, ReadLowWater())) continue;
    // In a sweep, or just acquired.
    if (part.swept >= sweep_ && !part.claim_check) continue;
    part.swept = sweep_;
    probes.push_back(p);
    last = p;
  }
  if (!probes.empty()) rotate_ = (last + 1) % count;
  return probes;
}

Status ClusterCoordinator::Impl::Send(std::span<const RedisCommand> commands,
                                      std::vector<RedisReply>* replies) {
  auto client = pool_.Take();
  if (!client.ok()) return client.status();
  Status status = Call(**client, commands, replies);
  pool_.Give(std::move(client).value());
  return status;
}

Result<std::vector<InboxEntry>> ClusterCoordinator::Impl::TakePollReplies(
    std::span<const PollAsk> asks, Status status, std::vector<RedisReply>& replies) {
  std::vector<InboxEntry> entries;
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < asks.size(); ++i) {
    Partition& part = parts_[asks[i].partition];
    part.busy = false;
    if (!status.ok()) {
      // The call may have run and its reply been lost: entries read by XREADGROUP would sit in
      // this node's pending list, handed out by nothing but a claim.
      if (!asks[i].probe) part.reclaim = true;
      continue;
    }
    if (replies[i].is_error()) {
      status = ReplyError(replies[i], "reading " + part.inbox_key);
      continue;
    }
    if (part.epoch != asks[i].epoch || !part.held) continue;  // stale: its entries stay pending
    if (asks[i].probe) {
      TakeProbeReply(asks[i], replies[i]);
    } else {
      TakeReadReply(asks[i], replies[i], &entries);
    }
  }
  if (!status.ok()) {
    if (status.code() == StatusCode::kUnavailable) need_beat_ = true;
    if (entries.empty()) return status;
  }
  return entries;
}

void ClusterCoordinator::Impl::TakeProbeReply(const PollAsk& ask, const RedisReply& reply) {
  Partition& part = parts_[ask.partition];
  if (part.claim_check) {
    // Just acquired: an empty inbox has no entry pending anywhere to claim (XLEN counts the
    // pending ones too, Ack deletes), so the claim is a read only where there is something.
    part.claim_check = false;
    if (reply.integer > 0) {
      part.claim_cursor = "0-0";
      MarkActive(part);
      return;
    }
  }
  if (reply.integer > static_cast<long long>(ask.known)) {
    part.hot = true;
  }
}

void ClusterCoordinator::Impl::TakeReadReply(const PollAsk& ask, RedisReply& reply,
                                             std::vector<InboxEntry>* entries) {
  if (reply.elements.size() < 2) return;
  if (reply.elements[0].str == "LOST") {
    MarkLost(ask.partition);
    return;
  }
  Partition& part = parts_[ask.partition];
  if (!ask.cursor.empty()) {
    part.claim_cursor = reply.elements[1].str;
    if (part.claim_cursor == "0-0") part.claim_cursor.clear();
  }
  size_t got = 0;
  for (size_t e = 2; e + 1 < reply.elements.size(); e += 2) {
    std::string id = reply.elements[e].str;
    if (!part.outstanding.emplace(id, false).second) continue;  // claimed while already here
    ++outstanding_;
    ++got;
    entries->push_back(InboxEntry{ask.partition, std::move(id),
                                  std::move(reply.elements[e + 1].str), part.epoch, "", ""});
  }
  if (got > 0 || !part.claim_cursor.empty()) {
    MarkActive(part);
  } else if (part.nudges == ask.nudges) {
    // Nothing new (a nudge meanwhile keeps it hot: the append may have come after the read).
    part.hot = false;
  }
}

void ClusterCoordinator::Impl::MarkActive(Partition& part) { part.hot = true; }

void ClusterCoordinator::Impl::Nudge(std::span<const uint32_t> partitions) {
  std::lock_guard<std::mutex> lock(mu_);
  for (uint32_t p : partitions) {
    if (p >= parts_.size()) continue;
    Partition& part = parts_[p];
    // Another node's: it learns of it from the list published with the next heartbeat.
    if (!part.held) appended_to_.insert(p);
    ++part.nudges;
    MarkActive(part);
  }
}

Status ClusterCoordinator::Impl::Ack(std::span<const InboxEntry> entries) {
  if (entries.empty()) return Status::Ok();
  // An acknowledged entry's page is recorded: it is acknowledged even when the lease was lost
  // meanwhile (the new owner then finds it gone rather than fetching it again).
  auto commands = AckCommands(entries);
  if (!commands.ok()) return commands.status();
  auto client = pool_.Take();
  if (!client.ok()) return client.status();
  std::vector<RedisReply> replies;
  Status status = Call(**client, *commands, &replies);
  if (status.ok()) {
    // On the replicas before it counts as done: an acknowledgement (one per checkpoint and
    // partition) that a failover forgot would hand a checkpoint's worth of pages out again.
    std::vector<std::string> keys;
    for (const RedisCommand& command : *commands) keys.push_back(command.argv[3]);
    status = WaitForReplicas(**client, keys);
  }
  pool_.Give(std::move(client).value());
  if (status.ok()) {
    for (size_t i = 0; i < replies.size(); ++i) {
      if (replies[i].is_error()) {
        status = ReplyError(replies[i], "acknowledging entries of " + (*commands)[i].argv[3]);
        break;
      }
    }
  }
  if (!status.ok()) {
    // Nothing is forgotten here: the caller retries (XACK and XDEL are idempotent).
    if (status.code() == StatusCode::kUnavailable) {
      std::lock_guard<std::mutex> lock(mu_);
      need_beat_ = true;
    }
    return status;
  }
  std::lock_guard<std::mutex> lock(mu_);
  bool drained = false;
  for (const InboxEntry& entry : entries) {
    Partition& part = parts_[entry.partition];
    auto it = part.outstanding.find(entry.id);
    if (it == part.outstanding.end()) continue;
    if (it->second) {
      --part.recorded;
      --recorded_;
    }
    part.outstanding.erase(it);
    --outstanding_;
    drained = drained || (part.draining && part.outstanding.empty());
  }
  if (drained) {
    wake_ = true;
    cv_.notify_all();
  }
  return Status::Ok();
}

// One XACK + XDEL call (and the pages' fetch records) per partition and kAckChunk entries.
Result<std::vector<RedisCommand>> ClusterCoordinator::Impl::AckCommands(
    std::span<const InboxEntry> entries) const {
  std::map<uint32_t, std::vector<const InboxEntry*>> by_partition;
  for (const InboxEntry& entry : entries) {
    if (entry.partition >= parts_.size()) {
      return Status::InvalidArgument(Where("acknowledging") + ": partition " +
                                     std::to_string(entry.partition) + " does not exist");
    }
    by_partition[entry.partition].push_back(&entry);
  }
  std::vector<RedisCommand> commands;
  for (const auto& [p, list] : by_partition) {
    for (size_t start = 0; start < list.size(); start += kAckChunk) {
      const size_t end = std::min(list.size(), start + kAckChunk);
      std::vector<std::string> args = {std::string(kClusterInboxGroup),
                                       std::to_string(end - start)};
      for (size_t i = start; i < end; ++i) args.push_back(list[i]->id);
      // The fetch records of the pages recorded, in the same call (they travel with p).
      for (size_t i = start; i < end; ++i) {
        if (list[i]->record_url.empty()) continue;
        args.push_back(list[i]->record_url);
        args.push_back(list[i]->record);
      }
      commands.push_back(
          Fcall(kClusterAck, {parts_[p].inbox_key, parts_[p].records_key}, std::move(args)));
    }
  }
  return commands;
}

void ClusterCoordinator::Impl::Recorded(std::span<const InboxEntry> entries) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const InboxEntry& entry : entries) {
    if (entry.partition >= parts_.size()) continue;
    Partition& part = parts_[entry.partition];
    // Read under an earlier tenure too (its fetch was under way when the lease lapsed): kept as
    // recorded until its Ack, so that a claim after this node takes the partition again skips it
    // rather than fetching its page twice.
    auto [it, added] = part.outstanding.try_emplace(entry.id, true);
    if (added) {
      ++outstanding_;
    } else if (it->second) {
      continue;
    }
    it->second = true;
    ++part.recorded;
    ++recorded_;
  }
}

void ClusterCoordinator::Impl::Forget(std::span<const InboxEntry> entries) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const InboxEntry& entry : entries) {
    if (entry.partition >= parts_.size()) continue;
    Partition& part = parts_[entry.partition];
    if (entry.tenure != part.epoch) continue;
    auto it = part.outstanding.find(entry.id);
    if (it == part.outstanding.end() || it->second) continue;  // a recorded entry is Ack's
    part.outstanding.erase(it);
    --outstanding_;
    // Still this node's: the entry is in its pending list, and only a claim hands it out again.
    if (part.held && !part.draining) part.reclaim = true;
  }
}

}  // namespace urlsieve
