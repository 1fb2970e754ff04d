// Frontier: the politeness-aware queue of URLs to fetch, with robots.txt rules per origin and a
// durable pending set.
//
// URLs are queued FIFO per politeness key (FrontierOptions::key_kind). Next() hands out a Lease
// for a key that is due (its delay since the last request has passed) and below its concurrency
// limit; among due keys, the one whose next URL is shallowest goes first (breadth-first), then the
// one that waited longest. Done() reports the outcome and sets the key's next due time (delay,
// Crawl-delay, adaptive delay, back-off, Retry-After) and returns what it decided (a retry after a
// wait, a rejection) so that the caller can say so. A waiting or slow key never holds up another:
// keys that are not due are simply not in the ready heap. Nothing waits without bound: a
// Retry-After above max_retry_after retires the key, and a permanent failure (a TLS certificate
// refused) rejects its origin at once instead of retrying.
//
// robots.txt: before the first page of an origin, and again when its rules are older than
// robots_ttl, Next() hands out a Lease of kind kRobots for "<origin>/robots.txt" (it obeys the
// key's politeness like any request). The crawler fetches it without following redirects and
// passes the status and body to Done(). A redirect comes back with its target
// (FetchOutcome::robots_redirect): the frontier hands the target out as the origin's next kRobots
// lease when the key is next due, up to kRobotsMaxRedirects hops (RFC 9309 §2.3.1.2), so each hop
// waits on the frontier's clock like any request. Pages of that origin wait until the rules are
// decided. Disallowed URLs are rejected by the frontier (kRobotsDisallowed), never handed out.
//
// URLs arrive parsed (CanonicalUrl, in fetch form) and are not parsed again: the origin, which
// gives the politeness key (frontier/politeness_key.h) and the robots.txt origin, and the path
// and query that a queue stores are views of it (url/url_parts.h).
//
// Sitemaps (docs/features/sitemaps.md, "Sitemaps"): PushSitemap queues a URL to be handed out as a
// Lease of kind kSitemap, in its key's FIFO with the pages, so politeness and robots.txt apply to
// it as to a page. Its depth is its nesting level (0 for a sitemap named by robots.txt or the
// user), not a link depth: max_depth does not apply, and neither do the page budgets
// (max_pages_per_key, max_total_pages) — the crawler bounds sitemaps itself. The kind travels with
// the URL through RAM, the spill file, retries and checkpoints.
//
// Parents: every pending URL carries the URL of the page that linked to it (empty for seeds),
// through RAM, the spill file, retries and checkpoints, and Next() returns it in Lease::parent.
// RAM holds each parent string once (ParentTable, reference-counted), not once per child: a page
// has tens of children and a frontier up to ~1e7 URLs, so per-URL copies would double its memory.
//
// Nothing is silently dropped: every URL pushed is eventually handed out and completed by
// Done(), or rejected with a reason, which DrainRejections() returns (and Stats() counts).
//
// Durability: Checkpoint() writes the delta since the previous checkpoint into the crawl's state
// database, inside the caller's transaction; Restore() loads the pending set into a new frontier
// (the tables and their SQL: PendingStore).
// Memory: beyond max_pending_in_memory, pending URLs live in a scratch SQLite file (SpillStore);
// its errors lose no URL and are kept for StorageError().
//
// Thread-safety: Push/Next/TryNext/Done/Abandon/Stop/DrainRejections/Stats/StorageError may be
// called from any number of threads; one mutex guards the state (each call holds it for O(log keys)
// work, plus a spill page-in when a key's in-memory queue runs dry). Checkpoint/Restore are
// serialized by a second mutex and hold the first only to take the delta, so fetchers keep running
// while SQLite writes.
#ifndef URLSIEVE_FRONTIER_FRONTIER_H_
#define URLSIEVE_FRONTIER_FRONTIER_H_

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/sqlite_db.h"
#include "base/status.h"
#include "frontier/frontier_options.h"
#include "frontier/parent_table.h"
#include "frontier/pending_store.h"
#include "frontier/robots_rules.h"
#include "frontier/spill_store.h"
#include "frontier/url_queue.h"
#include "url/url_canonicalizer.h"
#include "url/url_parts.h"

