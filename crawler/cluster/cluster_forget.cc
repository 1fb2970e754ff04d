#include "crawler/cluster/cluster_forget.h"

#include <memory>
#include <utility>

#include "crawler/cluster/cluster_coordinator.h"
#include "crawler/cluster/cluster_keys.h"
#include "dedup/redis_seen_set.h"
#include "dedup/seen_set.h"
#include "frontier/frontier_options.h"
#include "frontier/politeness_key.h"
#include "url/url_canonicalizer.h"
#include "url/url_parts.h"

namespace urlsieve {

Result<std::unique_ptr<ClusterForget>> ClusterForget::Open(const RedisAddress& address,
                                                           const std::string& name,
                                                           bool accept_loss,
                                                           std::vector<SeenNotice>* notices) {
  Result<ClusterStatus> cluster = ReadClusterStatus(address, name);
  if (!cluster.ok()) return cluster.status();
  RedisSeenSetOptions options;
  options.address = address;
  options.name = name;
  options.routed = true;
  options.shards = cluster->partitions;
  options.new_key_stream = {std::string(kClusterInboxSuffix), std::string(kClusterInboxGroup)};
  options.accept_loss = accept_loss;
  Result<std::unique_ptr<RedisSeenSet>> set = RedisSeenSet::Open(options, notices);
  if (!set.ok()) return set.status();
  // The crawl's key: its fetch form (or, under opt-in rules, the set's canonical form).
  auto keys = std::make_unique<UrlCanonicalizer>((*set)->parameters().canonicalize);
  return std::unique_ptr<ClusterForget>(
      new ClusterForget(std::move(*set), std::move(keys), cluster->partitions));
}

ClusterForget::ClusterForget(std::unique_ptr<RedisSeenSet> set,
                             std::unique_ptr<UrlCanonicalizer> keys, uint32_t partitions)
    : set_(std::move(set)), keys_(std::move(keys)), partitions_(partitions) {}

ClusterForget::~ClusterForget() = default;

Status ClusterForget::ForgetBatch(std::span<const std::string_view> urls,
                                  std::vector<ForgetResult>* out) {
  out->assign(urls.size(), ForgetResult{});
  std::vector<CanonicalUrl> parsed;
  std::vector<size_t> which;
  for (size_t i = 0; i < urls.size(); ++i) {
    Result<CanonicalUrl> url = keys_->Canonicalize(urls[i]);
    if (!url.ok()) {
      (*out)[i] = {ForgetOutcome::kInvalid, url.status()};
      continue;
    }
    parsed.push_back(std::move(*url));
    which.push_back(i);
  }
  const FrontierOptions politeness;  // a cluster's politeness key is the origin (its settings)
  std::vector<uint32_t> shards;
  std::vector<std::string_view> keys;
  std::vector<KeyHash> hashes;
  for (const CanonicalUrl& url : parsed) {
    shards.push_back(ClusterPartitionOf(PolitenessKey(politeness, PartsOf(url)), partitions_));
    keys.push_back(url.key());
    hashes.push_back(SeenSet::Hash(url.key()));
  }
  std::unique_ptr<bool[]> forgotten(new bool[keys.size()]());
  URLSIEVE_RETURN_IF_ERROR(
      set_->ForgetRouted(shards, keys, hashes, std::span<bool>(forgotten.get(), keys.size())));
  for (size_t j = 0; j < which.size(); ++j) {
    (*out)[which[j]].outcome = forgotten[j] ? ForgetOutcome::kForgotten : ForgetOutcome::kNotThere;
  }
  return Status::Ok();
}

}  // namespace urlsieve
