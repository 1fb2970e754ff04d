// RedisContentSeenSet: a ContentSeenSet kept in Redis, shared by every thread, process and machine
// that opens it by the same address and name (docs/features/content-seen.md, "Shared"): the
// content-seen test of `--seen-redis` crawls and crawl clusters, and of embedders. Of two pages
// with one fingerprint tested at once anywhere, exactly one is kFirst.
//
// Layout (docs/formats/redis-keys.md, "Content-seen set"): every key of a set is
// "urlsieve:{NAME:content}:...", one Redis Cluster hash tag, so one slot: each Test is ONE call of
// a Redis Function (redis_content_function.lua, loaded by Open with FUNCTION LOAD REPLACE and
// again when a server answers "Function not found") that decides and stores atomically, on a
// standalone server and on a Redis Cluster alike. On a cluster the whole content set lives on the
// master owning that slot (its memory, its CPU): a near index cannot be split over slots without
// losing that atomicity, since two neighbours may agree on different blocks.
//   meta            hash: format, version, identity, max_distance, near, pages, chunk, coff, epoch
//   x:HH            the exact index: 65536 buckets by the digest's top 16 bits, bucket HHLL the
//                   field LL of hash x:HH, 12 bytes a page (the other 48 bits and the 48-bit
//                   value: the copy's place)
//   n:J:HH          the near index: max_distance + 1 tables (NearDuplicateIndex's blocks), 2^b
//                   buckets each (b = min(16, the block's bits)), four to a field of hash n:J:HH,
//                   each entry the fingerprint's other 64 - b bits (6 bytes at k = 3), table 0's
//                   with the value
//   c:N             copies (id + data), packed into 64 KiB strings made at full size
//   done:TOKEN      a connection's last answer, for retries (300 s)
// The near lookup runs in the client: it reads the query's k+1 buckets and the set's forgetting
// epoch (one pipelined round trip), finds the nearest within max_distance, and sends them to the
// Function, which checks that the buckets did not change since (lengths and epoch; else the client
// reads again) and decides. So the server spends a few microseconds per Test whatever the set's
// size; the buckets a client reads grow with it (n / 65536 entries each at k = 3).
//
// Faults: a Redis that is down, restarting or slow makes a call return kUnavailable naming the
// server and what was being done, never a verdict. Calls reconnect by themselves and retry a
// failed Function call under the same connection token and sequence number (back-off 25, 100,
// 300, 500 ms): the Function keeps each connection's last answer for 300 s, so a call that ran
// but whose reply was lost is answered as it was (a first stays a first, not a refetch of itself).
// When it still fails, the token and number are kept 240 s for the caller's retry of the same
// page (same fingerprint, id and data). A set deleted or lost (its meta hash gone) is kCorruption.
//
// Thread-safety: every method may be called concurrently; each call uses a connection of its own
// from a pool.
#ifndef URLSIEVE_DEDUP_CONTENT_REDIS_CONTENT_SEEN_SET_H_
#define URLSIEVE_DEDUP_CONTENT_REDIS_CONTENT_SEEN_SET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "dedup/content/content_seen_set.h"
#include "redis/redis_address.h"
#include "redis/redis_connection.h"

namespace urlsieve {

struct RedisContentSeenSetOptions {
  RedisAddress address;
  std::string name;      // 1-64 characters of [A-Za-z0-9_.-] (the seen set's names)
  int max_distance = 3;  // k, 0 .. 7: stored when the set is created; another one is refused
  bool near = true;      // false: only the exact test; stored, another one is refused
  RedisTimeouts timeouts;
  bool read_only = false;  // Stats and Delete only: NotFound when there is no such set
};

// What a set costs in Redis (MEMORY USAGE of each of its keys).
struct RedisContentSeenSetStats {
  uint64_t pages = 0;        // digests stored
  uint64_t exact_bytes = 0;  // the exact index's buckets
  uint64_t near_bytes = 0;   // the near index's tables
  uint64_t copy_bytes = 0;   // the copies' chunks
  uint64_t copy_chunks = 0;
  uint64_t keys = 0;  // every key of the set (not the transient done:TOKEN answers)
};

class RedisContentSeenSet final : public ContentSeenSet {
 public:
  // Opens or creates the set. Errors name the server and the set: kUnavailable (no server),
  // kInvalidArgument (a name or max_distance out of range), kFailedPrecondition (a set stored with
  // another max_distance or near, naming both; a Redis without Functions; a key holding another
  // type), kUnsupported (a meta hash of another format or version), kNotFound (read_only, no set).
  static Result<std::unique_ptr<RedisContentSeenSet>> Open(
      const RedisContentSeenSetOptions& options);
  ~RedisContentSeenSet() override;

  Result<ContentVerdict> Test(const ContentFingerprint& fingerprint,
                              const ContentCopy& page) override;
  Result<bool> Forget(const ContentFingerprint& fingerprint, std::string_view id) override;
  int max_distance() const override;
  // Digests stored, as of this process's last call (every reply carries the count).
  uint64_t size() const override;

  Result<RedisContentSeenSetStats> Stats();
  // Deletes every key of the set (`urlsieve cluster delete`); how many there were. The set is
  // unusable afterwards (its calls answer kCorruption: deleted). The transient done:TOKEN answers
  // expire by themselves within 300 s.
  Result<uint64_t> Delete();

 private:
  struct Impl;
  explicit RedisContentSeenSet(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_CONTENT_REDIS_CONTENT_SEEN_SET_H_
