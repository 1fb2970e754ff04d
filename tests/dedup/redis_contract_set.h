// OpenContractRedisSet: the RedisSeenSet a SeenSet contract factory (seen_set_contract.h) opens for
// a scratch state directory, on a standalone server (redis_seen_set_test.cc) or a Redis Cluster
// (cluster/redis_cluster_seen_set_test.cc). The set is named after the directory and its identity:
// a reopen of the directory finds the set again, and a test run again in the same process
// (--gtest_repeat, the same directory) gets a new one. A set the crawl would own (`saves` false)
// keeps the directory's claim log, as CrawlState opens it.
//
// Thread-safety: a test helper; called on the test's thread.
#ifndef URLSIEVE_TESTS_DEDUP_REDIS_CONTRACT_SET_H_
#define URLSIEVE_TESTS_DEDUP_REDIS_CONTRACT_SET_H_

#include <xxhash.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "dedup/redis_seen_set.h"
#include "dedup/state_dir.h"

namespace urlsieve::testing {

inline Result<std::unique_ptr<StateSeenSet>> OpenContractRedisSet(const RedisAddress& address,
                                                                  StateDir* dir, bool saves,
                                                                  const StateParameters& parameters,
                                                                  uint64_t front_cache_keys,
                                                                  uint32_t shards = 0) {
  RedisSeenSetOptions options;
  options.address = address;
  const std::string state = dir->path() + "#" + dir->identity().ToHex();
  char name[32];
  std::snprintf(name, sizeof(name), "c%016llx",
                static_cast<unsigned long long>(XXH3_64bits(state.data(), state.size())));
  options.name = name;
  options.requested = parameters;
  options.shards = shards;
  options.front_cache_keys = front_cache_keys;
  if (!saves) {
    options.claim_log = dir->identity().ToHex();
    options.committed_generation = dir->generation();
  }
  std::vector<SeenNotice> notices;
  auto set = RedisSeenSet::Open(options, &notices);
  if (!set.ok()) return set.status();
  return std::unique_ptr<StateSeenSet>(std::move(*set));
}

}  // namespace urlsieve::testing

#endif  // URLSIEVE_TESTS_DEDUP_REDIS_CONTRACT_SET_H_