namespace urlsieve {

enum class RejectReason : uint8_t {
  kInvalidUrl,         // not an absolute "scheme://host..." URL
  kMaxDepth,           // depth above FrontierOptions::max_depth
  kKeyBudget,          // the key reached max_pages_per_key
  kTotalBudget,        // the crawl reached max_total_pages
  kRobotsDisallowed,   // robots.txt disallows it for our user agent
  kRobotsUnreachable,  // robots.txt stayed unreachable (5xx / network) through every retry
  kCrawlDelayTooLong,  // the site's Crawl-delay is above crawl_delay_cap (kSkip)
  kKeyRetired,         // the key failed max_consecutive_failures times in a row
  kFetchFailed,        // this URL failed 1 + max_retries times
  // RFC 9110 §10.2.3: a 429/503 asked, in Retry-After, for a longer wait than max_retry_after;
  // the key is retired rather than left stalling the crawl.
  kRetryAfterTooLong,
  kTlsError,  // the origin's TLS certificate was refused (FetchOutcome::permanent_failure)
  // Never the frontier's: a learned URL rule (url/dust_learner.h) says the URL is a page the
  // crawl has, or one not worth fetching (Rejection::rule names it).
  kDust,
};
inline constexpr size_t kRejectReasonCount = 12;

// RFC 9309 §2.3.1.2: a crawler follows at least five consecutive redirects of robots.txt; after
// more, the frontier takes it as unreachable (§2.3.1.4), like a request that got no response.
inline constexpr uint32_t kRobotsMaxRedirects = 5;
std::string_view RejectReasonName(RejectReason reason);

struct Rejection {
  std::string url;
  uint32_t depth = 0;
  RejectReason reason = RejectReason::kInvalidUrl;
  bool sitemap = false;  // the URL was queued as a sitemap (PushSitemap)
  std::string rule;      // kDust: the rule's id (RuleId)
};

// Asked by Next() before it hands out a page's first attempt: whether the crawl can do without
// fetching it (a learned URL rule says the crawl has its page under another URL, or that it is
// not worth fetching: docs/features/dust.md). A non-empty answer names the rule: the URL is
// rejected with kDust (Rejection::rule) and never leased, costing no delay and no budget.
// Called under the frontier's lock: it must not call the frontier.
class LeaseFilter {
 public:
  virtual ~LeaseFilter() = default;
  virtual std::string Skip(std::string_view url) = 0;
};

// A URL handed out by Next(), to be returned through Done() exactly once.
struct Lease {
  enum class Kind : uint8_t { kPage, kRobots, kSitemap };
  Kind kind = Kind::kPage;
  std::string url;       // kRobots: "<origin>/robots.txt"
  uint32_t depth = 0;    // kSitemap: the nesting level
  uint32_t retries = 0;  // earlier failed attempts of this URL
  std::string parent;    // kPage: the page that linked to url ("" for seeds); kRobots: "";
                         // kSitemap: the robots.txt or sitemap index that named it ("" = the user)
  Clock::TimePoint start{};
  // The frontier's bookkeeping; leave untouched.
  uint64_t id = 0;
  uint32_t key = 0;
  uint32_t origin = 0;
};

struct FetchOutcome {
  FetchOutcome() = default;
  // Not an aggregate, so that FetchOutcome{status, time, retry_after, body} stays valid (and
  // free of -Wmissing-field-initializers) as fields are added.
  FetchOutcome(int status, Clock::Duration time = {}, std::string_view retry_after_value = {},
               std::string_view robots_body_value = {})
      : http_status(status),
        fetch_time(time),
        retry_after(retry_after_value),
        robots_body(robots_body_value) {}

