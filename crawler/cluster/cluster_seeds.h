// ClusterSeeds: the seeds of a crawl cluster, kept in Redis so that every node's scope knows
// them (docs/features/cluster.md, "The crawl cluster"). In the "host" and "domain" scope modes a
// link is in scope when its host (or domain) is a seed's, and any node may fetch any host's pages,
// also a node given no seeds, or other seeds than the node that queued a page. So a node adds its
// seeds here (a set, urlsieve:{NAME}:seeds, under the cluster's own hash tag) *before* it queues
// them, and a node reads the set again (Refresh) before it pushes entries it polled: every page it
// can be handed descends from a seed added before it, so its scope holds that seed by then.
//
// Thread-safety: Add and Refresh may be called from any thread (a mutex guards the client and the
// count last read); Scope::AddSeed is thread-safe.
#ifndef URLSIEVE_CRAWLER_CLUSTER_CLUSTER_SEEDS_H_
#define URLSIEVE_CRAWLER_CLUSTER_CLUSTER_SEEDS_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"
#include "redis/redis_address.h"
#include "redis/redis_connection.h"
#include "url/url_canonicalizer.h"

namespace urlsieve {

class RedisClient;
class Scope;

// "urlsieve:{NAME}:seeds".
std::string ClusterSeedsKey(std::string_view name);

class ClusterSeeds {
 public:
  // `scope` and `fetch_form` must outlive this object.
  ClusterSeeds(RedisAddress address, std::string name, Scope* scope,
               const UrlCanonicalizer* fetch_form, RedisTimeouts timeouts = {});
  ~ClusterSeeds();

  // Adds the seeds (fetch form) to the cluster's set (and to the local scope).
  Status Add(std::span<const CanonicalUrl> seeds);
  // Reads the set when it grew since the last read and adds its seeds to the scope. One SCARD
  // when nothing changed.
  Status Refresh();

 private:
  Status Connected();  // requires mu_

  const RedisAddress address_;
  const std::string key_;
  Scope* const scope_;
  const UrlCanonicalizer* const fetch_form_;
  const RedisTimeouts timeouts_;
  std::mutex mu_;
  std::unique_ptr<RedisClient> client_;  // guarded by mu_
  long long known_ = 0;                  // guarded by mu_: the set's size at the last read
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CLUSTER_CLUSTER_SEEDS_H_
