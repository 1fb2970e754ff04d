// ContentSeenFilter: the content-seen test for embedders, as SeenFilter is the URL-seen test
// (docs/features/content-seen.md, "For embedders"). It opens a ContentSeenSet from plain options —
// in this process (LocalContentSeenSet without a database: every copy in memory) or shared in
// Redis (RedisContentSeenSet, by URL and name) — and guards it against use after fork(). The C
// API (dedup/urlsieve.h, urlsieve_content_*) and the Python module (urlsieve.ContentSeenSet) are
// thin layers over it.
//
// Thread-safety: every method may be called concurrently (the set's guarantee). A filter opened
// before a fork() is the parent's: in the child every call fails with kFailedPrecondition, and
// destroying it there closes nothing (the Redis connections stay the parent's).
#ifndef URLSIEVE_DEDUP_CONTENT_SEEN_FILTER_H_
#define URLSIEVE_DEDUP_CONTENT_SEEN_FILTER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "dedup/content/content_seen_set.h"

namespace urlsieve {

struct ContentSeenFilterOptions {
  int max_distance = 3;  // k, 0 .. 7: a near copy is within k bits of a first's SimHash
  bool near = true;      // false: only the exact test (simhashes are ignored)
  // Both or neither: a set shared in Redis by every process that opens this name on this server
  // (redis://[[user]:password@]host:port[/db]; an address without a password takes
  // URLSIEVE_REDIS_PASSWORD or REDISCLI_AUTH from the environment). The set keeps the
  // max_distance and near it was created with; opening it with others is kFailedPrecondition.
  std::string redis_url;
  std::string redis_name;  // 1-64 of [A-Za-z0-9_.-]
};

class ContentSeenFilter {
 public:
  // kInvalidArgument for bad options (max_distance out of range, only one of redis_url and
  // redis_name, a bad URL or name); over Redis, the errors of RedisContentSeenSet::Open (each
  // naming the server): kUnavailable when it cannot be reached.
  static Result<std::unique_ptr<ContentSeenFilter>> Open(const ContentSeenFilterOptions& options);
  ~ContentSeenFilter();
  ContentSeenFilter(const ContentSeenFilter&) = delete;
  ContentSeenFilter& operator=(const ContentSeenFilter&) = delete;

  // ContentSeenSet::Test and Forget, after the fork check. page.id: 1 .. 4096 bytes without NUL;
  // page.data: at most 4096 bytes (kInvalidArgument otherwise, nothing stored).
  Result<ContentVerdict> Test(const ContentFingerprint& fingerprint, const ContentCopy& page);
  Result<bool> Forget(const ContentFingerprint& fingerprint, std::string_view id);

  // Digests stored (over Redis: as of this process's last call).
  uint64_t size() const;
  const ContentSeenFilterOptions& options() const { return options_; }
  bool shared() const { return !options_.redis_url.empty(); }

 private:
  explicit ContentSeenFilter(const ContentSeenFilterOptions& options);
  Status CheckProcess() const;

  ContentSeenFilterOptions options_;
  uint64_t fork_generation_;
  std::unique_ptr<ContentSeenSet> set_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_CONTENT_SEEN_FILTER_H_
