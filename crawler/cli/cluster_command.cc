// `urlsieve cluster status --cluster URL --cluster-name NAME [--json]`: the state of a crawl
// cluster (crawler/cluster/cluster_coordinator.h, ReadClusterStatus) without joining it: its nodes
// (alive or not, partitions held, pages and errors published), the partitions nobody owns, the URLs
// pending in its inboxes and in flight, and the totals. Read-only. Exit 1, with a message naming
// the server, when it does not answer or holds no such cluster.
#include <cstdio>
#include <memory>
#include <string>

#include "crawler/cli/commands.h"
#include "crawler/cli/option_flags.h"
#include "crawler/cluster/cluster_coordinator.h"
#include "redis/redis_address.h"

namespace urlsieve::cli {
namespace {

struct ClusterStatusFlags {
  std::string url;
  std::string name;
  std::string password_file;
  bool json = false;
};

int RunClusterStatus(const ClusterStatusFlags& flags) {
  Result<RedisAddress> address = RedisAddress::Parse(flags.url);
  if (!address.ok()) {
    std::fprintf(stderr, "urlsieve cluster status: %s\n", address.status().message().c_str());
    return kExitUsage;
  }
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

}  // namespace

void AddClusterCommand(CLI::App& app, int* exit_code) {
  CLI::App* cluster = app.add_subcommand("cluster", "Inspect a crawl cluster (crawl --cluster)");
  cluster->require_subcommand(1);
  auto flags = std::make_shared<ClusterStatusFlags>();
  CLI::App* status = cluster->add_subcommand(
      "status", "Nodes, partitions, pending and fetched counts and errors of a crawl cluster");
  status
      ->add_option("--cluster", flags->url,
                   "The cluster's Redis, redis://[[user]:password@]host:port[/db]")
      ->required();
  status->add_option("--cluster-name", flags->name, "The cluster's name")->required();
  AddRedisPasswordFileFlag(status, &flags->password_file);
  status->add_flag("--json", flags->json, "One JSON object instead of text");
  status->callback([flags, exit_code] { *exit_code = RunClusterStatus(*flags); });
}

}  // namespace urlsieve::cli
