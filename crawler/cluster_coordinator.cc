#include "crawler/cluster_coordinator.h"

// TODO(coord): the implementation. A stub so that main builds.

namespace urlsieve {

uint32_t ClusterPartitionOf(std::string_view, uint32_t) { return 0; }

std::string ClusterStatus::ToJson() const { return "{}"; }
std::string ClusterStatus::ToText() const { return ""; }

Result<ClusterStatus> ReadClusterStatus(const RedisAddress&, std::string_view,
                                        const RedisTimeouts&) {
  return Status::Unsupported("crawl clusters are not built yet");
}

class ClusterCoordinator::Impl {};

Result<std::unique_ptr<ClusterCoordinator>> ClusterCoordinator::Join(const ClusterOptions&,
                                                                     std::vector<std::string>*) {
  return Status::Unsupported("crawl clusters are not built yet");
}

ClusterCoordinator::ClusterCoordinator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ClusterCoordinator::~ClusterCoordinator() = default;

}  // namespace urlsieve
