#include "crawler/state/crawl_state.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <mutex>
#include <optional>
#include <random>
#include <string_view>

#include "base/sqlite_db.h"
#include "dedup/bloom_seen_set.h"
#include "dedup/redis_seen_set.h"
#include "dedup/state_dir.h"
#include "redis/redis_address.h"

namespace urlsieve {
namespace {

// urlsieve_meta rows of a crawl whose seen set is shared in Redis (crawl_state.h).
constexpr std::string_view kServerRow = "seen_redis_server";
constexpr std::string_view kNameRow = "seen_redis_name";
constexpr std::string_view kIdentityRow = "seen_redis_identity";

// ... of a node of a crawl cluster.
constexpr std::string_view kClusterServerRow = "cluster_server";
constexpr std::string_view kClusterNameRow = "cluster_name";
constexpr std::string_view kClusterIdentityRow = "cluster_identity";
constexpr std::string_view kClusterNodeRow = "cluster_node_id";

std::string DescribeCluster(const std::string& name, const std::string& server) {
  std::string text = "the crawl cluster '";
  text += name;
  text += "' at ";
  text += server;
  return text;
}

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

std::string Describe(const std::string& name, const std::string& server) {
  std::string text = "the seen set '";
  text += name;
  text += "' at ";
  text += server;
  return text;
}

}  // namespace

CrawlState::~CrawlState() = default;

Result<std::unique_ptr<CrawlState>> CrawlState::Open(const CrawlStateOptions& options) {
  const bool cluster = !options.cluster_url.empty() || !options.cluster_name.empty();
  const bool shared = !options.seen_redis_url.empty() || !options.seen_redis_name.empty();
  std::unique_ptr<RedisSeenSet> probe;
  RedisSeenSetOptions redis_options;
  if (cluster && shared) {
    return Status::InvalidArgument("--cluster and --seen-redis exclude each other");
  }
  if (shared || cluster) {
    const std::string& url = cluster ? options.cluster_url : options.seen_redis_url;
    const std::string& name = cluster ? options.cluster_name : options.seen_redis_name;
    if (url.empty() || name.empty()) {
      return Status::InvalidArgument(
          cluster ? "a crawl cluster needs both the server (--cluster) and its name "
                    "(--cluster-name)"
                  : "a shared seen set needs both the server (--seen-redis) and the set's name "
                    "(--name)");
    }
    if (options.rebuild_bloom) {
      return Status::InvalidArgument(
          "--rebuild rebuilds a local exact seen set; this crawl's seen set is in Redis");
    }
    if (options.deletable) {
      return Status::Unsupported("--deletable is for a local seen set; this crawl's is in Redis");
    }
    Result<RedisAddress> address = RedisAddress::Parse(url);
    if (!address.ok()) return address.status();
    redis_options.address = *address;
    redis_options.name = name;
    redis_options.requested = {options.capacity, options.fp_rate, options.exact,
                               options.canonicalize};
  }
  if (shared) {
    // Before anything is written, here or in Redis: the server answers, the password is right,
    // the name holds a set of ours or nothing. A set not there yet is fine (a new crawl makes it).
    RedisSeenSetOptions probe_options = redis_options;
    probe_options.read_only = true;
    probe_options.front_cache_keys = 0;
    std::vector<SeenNotice> ignored;
    Result<std::unique_ptr<RedisSeenSet>> probed = RedisSeenSet::Open(probe_options, &ignored);
    if (probed.ok()) {
      probe = std::move(*probed);
    } else if (probed.status().code() != StatusCode::kNotFound) {
      return probed.status();
    }
  }
  // A new node joins its cluster before its directory is made: a cluster that refuses it (other
  // settings, a server that does not answer) leaves nothing behind.
  std::optional<CrawlStateOptions::ClusterJoined> joined;
  std::string new_node_id;
  if (cluster && !std::filesystem::exists(std::filesystem::path(options.dir) / "state.db")) {
    if (!options.join_cluster) return Status::InvalidArgument("CrawlState: no join_cluster");
    new_node_id = options.node_id.empty() ? GenerateNodeId() : options.node_id;
    Result<CrawlStateOptions::ClusterJoined> result = options.join_cluster(new_node_id);
    if (!result.ok()) return result.status();
    joined = std::move(*result);
  }

  std::unique_ptr<CrawlState> state(new CrawlState());
  state->node_id_ = new_node_id;
  StateDir::Options dir_options;
  dir_options.path = options.dir;
  dir_options.requested = {options.capacity, options.fp_rate, options.exact, options.canonicalize};
  dir_options.requested.deletable = options.deletable && !options.exact;
  dir_options.checkpointed = true;
  std::vector<SeenNotice> dir_notices;
  auto dir = StateDir::Open(dir_options, &dir_notices);
  if (!dir.ok()) return dir.status();
  state->dir_ = std::move(*dir);
  if (!shared && !cluster) {
    state->notices_ = std::move(dir_notices);
    if (std::optional<std::string> name = state->dir_->StoredMeta(kNameRow)) {
      return Status::FailedPrecondition(
          state->dir_->DbPath() + ": this crawl's seen set is shared in Redis (" +
          Describe(*name, state->dir_->StoredMeta(kServerRow).value_or("?")) +
          "): resume it with --seen-redis and --name");
    }
    if (std::optional<std::string> name = state->dir_->StoredMeta(kClusterNameRow)) {
      const std::string server = state->dir_->StoredMeta(kClusterServerRow).value_or("?");
      return Status::FailedPrecondition(
          state->dir_->DbPath() + ": this crawl is a node of " + DescribeCluster(*name, server) +
          ": resume it with --cluster " + server + " --cluster-name " + *name);
    }
    StateSeenSetOptions set_options;
    set_options.rebuild_bloom = options.rebuild_bloom;
    set_options.saves = false;  // its checkpoints are the crawl's
    auto set = OpenStateSeenSet(state->dir_.get(), set_options, &state->notices_);
    if (!set.ok()) return set.status();
    state->seen_set_ = std::move(*set);
    state->seen_ =
        SeenFilter::Over(state->seen_set_.get(), state->dir_->parameters().AsFilterOptions());
  } else {
    // The Redis set's parameters are the ones in effect (its notices say so); the local copy in
    // state.db only records what the crawl asked for.
    for (SeenNotice& notice : dir_notices) {
      if (notice.kind != SeenNotice::Kind::kStoredParameters) {
        state->notices_.push_back(std::move(notice));
      }
    }
    if (cluster) {
      URLSIEVE_RETURN_IF_ERROR(state->CheckCluster(options, &joined));
      redis_options.new_key_stream = options.inbox;
      URLSIEVE_RETURN_IF_ERROR(state->OpenRoutedSeenSet(redis_options, *joined));
    } else {
      URLSIEVE_RETURN_IF_ERROR(state->CheckSharedSeenSet(redis_options, probe.get()));
      probe.reset();
      URLSIEVE_RETURN_IF_ERROR(state->OpenSharedSeenSet(redis_options));
    }
  }
  URLSIEVE_RETURN_IF_ERROR(state->dir_->OpenFirstTransaction());
  return state;
}

Status CrawlState::CheckCluster(const CrawlStateOptions& options,
                                std::optional<CrawlStateOptions::ClusterJoined>* joined) {
  Result<RedisAddress> address = RedisAddress::Parse(options.cluster_url);
  if (!address.ok()) return address.status();
  const std::string server = address->ToString();
  const std::string wanted = DescribeCluster(options.cluster_name, server);
  if (std::optional<std::string> name = dir_->StoredMeta(kNameRow)) {
    const std::string set_server = dir_->StoredMeta(kServerRow).value_or("?");
    return Status::FailedPrecondition(
        dir_->DbPath() + ": this crawl's seen set is " + Describe(*name, set_server) +
        ", so it cannot continue as a node of " + wanted + ": resume it with --seen-redis " +
        set_server + " --name " + *name);
  }
  const std::optional<std::string> name = dir_->StoredMeta(kClusterNameRow);
  const std::optional<std::string> recorded_server = dir_->StoredMeta(kClusterServerRow);
  const std::optional<std::string> recorded_node = dir_->StoredMeta(kClusterNodeRow);
  if (!name) {
    if (dir_->generation() > 0) {
      return Status::FailedPrecondition(
          dir_->DbPath() + ": this crawl keeps its own seen set in " + dir_->path() +
          ", so it cannot continue as a node of " + wanted +
          ": resume it without --cluster, or start the node in another --out directory");
    }
  } else {
    if (*name != options.cluster_name || recorded_server.value_or("") != server) {
      return Status::FailedPrecondition(dir_->DbPath() + ": this crawl is a node of " +
                                        DescribeCluster(*name, recorded_server.value_or("?")) +
                                        ", not of " + wanted + ": resume it with --cluster " +
                                        recorded_server.value_or("?") + " --cluster-name " + *name);
    }
    if (recorded_node && !options.node_id.empty() && *recorded_node != options.node_id) {
      return Status::FailedPrecondition(dir_->DbPath() + ": this crawl is the node '" +
                                        *recorded_node + "' of " + wanted + ", not '" +
                                        options.node_id + "': resume it with --node-id " +
                                        *recorded_node + " (or without --node-id)");
    }
  }
  if (recorded_node) {
    node_id_ = *recorded_node;
  } else if (node_id_.empty()) {
    node_id_ = options.node_id.empty() ? GenerateNodeId() : options.node_id;
  }
  if (!joined->has_value()) {
    if (!options.join_cluster) return Status::InvalidArgument("CrawlState: no join_cluster");
    Result<CrawlStateOptions::ClusterJoined> result = options.join_cluster(node_id_);
    if (!result.ok()) return result.status();
    *joined = std::move(*result);
  }
  if (std::optional<std::string> identity = dir_->StoredMeta(kClusterIdentityRow)) {
    if (*identity != (*joined)->identity) {
      return Status::FailedPrecondition(
          dir_->DbPath() + ": " + wanted + " is not the cluster this node crawled in: its " +
          "identity is " + (*joined)->identity + ", the node's was " + *identity +
          " (was it deleted and made again?): its inboxes and seen URLs are gone, so this node "
          "cannot be continued; start it in another --out directory (nothing was changed)");
    }
    return Status::Ok();
  }
  // No transaction is open yet (OpenFirstTransaction comes after): each row commits on its own,
  // before the first insert.
  URLSIEVE_RETURN_IF_ERROR(dir_->WriteMeta(kClusterServerRow, server));
  URLSIEVE_RETURN_IF_ERROR(dir_->WriteMeta(kClusterNameRow, options.cluster_name));
  URLSIEVE_RETURN_IF_ERROR(dir_->WriteMeta(kClusterNodeRow, node_id_));
  return dir_->WriteMeta(kClusterIdentityRow, (*joined)->identity);
}

Status CrawlState::OpenRoutedSeenSet(RedisSeenSetOptions redis_options,
                                     const CrawlStateOptions::ClusterJoined& joined) {
  // One shard per partition, each sharing its partition's hash tag (redis_seen_set.h).
  redis_options.routed = true;
  redis_options.shards = joined.partitions;
  Result<std::unique_ptr<RedisSeenSet>> set = RedisSeenSet::Open(redis_options, &notices_);
  if (!set.ok()) return set.status();
  const StateParameters parameters = (*set)->parameters();
  routed_ = set->get();
  seen_set_ = std::move(*set);
  seen_ = SeenFilter::Over(seen_set_.get(), parameters.AsFilterOptions());
  shared_seen_set_ = Describe(redis_options.name, redis_options.address.ToString());
  return Status::Ok();
}

Status CrawlState::CheckSharedSeenSet(const RedisSeenSetOptions& redis_options,
                                      const RedisSeenSet* existing) {
  const std::string server = redis_options.address.ToString();
  const std::string wanted = Describe(redis_options.name, server);
  const std::optional<std::string> name = dir_->StoredMeta(kNameRow);
  const std::optional<std::string> recorded_server = dir_->StoredMeta(kServerRow);
  const std::optional<std::string> identity = dir_->StoredMeta(kIdentityRow);
  if (std::optional<std::string> cluster = dir_->StoredMeta(kClusterNameRow)) {
    const std::string cluster_server = dir_->StoredMeta(kClusterServerRow).value_or("?");
    return Status::FailedPrecondition(
        dir_->DbPath() + ": this crawl is a node of " + DescribeCluster(*cluster, cluster_server) +
        ", so it cannot continue on " + wanted + ": resume it with --cluster " + cluster_server +
        " --cluster-name " + *cluster);
  }
  if (!name) {
    // A crawl that committed a checkpoint with its own seen set has its keys there.
    if (dir_->generation() > 0) {
      return Status::FailedPrecondition(
          dir_->DbPath() + ": this crawl keeps its own seen set in " + dir_->path() +
          ", so it cannot continue on " + wanted +
          ": resume it without --seen-redis, or start the shared crawl in another --out directory");
    }
    return Status::Ok();
  }
  const std::string recorded = Describe(*name, recorded_server.value_or("?"));
  if (*name != redis_options.name || recorded_server.value_or("") != server) {
    return Status::FailedPrecondition(dir_->DbPath() + ": this crawl's seen set is " + recorded +
                                      ", not " + wanted + ": resume it with --seen-redis " +
                                      recorded_server.value_or("?") + " --name " + *name);
  }
  if (identity) {
    // A set deleted since (and perhaps made again by another crawl) has forgotten the crawl's
    // URLs: going on would fetch them all again, or lose the claims of this crawl.
    if (existing == nullptr) {
      return Status::FailedPrecondition(
          dir_->DbPath() + ": this crawl's seen set, " + recorded +
          ", no longer exists in Redis (identity " + *identity +
          "): the URLs it had seen are gone, so the crawl cannot be continued (nothing was "
          "changed)");
    }
    if (existing->identity().ToHex() != *identity) {
      return Status::FailedPrecondition(
          dir_->DbPath() + ": " + recorded + " is not the set this crawl used: its identity is " +
          existing->identity().ToHex() + ", the crawl's was " + *identity +
          " (was it deleted and made again?); nothing was changed");
    }
  }
  return Status::Ok();
}

Status CrawlState::OpenSharedSeenSet(const RedisSeenSetOptions& options) {
  RedisSeenSetOptions redis_options = options;
  const std::string server = redis_options.address.ToString();
  // The claim log is this state's: the keys told new after its last committed checkpoint come
  // back in UncommittedClaims (seen_set.h).
  redis_options.claim_log = dir_->identity().ToHex();
  redis_options.committed_generation = dir_->generation();
  Result<std::unique_ptr<RedisSeenSet>> set = RedisSeenSet::Open(redis_options, &notices_);
  if (!set.ok()) return set.status();
  const std::string identity = (*set)->identity().ToHex();
  if (std::optional<std::string> recorded = dir_->StoredMeta(kIdentityRow)) {
    if (*recorded != identity) {
      return Status::FailedPrecondition(
          dir_->DbPath() + ": " + Describe(redis_options.name, server) +
          " changed identity while it was opened (" + *recorded + ", now " + identity + ")");
    }
  } else {
    // No transaction is open yet (OpenFirstTransaction comes after): each row commits on its own,
    // before the first insert, so a crash can never leave claims the state does not point to.
    URLSIEVE_RETURN_IF_ERROR(dir_->WriteMeta(kServerRow, server));
    URLSIEVE_RETURN_IF_ERROR(dir_->WriteMeta(kNameRow, redis_options.name));
    URLSIEVE_RETURN_IF_ERROR(dir_->WriteMeta(kIdentityRow, identity));
  }
  Result<std::vector<std::string>> claims = (*set)->UncommittedClaims();
  if (!claims.ok()) return claims.status();
  uncommitted_claims_ = std::move(*claims);
  const StateParameters parameters = (*set)->parameters();
  seen_set_ = std::move(*set);
  seen_ = SeenFilter::Over(seen_set_.get(), parameters.AsFilterOptions());
  shared_seen_set_ = Describe(redis_options.name, server);
  return Status::Ok();
}

uint64_t CrawlState::generation() const { return dir_->generation(); }

Status CrawlState::Restore(const std::function<Status(SqliteDb&)>& read_parts) {
  return read_parts(dir_->db());
}

Status CrawlState::Checkpoint(const std::function<Status(SqliteDb&)>& write_parts) {
  std::unique_lock<std::shared_mutex> gate(gate_);
  return dir_->Checkpoint(
      [&](SqliteDb& db, uint64_t generation) -> Status {
        URLSIEVE_RETURN_IF_ERROR(write_parts(db));
        return seen_set_->PrepareCheckpoint(db, generation);
      },
      [&](uint64_t generation) -> Status {
        Status status = seen_set_->CheckpointCommitted(generation);
        // A shared set trims its claim log here. When Redis does not answer, the claims stay
        // until a later checkpoint trims them; they are of committed generations, which the
        // next open does not hand back, so nothing is queued twice and the crawl goes on.
        if (status.code() == StatusCode::kUnavailable) return Status::Ok();
        return status;
      });
}

}  // namespace urlsieve
