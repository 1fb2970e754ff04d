// ExpectExactlyOneFirst: the "of two pages with one fingerprint tested at once anywhere, exactly
// one is first" test of RedisContentSeenSet, on whatever deployment `options` name (a
// redis-server, a Redis Cluster). Forked processes, each with threads, test the same fingerprints
// (CountNewAcrossProcesses), every caller as a page of its own (its own id, so no refetch):
//   exact: one digest per fingerprint, no simhash: the exact index decides;
//   near:  one digest per caller, and a simhash per fingerprint a caller moves by one bit:
//          the near index decides (the callers' pages are within distance 2 of each other).
#ifndef URLSIEVE_TESTS_DEDUP_REDIS_CONTENT_FIRST_H_
#define URLSIEVE_TESTS_DEDUP_REDIS_CONTENT_FIRST_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "dedup/content/redis_content_seen_set.h"
#include "tests/dedup/forked_inserters.h"

namespace urlsieve::testing {

inline uint64_t SplitMix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

inline void ExpectExactlyOneFirst(const std::filesystem::path& dir,
                                  const RedisContentSeenSetOptions& options, bool near,
                                  int processes = 4, int threads = 3, int keys = 300) {
  std::filesystem::create_directories(dir);
  const std::vector<int> told = CountNewAcrossProcesses(
      dir, processes, threads, keys, /*max_batch=*/40, [&](int p) -> IdInserter {
        auto opened = RedisContentSeenSet::Open(options);
        if (!opened.ok()) return {};
        std::shared_ptr<RedisContentSeenSet> set = std::move(opened).value();
        return [set, p, near](const std::vector<int>& ids, std::vector<bool>* is_new) {
          is_new->assign(ids.size(), false);
          const std::string me =
              std::to_string(p) + "." +
              std::to_string(std::hash<std::thread::id>()(std::this_thread::get_id()));
          for (size_t i = 0; i < ids.size(); ++i) {
            const auto id = static_cast<uint64_t>(ids[i]);
            ContentFingerprint fp;
            if (near) {
              fp.digest = SplitMix(std::hash<std::string>()(me) ^ (id << 20));
              const uint64_t caller_bits = SplitMix(std::hash<std::string>()(me)) % 64;
              fp.simhash = SplitMix(id + 1000) ^ (uint64_t{1} << caller_bits);
            } else {
              fp.digest = SplitMix(id);
            }
            auto verdict =
                set->Test(fp, {"http://" + me + ".example/" + std::to_string(id), "data " + me});
            if (!verdict.ok()) {
              ADD_FAILURE() << verdict.status().ToString();
              return false;
            }
            if (verdict->refetch) return false;  // every caller is a page of its own
            (*is_new)[i] = verdict->kind == ContentVerdict::Kind::kFirst;
          }
          return true;
        };
      });
  ASSERT_EQ(told.size(), static_cast<size_t>(keys));
  for (int key = 0; key < keys; ++key) {
    EXPECT_EQ(told[key], 1) << "fingerprint " << key << (near ? " (near)" : " (exact)");
  }
}

}  // namespace urlsieve::testing

#endif  // URLSIEVE_TESTS_DEDUP_REDIS_CONTENT_FIRST_H_
