// Re-crawl rounds of a crawl cluster (crawler/cluster/cluster_coordinator.h, "Fetch records and
// re-crawl"): BeginRecrawl starts one; the heartbeat thread scans the records of the partitions
// this node holds, a step of each per round of the thread, until each is through.
#include <chrono>
#include <utility>

#include "crawler/cluster/cluster_coordinator_impl.h"
#include "crawler/cluster/cluster_function.h"
#include "dedup/redis_seen_set.h"

namespace urlsieve {
namespace {

// Records an HSCAN step asks for: a Function call stays well under a millisecond of the server.
constexpr int kScanCount = 256;
constexpr size_t kMaxScansPerTick = 64;

}  // namespace

Status ClusterCoordinator::Impl::BeginRecrawl(std::chrono::seconds revisit_after) {
  // A round a failover forgot would be numbered again by the next one, whose scans the
  // partitions would then take as done (WriteMeta waits for the replicas).
  Result<RedisReply> reply = WriteMeta(
      Fcall(kClusterRecrawl, {meta_key_}, {identity_, std::to_string(revisit_after.count())}),
      "starting a re-crawl round");
  if (!reply.ok()) return reply.status();
  std::lock_guard<std::mutex> lock(mu_);
  // Scanned from now on, not only after the next heartbeat.
  recrawl_round_ = static_cast<uint64_t>(reply->integer);
  recrawl_revisit_s_ = revisit_after.count();
  return Status::Ok();
}

bool ClusterCoordinator::Impl::Scanning() const {
  for (const Partition& part : parts_) {
    if (part.held && !part.draining && part.scanned_round < recrawl_round_) return true;
  }
  return false;
}

Status ClusterCoordinator::Impl::ScanForRecrawl(RedisClient& client) {
  std::vector<uint32_t> which;
  std::vector<RedisCommand> commands;
  uint64_t round = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    round = recrawl_round_;
    const SteadyClock::time_point now = SteadyClock::now();
    const int64_t unix_now = std::chrono::duration_cast<std::chrono::seconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
    for (uint32_t p = 0; p < parts_.size() && which.size() < kMaxScansPerTick; ++p) {
      Partition& part = parts_[p];
      if (!part.held || part.draining || now >= part.valid_until || part.scanned_round >= round) {
        continue;
      }
      which.push_back(p);
      commands.push_back(Fcall(kClusterRescan,
                               {part.lease_key, part.inbox_key, part.records_key, part.recrawl_key},
                               {lease_value_, std::to_string(round), std::to_string(unix_now),
                                std::to_string(recrawl_revisit_s_), std::to_string(kScanCount),
                                part.scan_cursor.empty() ? std::string("0") : part.scan_cursor}));
    }
  }
  if (commands.empty()) return Status::Ok();
  std::vector<RedisReply> replies;
  URLSIEVE_RETURN_IF_ERROR(Call(client, commands, &replies));
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < which.size(); ++i) {
    const RedisReply& reply = replies[i];
    if (reply.is_error()) {
      return ReplyError(reply, "scanning " + parts_[which[i]].records_key + " for a re-crawl");
    }
    if (reply.elements.size() < 2) continue;
    Partition& part = parts_[which[i]];
    const std::string& cursor = reply.elements[0].str;
    if (cursor == "LOST") continue;  // the lease handling sees it too; the next owner scans
    if (cursor == "DONE") {
      part.scanned_round = round;
      part.scan_cursor.clear();
    } else {
      part.scan_cursor = cursor;
    }
    if (reply.elements[1].integer > 0) MarkActive(part);  // entries to read
  }
  return Status::Ok();
}

}  // namespace urlsieve
