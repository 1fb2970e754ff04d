// Whether a crawl cluster's crawl is over (crawler/cluster/cluster_coordinator.h, "The end"):
// seeded, every partition's records scanned for the latest re-crawl round, and every inbox empty
// on two scans with no entry added in between. A cheap scan (XLEN of
// every inbox) comes first and answers "not over" while the crawl runs.
#include <utility>

#include "crawler/cluster/cluster_coordinator_impl.h"
#include "crawler/cluster/cluster_function.h"
#include "dedup/redis_seen_set.h"

namespace urlsieve {

Status ClusterCoordinator::Impl::MarkSeeded() {
  // "seeded" lost by a failover would keep the crawl from ever ending (WriteMeta waits for the
  // replicas).
  Result<RedisReply> reply =
      WriteMeta(Fcall(kClusterSeed, {meta_key_}, {identity_}), "marking the cluster seeded");
  if (!reply.ok()) return reply.status();
  std::lock_guard<std::mutex> lock(mu_);
  totals_.seeded = true;
  return Status::Ok();
}

Result<bool> ClusterCoordinator::Impl::Finished() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!error_.ok()) return error_;
    if (outstanding_ > 0) return false;  // entries in hand here are still in their inboxes
    // Scanned only once the cluster is seeded and the last heartbeat saw every live node idle
    // and nothing appended since the one before: the scans decide, this spares them while the
    // crawl runs.
    if (!cluster_quiet_ || !totals_.seeded) return false;
  }
  // Scan 0 is cheap (XLEN: one command per partition) and ends the check while the crawl runs;
  // scans 1 and 2 (the probe Function: lengths and entries-added counters) decide the end. Each
  // starts with the meta hash's identity and seeded flag.
  std::vector<RedisCommand> lengths;
  std::vector<RedisCommand> probes;
  lengths.push_back(RedisCommand{{"HMGET", meta_key_, "identity", "seeded", "recrawl_round"}, 1});
  probes.push_back(lengths.back());
  for (const Partition& part : parts_) {
    lengths.push_back(RedisCommand{{"XLEN", part.inbox_key}, 1});
    probes.push_back(Fcall(kClusterProbe, {part.inbox_key, part.recrawl_key},
                           {std::string(kClusterInboxGroup)}));
  }
  auto client = pool_.Take();
  if (!client.ok()) return client.status();
  std::unique_ptr<RedisClient> held = std::move(client).value();
  std::vector<long long> added(parts_.size(), -1);
  Result<bool> result = true;
  for (int scan = 0; scan < 3 && result.ok() && *result; ++scan) {
    std::vector<RedisReply> replies;
    Status status = Call(*held, scan == 0 ? lengths : probes, &replies);
    if (!status.ok()) {
      result = status;
      break;
    }
    result = JudgeEndScan(scan, replies, &added);
  }
  pool_.Give(std::move(held));
  return result;
}

Result<bool> ClusterCoordinator::Impl::JudgeEndScan(int scan,
                                                    const std::vector<RedisReply>& replies,
                                                    std::vector<long long>* added) {
  const RedisReply& meta = replies[0];
  if (meta.is_error()) return ReplyError(meta, "reading the cluster's meta hash");
  if (meta.elements.size() < 3 || meta.elements[0].str != identity_) {
    Status lost = MetaLost(meta);
    std::lock_guard<std::mutex> lock(mu_);
    Fail(lost);
    return lost;
  }
  if (meta.elements[1].str != "1") return false;  // not seeded yet
  // A re-crawl round is over once every partition's records were scanned for it.
  const long long round = std::atoll(meta.elements[2].str.c_str());
  for (size_t i = 0; i < parts_.size(); ++i) {
    const RedisReply& reply = replies[i + 1];
    if (reply.is_error()) return ReplyError(reply, "probing " + parts_[i].inbox_key);
    if (scan == 0) {
      if (reply.integer != 0) return false;
      continue;
    }
    // Empty, and (on the last scan) nothing added since the previous one.
    if (reply.elements.size() < 4 || reply.elements[0].integer != 0) return false;
    if (reply.elements[3].integer < round) return false;
    if (scan == 2 && reply.elements[1].integer != (*added)[i]) return false;
    (*added)[i] = reply.elements[1].integer;
  }
  return true;
}

// The meta hash is gone, or is another cluster's (created since under the same name).
Status ClusterCoordinator::Impl::MetaLost(const RedisReply& meta) const {
  std::string detail = meta_key_;
  if (meta.elements.empty() || meta.elements[0].type == RedisReply::Type::kNil) {
    detail += " is missing";
  } else {
    detail += " is of cluster ";
    detail += meta.elements[0].str;
  }
  return StateLost(detail);
}

}  // namespace urlsieve
