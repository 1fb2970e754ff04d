// ClusterForget: forgetting URLs in a crawl cluster's seen set (`urlsieve forget --cluster`;
// docs/features/cluster.md, "Forgetting"), so that the cluster takes them as new again. The set is
// routed (one shard per partition, cluster_url_router.h): each URL's key is forgotten in the shard
// of its partition, ClusterPartitionOf(its politeness key, P), as the crawl inserted it. Only a
// cluster crawled with --exact or --deletable can forget (the set says so otherwise).
//
// Thread-safety: one thread at a time.
#ifndef URLSIEVE_CRAWLER_CLUSTER_CLUSTER_FORGET_H_
#define URLSIEVE_CRAWLER_CLUSTER_CLUSTER_FORGET_H_

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "dedup/seen_filter.h"
#include "redis/redis_address.h"

namespace urlsieve {

class RedisSeenSet;
class UrlCanonicalizer;

class ClusterForget {
 public:
  // Opens the seen set of the cluster `name` at `address` (its partitions read from the cluster's
  // meta hash). `accept_loss` as for any Redis seen set (RedisSeenSetOptions).
  static Result<std::unique_ptr<ClusterForget>> Open(const RedisAddress& address,
                                                     const std::string& name, bool accept_loss,
                                                     std::vector<SeenNotice>* notices);
  ~ClusterForget();

  // As SeenFilter::ForgetBatch: each URL canonicalized as the crawl's seen stage keys it.
  Status ForgetBatch(std::span<const std::string_view> urls, std::vector<ForgetResult>* out);

 private:
  ClusterForget(std::unique_ptr<RedisSeenSet> set, std::unique_ptr<UrlCanonicalizer> keys,
                uint32_t partitions);

  std::unique_ptr<RedisSeenSet> set_;
  std::unique_ptr<UrlCanonicalizer> keys_;
  const uint32_t partitions_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CLUSTER_CLUSTER_FORGET_H_