  // The HTTP status, or 0 when there was no response: DNS failure, connection refused or reset,
  // TLS error, timeout.
  int http_status = 0;
  Clock::Duration fetch_time{};  // how long the fetch took (adaptive delay)
  std::string_view retry_after;  // the Retry-After header, if any (429, 503)
  std::string_view robots_body;  // kRobots leases with a 2xx status: the body
  // kRobots leases answered by a redirect (301, 302, 303, 307, 308): its target, an absolute URL
  // (the Location resolved against Lease::url). The frontier asks for it next (RFC 9309
  // §2.3.1.2). A redirect with no usable target is reported as no response (http_status 0).
  std::string_view robots_redirect;
  // Set when the fetch failed in a way that retrying cannot fix (e.g. a TLS certificate that
  // does not verify): no retry, no back-off; the lease's URL (for a page) and every URL of its
  // origin are rejected with this reason, now and for the rest of the crawl.
  std::optional<RejectReason> permanent_failure;
  // A page answered 4xx to a conditional request (If-None-Match / If-Modified-Since): the server
  // may refuse the validators, not the URL (a 431 for a long ETag, a 412). The URL is asked once
  // more, after its key's delay, by a request without them; neither a failure nor an attempt
  // (the caller keeps its good record meanwhile: Action::kRetry).
  bool validators_refused = false;
};

// What Done() decided, so that the caller can tell the user about retries and back-offs.
struct DoneDecision {
  enum class Action : uint8_t {
    kNone,     // success, or a response that is not a failure (4xx): nothing to report
    kRetry,    // the URL (or robots.txt) is fetched again after `wait`
    kGiveUp,   // this URL failed for the last time and was rejected with `reason`
    kRetired,  // the key (or, for robots and permanent failures, the origin) was retired: the
               // lease's URL and its pending URLs are rejected with `reason`
  };
  Action action = Action::kNone;
  RejectReason reason = RejectReason::kFetchFailed;
  uint32_t attempt = 0;       // the attempt that just ended, from 1
  uint32_t max_attempts = 0;  // attempts allowed (1 + max_retries, or 1 + robots_retries)
  // How long the key waits before its next request (back-off, Retry-After); for
  // kRetryAfterTooLong, the wait the server asked for.
  Clock::Duration wait{};
};

struct FrontierStats {
  uint64_t pushed = 0;
  uint64_t pending = 0;  // queued, not handed out (in RAM + spilled)
  uint64_t pending_in_memory = 0;
  uint64_t in_flight = 0;   // leases not yet done (pages and robots)
  uint64_t handed_out = 0;  // page leases, including retries
  uint64_t robots_handed_out = 0;
  uint64_t sitemaps_handed_out = 0;  // sitemap leases, including retries
  uint64_t completed = 0;            // page leases done without a retry or rejection
  uint64_t retried = 0;
  uint64_t abandoned = 0;  // leases forgotten through Abandon()
  uint64_t keys = 0;
  // The keys by state (docs/features/metrics.md, "Metrics"): active, with a lease in flight;
  // waiting, with URLs pending and none in flight (due later, backing off, waiting for robots.txt,
  // or ready); retired, closed to new URLs (given up after failures, or their page budget reached).
  // Keys with nothing pending or in flight are in none of them.
  uint64_t keys_active = 0;
  uint64_t keys_waiting = 0;
  uint64_t keys_retired = 0;
  uint64_t origins = 0;
  std::array<uint64_t, kRejectReasonCount> rejected{};
  uint64_t parents = 0;       // distinct parent URLs referenced by pending URLs (interned)
  uint64_t memory_bytes = 0;  // approximate RAM held by queues, keys, origins and parents
  int64_t spill_bytes = 0;    // bytes in use in the spill file
};

enum class NextStatus { kLease, kWait, kIdle, kStopped };

class Frontier {
 public:
  // `clock` must outlive the frontier. Fails only when the spill file cannot be created.
  static Result<std::unique_ptr<Frontier>> Open(const FrontierOptions& options, Clock* clock);
  ~Frontier();
  Frontier(const Frontier&) = delete;
  Frontier& operator=(const Frontier&) = delete;

  // Queues a URL found at `depth` on the page `parent` ("" for a seed): the parsed URL to fetch,
  // in fetch form (UrlCanonicalizer without opt-in rules; it is the seen stage's key only when no
  // opt-in rule is on). Its origin() is the politeness key's source and the robots.txt origin;
  // nothing is parsed again. Returns false when it is rejected at once (see DrainRejections).
  bool Push(const CanonicalUrl& url, uint32_t depth, std::string_view parent = {});
  // The same for a URL held as a string (tests, tools): it is split (SplitUrl), not canonicalized,
  // and rejected (kInvalidUrl) when it has no scheme or no host.
  bool Push(std::string_view url, uint32_t depth, std::string_view parent = {});
  // Queues a sitemap (see "Sitemaps" above) at nesting level `nesting`, named by `parent`.
  bool PushSitemap(const CanonicalUrl& url, uint32_t nesting, std::string_view parent = {});
  bool PushSitemap(std::string_view url, uint32_t nesting, std::string_view parent = {});

