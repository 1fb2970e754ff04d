#include "crawler/state/recorded_seen_set.h"

#include <optional>
#include <string_view>

#include "dedup/state_dir.h"

namespace urlsieve {
namespace {

// The urlsieve_meta rows of each kind: server, name, identity, node id (cluster only).
struct Rows {
  std::string_view server, name, identity, node_id;
};
constexpr Rows kSharedRows = {"seen_redis_server", "seen_redis_name", "seen_redis_identity", ""};
constexpr Rows kClusterRows = {"cluster_server", "cluster_name", "cluster_identity",
                               "cluster_node_id"};

const Rows& RowsOf(RecordedSeenSet::Kind kind) {
  return kind == RecordedSeenSet::Kind::kCluster ? kClusterRows : kSharedRows;
}

Status WriteRow(StateDir& dir, std::string_view row, const std::string& value) {
  if (row.empty() || value.empty() || dir.StoredMeta(row) == value) return Status::Ok();
  return dir.WriteMeta(row, value);
}

}  // namespace

RecordedSeenSet RecordedSeenSet::Read(const StateDir& dir) {
  RecordedSeenSet recorded;
  for (Kind kind : {Kind::kShared, Kind::kCluster}) {
    const Rows& rows = RowsOf(kind);
    std::optional<std::string> name = dir.StoredMeta(rows.name);
    if (!name) continue;
    recorded.kind = kind;
    recorded.name = *name;
    recorded.server = dir.StoredMeta(rows.server).value_or("?");
    recorded.identity = dir.StoredMeta(rows.identity).value_or("");
    if (!rows.node_id.empty()) recorded.node_id = dir.StoredMeta(rows.node_id).value_or("");
    break;
  }
  return recorded;
}

Status RecordedSeenSet::Write(StateDir& dir, const RecordedSeenSet& recorded) {
  const Rows& rows = RowsOf(recorded.kind);
  URLSIEVE_RETURN_IF_ERROR(WriteRow(dir, rows.server, recorded.server));
  URLSIEVE_RETURN_IF_ERROR(WriteRow(dir, rows.name, recorded.name));
  URLSIEVE_RETURN_IF_ERROR(WriteRow(dir, rows.node_id, recorded.node_id));
  return WriteRow(dir, rows.identity, recorded.identity);
}

std::string RecordedSeenSet::Describe(Kind kind, const std::string& name,
                                      const std::string& server) {
  std::string text = kind == Kind::kCluster ? "the crawl cluster '" : "the seen set '";
  text += name;
  text += "' at ";
  text += server;
  return text;
}

std::string RecordedSeenSet::ResumeFlags() const {
  std::string flags = kind == Kind::kCluster ? "--cluster " : "--seen-redis ";
  flags += server;
  flags += kind == Kind::kCluster ? " --cluster-name " : " --name ";
  flags += name;
  return flags;
}

Status CheckRecordedKind(const StateDir& dir, const RecordedSeenSet& recorded,
                         RecordedSeenSet::Kind wanted, const std::string& wanted_text) {
  using Kind = RecordedSeenSet::Kind;
  if (recorded.kind == wanted) return Status::Ok();
  std::string going_on;
  if (wanted != Kind::kOwn) {
    going_on = wanted == Kind::kCluster ? ", so it cannot continue as a node of "
                                        : ", so it cannot continue on ";
    going_on += wanted_text;
  }
  if (recorded.kind == Kind::kOwn) {
    // A crawl that committed a checkpoint with its own seen set has its keys there; one that did
    // not has nothing to lose.
    if (dir.generation() == 0) return Status::Ok();
    std::string message = dir.DbPath();
    message += ": this crawl keeps its own seen set in ";
    message += dir.path();
    message += going_on;
    message += wanted == Kind::kCluster ? ": resume it without --cluster, or start the node"
                                        : ": resume it without --seen-redis, or start the shared "
                                          "crawl";
    message += " in another --out directory";
    return Status::FailedPrecondition(message);
  }
  std::string message = dir.DbPath();
  if (recorded.kind == Kind::kCluster) {
    message += ": this crawl is a node of ";
    message += recorded.Describe();
  } else {
    message += ": this crawl's seen set is shared in Redis (";
    message += recorded.Describe();
    message += ")";
  }
  message += going_on;
  message += ": resume it with ";
  message += recorded.ResumeFlags();
  return Status::FailedPrecondition(message);
}

}  // namespace urlsieve
