#include "crawler/cluster/cluster_seen_set_source.h"

#include <unistd.h>

#include <cstdio>
#include <random>
#include <utility>

#include "crawler/state/recorded_seen_set.h"
#include "dedup/state_dir.h"

namespace urlsieve {
namespace {

// The host name (its characters outside [A-Za-z0-9_.-] made '-', at most 50 of them) and 6
// random hex digits: unique enough for the nodes of one cluster, and readable in its status.
std::string GenerateNodeId() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') std::snprintf(host, 5, "node");
  std::string id;
  for (const char* c = host; *c != '\0' && id.size() < 50; ++c) {
    const bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                    (*c >= '0' && *c <= '9') || *c == '_' || *c == '.' || *c == '-';
    id += ok ? *c : '-';
  }
  std::random_device random;
  char suffix[8];
  std::snprintf(suffix, sizeof(suffix), "-%06x", static_cast<unsigned>(random() & 0xffffff));
  id += suffix;
  return id;
}

}  // namespace

ClusterSeenSetSource::ClusterSeenSetSource(RedisSeenSetOptions options, std::string node_id,
                                           Join join)
    : options_(std::move(options)),
      asked_node_id_(std::move(node_id)),
      join_(std::move(join)),
      server_(options_.address.ToString()) {}

ClusterSeenSetSource::~ClusterSeenSetSource() = default;

std::string ClusterSeenSetSource::AskedOrGenerated() const {
  return asked_node_id_.empty() ? GenerateNodeId() : asked_node_id_;
}

Status ClusterSeenSetSource::BeforeOpen(bool state_exists) {
  // A new node joins its cluster before its directory is made.
  if (state_exists) return Status::Ok();
  node_id_ = AskedOrGenerated();
  Result<Joined> joined = join_(node_id_);
  if (!joined.ok()) return joined.status();
  joined_ = std::move(*joined);
  return Status::Ok();
}

Status ClusterSeenSetSource::CheckRecorded(const StateDir& dir, const RecordedSeenSet& recorded) {
  const std::string wanted =
      RecordedSeenSet::Describe(RecordedSeenSet::Kind::kCluster, options_.name, server_);
  URLSIEVE_RETURN_IF_ERROR(
      CheckRecordedKind(dir, recorded, RecordedSeenSet::Kind::kCluster, wanted));
  if (recorded.kind == RecordedSeenSet::Kind::kCluster) {
    if (recorded.name != options_.name || recorded.server != server_) {
      return Status::FailedPrecondition(dir.DbPath() + ": this crawl is a node of " +
                                        recorded.Describe() + ", not of " + wanted +
                                        ": resume it with " + recorded.ResumeFlags());
    }
    if (!recorded.node_id.empty() && !asked_node_id_.empty() &&
        recorded.node_id != asked_node_id_) {
      return Status::FailedPrecondition(dir.DbPath() + ": this crawl is the node '" +
                                        recorded.node_id + "' of " + wanted + ", not '" +
                                        asked_node_id_ + "': resume it with --node-id " +
                                        recorded.node_id + " (or without --node-id)");
    }
  }
  if (!recorded.node_id.empty()) {
    node_id_ = recorded.node_id;
  } else if (node_id_.empty()) {
    node_id_ = AskedOrGenerated();
  }
  return Status::Ok();
}

Result<OpenedSeenSet> ClusterSeenSetSource::Open(StateDir& dir, std::vector<SeenNotice>* notices) {
  const RecordedSeenSet recorded = RecordedSeenSet::Read(dir);
  URLSIEVE_RETURN_IF_ERROR(CheckRecorded(dir, recorded));
  if (!joined_) {
    Result<Joined> joined = join_(node_id_);
    if (!joined.ok()) return joined.status();
    joined_ = std::move(*joined);
  }
  if (!recorded.identity.empty() && recorded.identity != joined_->identity) {
    return Status::FailedPrecondition(
        dir.DbPath() + ": " + recorded.Describe() + " is not the cluster this node crawled in: " +
        "its identity is " + joined_->identity + ", the node's was " + recorded.identity +
        " (was it deleted and made again?): its inboxes and seen URLs are gone, so this node "
        "cannot be continued; start it in another --out directory (nothing was changed)");
  }
  URLSIEVE_RETURN_IF_ERROR(RecordedSeenSet::Write(
      dir, {RecordedSeenSet::Kind::kCluster, server_, options_.name, joined_->identity, node_id_}));
  // One shard per partition, each sharing its partition's hash tag (redis_seen_set.h).
  RedisSeenSetOptions options = options_;
  options.routed = true;
  options.shards = joined_->partitions;
  Result<std::unique_ptr<RedisSeenSet>> set = RedisSeenSet::Open(options, notices);
  if (!set.ok()) return set.status();
  routed_ = set->get();
  OpenedSeenSet opened;
  opened.parameters = (*set)->parameters();
  opened.set = std::move(*set);
  opened.shared = RecordedSeenSet::Describe(RecordedSeenSet::Kind::kShared, options_.name, server_);
  return opened;
}

}  // namespace urlsieve