  // Blocks until a lease is due and fills *lease (true), or returns false after Stop() or when
  // the crawl is over: nothing pending and nothing in flight. Push the links a lease discovered
  // before its Done(), so that "over" cannot be seen too early.
  bool Next(Lease* lease);
  // Does not block. kWait: nothing due before *wake_at (when not null); kIdle: nothing pending
  // or in flight; kStopped: Stop() was called.
  NextStatus TryNext(Lease* lease, Clock::TimePoint* wake_at = nullptr);
  // Returns what was decided (a retry after a back-off, a rejection...), for logging.
  DoneDecision Done(const Lease& lease, const FetchOutcome& outcome);
  // Forgets a lease without an outcome: no retry, no rejection, no back-off (the key's delay from
  // the hand-out stands), and it no longer counts against the budgets. A page lease's URL leaves
  // the frontier (and its pending set); a robots lease leaves its origin's rules undecided (the
  // next page of the origin asks again). For a crawl cluster, when the lease's partition was handed
  // to another node before its fetch (docs/features/cluster.md, "The crawl cluster"): that node
  // fetches the URL. Counted in FrontierStats::abandoned.
  void Abandon(const Lease& lease);
  // Wakes every Next() and makes it return false, now and later.
  void Stop();
  // Asks `filter` (which must outlive the frontier, or be unset first) before each page's first
  // hand-out; null: none.
  void SetLeaseFilter(LeaseFilter* filter);
  // The next Push of `url` (fetch form) goes ahead of its key's queue: handed out before the URLs
  // queued earlier, politeness and robots.txt still applying (a learned rule's check, which must
  // not wait behind the whole frontier: url/dust_learner.h). Such URLs stay in RAM; a checkpoint
  // restores them to the queue's end. Marks are few; past kMaxExpedited unused ones are forgotten.
  void Expedite(std::string_view url);

  // The rejections since the previous call, oldest first.
  std::vector<Rejection> DrainRejections();
  FrontierStats Stats();
  // The keys whose Crawl-delay (from robots.txt, with the floor and cap applied) is longer than
  // the configured delay, with that delay: what a cluster node hands over with a partition.
  std::vector<std::pair<std::string, Clock::Duration>> LearnedDelays();
  // The first error of the spill file (FrontierOptions::spill_path), naming it and what was being
  // done, or OK. It loses no URL — one the file refuses stays in RAM, one it cannot give back stays
  // in the checkpointed pending set — but the key of a URL it cannot give back stops, so the crawl
  // must fail with it rather than end as if it were done.
  Status StorageError();

  // Writes the pending set (URLs queued or in flight) into `db`, which the caller has opened a
  // write transaction on; only the changes since the previous checkpoint are written. If that
  // transaction did not commit, the next Checkpoint notices and writes those changes again.
  // The first checkpoint of a frontier that was not restored from `db` replaces its pending set.
  // With `undrained`, the rejections not yet drained are moved there at the instant the delta is
  // taken: a URL this checkpoint drops from the pending set because it was rejected is either
  // drained already or in *undrained, for the caller to record in the same checkpoint (rejections
  // happen outside the caller's locks too: Next() meets a robots.txt disallow).
  Status Checkpoint(SqliteDb& db, std::vector<Rejection>* undrained = nullptr);
  // Loads the pending set of `db` into this frontier, which must be new (nothing pushed yet).
  Status Restore(SqliteDb& db);

 private:
  struct OriginState;
  struct KeyState;
  struct HeapEntry {
    uint64_t order;  // ready heap: depth << 40 | sequence; waiting heap: due time
    uint32_t key;
    uint32_t generation;
    bool operator>(const HeapEntry& other) const { return order > other.order; }
  };
  using MinHeap = std::priority_queue<HeapEntry, std::vector<HeapEntry>, std::greater<HeapEntry>>;

  Frontier(const FrontierOptions& options, Clock* clock, std::unique_ptr<SpillStore> spill);

