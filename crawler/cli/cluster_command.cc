// `urlsieve cluster status --cluster URL --cluster-name NAME [--json]`: the state of a crawl
// cluster (crawler/cluster/cluster_coordinator.h, ReadClusterStatus) without joining it: its nodes
// (alive or not, partitions held, pages and errors published), the partitions nobody owns, the URLs
// pending in its inboxes and in flight, and the totals. Read-only. Exit 1, with a message naming
// the server, when it does not answer or holds no such cluster.
// `urlsieve cluster delete --cluster URL --cluster-name NAME`: every key of a cluster none of whose
// nodes is alive (crawler/cluster/cluster_delete.h).
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "crawler/cli/commands.h"
#include "crawler/cli/option_flags.h"
#include "crawler/cluster/cluster_coordinator.h"
#include "crawler/cluster/cluster_delete.h"
#include "redis/redis_address.h"

namespace urlsieve::cli {
namespace {

// The flags of `cluster status` and `cluster delete` (json: status only).
struct ClusterStatusFlags {
  std::string url;
  std::string name;
  std::string password_file;
  bool json = false;
};

// The flags every cluster subcommand takes: the server, the name, the password file.
void AddClusterFlags(CLI::App* cmd, ClusterStatusFlags* flags) {
  cmd->add_option("--cluster", flags->url,
                  "The cluster's Redis, redis://[[user]:password@]host:port[/db]")
      ->required();
  cmd->add_option("--cluster-name", flags->name, "The cluster's name")->required();
  AddRedisPasswordFileFlag(cmd, &flags->password_file);
}

// The cluster's address, or a usage error said on stderr as `command`.
std::optional<RedisAddress> ClusterAddress(const ClusterStatusFlags& flags, const char* command) {
  Result<RedisAddress> address = RedisAddress::Parse(flags.url);
  if (address.ok()) return *address;
  std::fprintf(stderr, "urlsieve cluster %s: %s\n", command, address.status().message().c_str());
  return std::nullopt;
}

int RunClusterStatus(const ClusterStatusFlags& flags) {
  std::optional<RedisAddress> address = ClusterAddress(flags, "status");
  if (!address) return kExitUsage;
  Result<ClusterStatus> status = ReadClusterStatus(*address, flags.name);
  if (!status.ok()) {
    std::fprintf(stderr, "urlsieve cluster status: %s\n", status.status().message().c_str());
    return kExitFailure;
  }
  const std::string text = flags.json ? status->ToJson() : status->ToText();
  std::fputs(text.c_str(), stdout);
  if (text.empty() || text.back() != '\n') std::fputc('\n', stdout);
  return kExitOk;
}

int RunClusterDelete(const ClusterStatusFlags& flags) {
  std::optional<RedisAddress> address = ClusterAddress(flags, "delete");
  if (!address) return kExitUsage;
  Result<uint64_t> deleted = DeleteCluster(*address, flags.name);
  if (!deleted.ok()) {
    std::fprintf(stderr, "urlsieve cluster delete: %s\n", deleted.status().message().c_str());
    return kExitFailure;
  }
  std::fprintf(
      stderr, "urlsieve cluster delete: deleted the crawl cluster '%s' at %s (%llu keys)\n",
      flags.name.c_str(), address->ToString().c_str(), static_cast<unsigned long long>(*deleted));
  return kExitOk;
}

}  // namespace

void AddClusterCommand(CLI::App& app, int* exit_code) {
  CLI::App* cluster =
      app.add_subcommand("cluster", "Inspect or delete a crawl cluster (crawl --cluster)");
  cluster->require_subcommand(1);
  auto flags = std::make_shared<ClusterStatusFlags>();
  CLI::App* status = cluster->add_subcommand(
      "status", "Nodes, partitions, pending and fetched counts and errors of a crawl cluster");
  AddClusterFlags(status, flags.get());
  status->add_flag("--json", flags->json, "One JSON object instead of text");
  status->callback([flags, exit_code] { *exit_code = RunClusterStatus(*flags); });

  auto delete_flags = std::make_shared<ClusterStatusFlags>();
  CLI::App* remove = cluster->add_subcommand(
      "delete",
      "Delete every Redis key of a crawl cluster none of whose nodes is alive (its seen set, "
      "inboxes, fetch records, leases, registry)");
  AddClusterFlags(remove, delete_flags.get());
  remove->callback([delete_flags, exit_code] { *exit_code = RunClusterDelete(*delete_flags); });
}

}  // namespace urlsieve::cli
