// What a node publishes with its heartbeat (its counters) and what it knows of the whole cluster
// (the nodes' counters summed; the inbox lengths, probed only while someone asks for the totals).
#include <algorithm>

#include "crawler/cluster/cluster_coordinator_impl.h"
#include "crawler/cluster/cluster_function.h"
#include "dedup/redis_seen_set.h"

namespace urlsieve {

void ClusterCoordinator::Impl::Publish(const NodeCounters& counters) {
  std::lock_guard<std::mutex> lock(mu_);
  published_ = counters;
}

ClusterStatus ClusterCoordinator::Impl::Totals() const {
  std::lock_guard<std::mutex> lock(mu_);
  totals_asked_ = true;
  return totals_;
}

void ClusterCoordinator::Impl::RecordHeartbeat(Heartbeat& heartbeat) {
  totals_.seeded = heartbeat.seeded;
  // Rounds only grow: a beat sent before this node began a round may be answered after.
  if (heartbeat.recrawl_round >= recrawl_round_) {
    recrawl_round_ = heartbeat.recrawl_round;
    recrawl_revisit_s_ = heartbeat.recrawl_revisit_s;
  }
  totals_.pages = heartbeat.pages;
  totals_.errors = heartbeat.errors;
  CountOwnPartitions(heartbeat.nodes);
  totals_.nodes = std::move(heartbeat.nodes);
}

// This node's entry among `nodes` gets the number of leases it holds now.
void ClusterCoordinator::Impl::CountOwnPartitions(std::vector<ClusterNodeStatus>& nodes) const {
  uint32_t held = 0;
  for (const Partition& part : parts_) held += part.held ? 1 : 0;
  for (ClusterNodeStatus& node : nodes) {
    if (node.id == options_.node_id) node.partitions = held;
  }
}

Status ClusterCoordinator::Impl::ProbeTotals(RedisClient& client) {
  std::vector<RedisCommand> commands;
  commands.reserve(parts_.size());
  for (const Partition& part : parts_) {
    commands.push_back(Fcall(kClusterProbe, {part.inbox_key, part.recrawl_key},
                             {std::string(kClusterInboxGroup)}));
  }
  std::vector<RedisReply> replies;
  URLSIEVE_RETURN_IF_ERROR(Call(client, commands, &replies));
  uint64_t pending = 0;
  uint64_t in_flight = 0;
  for (size_t i = 0; i < replies.size(); ++i) {
    if (replies[i].is_error()) return ReplyError(replies[i], "probing " + parts_[i].inbox_key);
    if (replies[i].elements.size() < 3) continue;
    pending += static_cast<uint64_t>(std::max(0LL, replies[i].elements[0].integer));
    in_flight += static_cast<uint64_t>(std::max(0LL, replies[i].elements[2].integer));
  }
  std::lock_guard<std::mutex> lock(mu_);
  totals_.pending = pending;
  totals_.in_flight = in_flight;
  totals_.unowned_partitions = 0;  // not known without reading every lease (ReadClusterStatus)
  CountOwnPartitions(totals_.nodes);
  return Status::Ok();
}

}  // namespace urlsieve