  bool PushLocked(std::string_view url, uint32_t depth, std::string_view parent, uint64_t id,
                  bool from_restore, bool sitemap = false);
  bool PushParts(const UrlParts& url, uint32_t depth, std::string_view parent, uint64_t id,
                 bool from_restore, bool sitemap = false);
  uint32_t InternOrigin(const UrlParts& url);
  void Enqueue(KeyState& key, uint32_t key_id, const QueuedUrl& url);
  bool EnsureHead(KeyState& key, uint32_t key_id);
  NextStatus TryNextLocked(Lease* lease, Clock::TimePoint* wake_at);
  bool HandOut(uint32_t key_id, Clock::TimePoint now, Lease* lease);
  // What obeying robots.txt makes of a key's head URL.
  enum class RobotsGate {
    kAllowed,
    kDisallowed,
    kWaitForRules,  // the origin's robots.txt fetch is in flight
    kRulesLeased,   // *lease is the origin's robots.txt fetch; the head waits for its rules
  };
  RobotsGate PassRobots(KeyState& key, uint32_t key_id, OriginState& origin, const QueuedUrl& head,
                        Clock::TimePoint now, Lease* lease);
  // Whether the origin's rules allow the URL whose part after the origin is `path` (path and
  // query).
  static bool RobotsAllow(const OriginState& origin, std::string_view path);
  void LeaseRobots(KeyState& key, uint32_t key_id, const OriginState& origin, const QueuedUrl& head,
                   Clock::TimePoint now, Lease* lease);
  // Hands out the key's head URL (a page or a sitemap), popping it from the queue.
  void LeaseHead(KeyState& key, uint32_t key_id, const QueuedUrl& head, Clock::TimePoint now,
                 Lease* lease);
  void Schedule(uint32_t key_id, Clock::TimePoint now);
  Clock::Duration KeyDelay(const KeyState& key);
  Clock::Duration Backoff(uint32_t failures) const;
  DoneDecision FinishRobots(const Lease& lease, const FetchOutcome& outcome, Clock::TimePoint now);
  DoneDecision FinishPage(const Lease& lease, const FetchOutcome& outcome, Clock::TimePoint now);
  // The lease's URL queued again at the back of its key's queue, as attempt `retries`.
  void RequeueRetry(const Lease& lease, KeyState& key, uint32_t retries);
  void DenyOrigin(OriginState& origin, RejectReason reason);
  void Reject(std::string url, uint32_t depth, uint64_t id, RejectReason reason,
              bool sitemap = false);
  void PopAndReject(KeyState& key, RejectReason reason);
  void CloseKey(uint32_t key_id, RejectReason reason);
  void KeepStorageError(const Status& status, std::string_view doing);
  void Wake();

  const FrontierOptions options_;
  Clock* const clock_;
  uint64_t wakeup_handle_ = 0;

  std::mutex mu_;
  std::condition_variable cv_;
  int waiters_ = 0;
  bool stopped_ = false;
  LeaseFilter* lease_filter_ = nullptr;  // guarded by mu_
  // URLs (fetch form) Expedite marked, not pushed yet; guarded by mu_.
  std::unordered_set<std::string> expedite_;
  static constexpr size_t kMaxExpedited = 4096;
  std::unique_ptr<SpillStore> spill_;
  std::unordered_map<std::string, uint32_t> origin_ids_;
  std::unordered_map<std::string, uint32_t> key_ids_;
  std::vector<OriginState> origins_;
  std::vector<KeyState> keys_;
  ParentTable parents_;  // referenced by every queued or spilled URL that has a parent
  MinHeap ready_;
  MinHeap waiting_;
  uint64_t ready_sequence_ = 0;
  uint64_t next_id_ = 1;
  uint64_t rng_;
  bool total_closed_ = false;
  uint64_t pages_started_ = 0;  // first attempts only, for max_total_pages
  FrontierStats stats_;
  Status storage_error_;  // the first spill-file error
  // Set once storage_error_ is: StorageError() is called after every page, and takes no lock
  // while all is well.
  std::atomic<bool> has_storage_error_{false};
  std::vector<Rejection> rejections_;
  // Changes since the last checkpoint.
  std::vector<PendingRow> ckpt_inserts_;
  std::vector<uint64_t> ckpt_deletes_;

  std::mutex checkpoint_mu_;    // serializes Checkpoint/Restore; taken before mu_
  PendingStore pending_store_;  // guarded by checkpoint_mu_
};

}  // namespace urlsieve

#endif  // URLSIEVE_FRONTIER_FRONTIER_H_
