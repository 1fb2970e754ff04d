#include "frontier/frontier.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <utility>

#include "frontier/politeness_key.h"
#include "frontier/retry_after.h"

namespace urlsieve {

struct Frontier::OriginState {
  enum class Robots : uint8_t { kUnknown, kFetching, kKnown };
  std::string name;  // "scheme://host[:port]"
  uint32_t key = 0;
  Robots robots = Robots::kUnknown;
  bool denied = false;  // every URL of the origin is rejected with deny_reason
  RejectReason deny_reason = RejectReason::kRobotsDisallowed;
  uint32_t robots_failures = 0;
  uint32_t robots_hops = 0;   // redirects followed so far by the robots.txt fetch under way
  std::string robots_target;  // the next hop's URL ("" = "<name>/robots.txt")
  Clock::TimePoint robots_expires{};
  std::shared_ptr<const RobotsPolicy> policy;
};

struct Frontier::KeyState {
  enum class Where : uint8_t { kNowhere, kReady, kWaiting };
  UrlQueue queue;
  UrlQueue express;         // URLs marked Expedite, handed out before the queue (never spilled)
  uint64_t spill_head = 0;  // spilled URLs are numbered [spill_head, spill_tail)
  uint64_t spill_tail = 0;
  Clock::TimePoint next_due{};
  Clock::Duration last_fetch{};
  Clock::Duration crawl_delay{};  // the largest Crawl-delay among the key's origins
  uint64_t pages_started = 0;
  uint32_t in_flight = 0;
  uint32_t failures = 0;    // consecutive
  uint32_t generation = 0;  // heap entries of older generations are stale
  Where where = Where::kNowhere;
  bool closed = false;  // URLs pushed to it are rejected with close_reason
  RejectReason close_reason = RejectReason::kKeyRetired;
  bool waiting_robots = false;  // the head URL's origin has a robots.txt fetch in flight
  bool storage_error = false;   // its spilled URLs could not be read back

  uint64_t spilled() const { return spill_tail - spill_head; }
  bool has_urls() const { return !express.empty() || !queue.empty() || spilled() > 0; }
  UrlQueue& head_queue() { return express.empty() ? queue : express; }
};

namespace {

uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
  z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
  return z ^ (z >> 31);
}

bool IsBackoffStatus(int status) { return status == 0 || status == 429 || status >= 500; }

}  // namespace

std::string_view RejectReasonName(RejectReason reason) {
  switch (reason) {
    case RejectReason::kInvalidUrl:
      return "invalid_url";
    case RejectReason::kMaxDepth:
      return "max_depth";
    case RejectReason::kKeyBudget:
      return "key_budget";
    case RejectReason::kTotalBudget:
      return "total_budget";
    case RejectReason::kRobotsDisallowed:
      return "robots_disallowed";
    case RejectReason::kRobotsUnreachable:
      return "robots_unreachable";
    case RejectReason::kCrawlDelayTooLong:
      return "crawl_delay_too_long";
    case RejectReason::kKeyRetired:
      return "key_retired";
    case RejectReason::kFetchFailed:
      return "fetch_failed";
    case RejectReason::kRetryAfterTooLong:
      return "retry_after_too_long";
    case RejectReason::kTlsError:
      return "tls_error";
    case RejectReason::kDust:
      return "dust";
  }
  return "unknown";
}

Result<std::unique_ptr<Frontier>> Frontier::Open(const FrontierOptions& options, Clock* clock) {
  if (clock == nullptr) return Status::InvalidArgument("frontier: no clock");
  if (options.per_key_concurrency == 0) {
    return Status::InvalidArgument("frontier: per_key_concurrency must be at least 1");
  }
  if (options.key_kind == PolitenessKeyKind::kCustom && !options.key_function) {
    return Status::InvalidArgument("frontier: key_kind kCustom needs a key_function");
  }
  std::unique_ptr<SpillStore> spill;
  if (options.max_pending_in_memory > 0) {
    Result<std::unique_ptr<SpillStore>> opened = SpillStore::Open(options.spill_path);
    if (!opened.ok()) return opened.status();
    spill = std::move(*opened);
  }
  return std::unique_ptr<Frontier>(new Frontier(options, clock, std::move(spill)));
}

Frontier::Frontier(const FrontierOptions& options, Clock* clock, std::unique_ptr<SpillStore> spill)
    : options_(options), clock_(clock), spill_(std::move(spill)), rng_(options.jitter_seed) {
  // A ManualClock that jumps must wake the threads blocked in Next().
  wakeup_handle_ = clock_->AddWakeup([this] {
    std::lock_guard<std::mutex> lock(mu_);
    cv_.notify_all();
  });
}

Frontier::~Frontier() { clock_->RemoveWakeup(wakeup_handle_); }

bool Frontier::Push(const CanonicalUrl& url, uint32_t depth, std::string_view parent) {
  std::lock_guard<std::mutex> lock(mu_);
  const bool accepted = PushParts(PartsOf(url), depth, parent, next_id_++, false);
  if (accepted && waiters_ > 0) cv_.notify_one();
  return accepted;
}

bool Frontier::Push(std::string_view url, uint32_t depth, std::string_view parent) {
  std::lock_guard<std::mutex> lock(mu_);
  const bool accepted = PushLocked(url, depth, parent, next_id_++, false);
  if (accepted && waiters_ > 0) cv_.notify_one();
  return accepted;
}

bool Frontier::PushSitemap(const CanonicalUrl& url, uint32_t nesting, std::string_view parent) {
  std::lock_guard<std::mutex> lock(mu_);
  const bool accepted = PushParts(PartsOf(url), nesting, parent, next_id_++, false, true);
  if (accepted && waiters_ > 0) cv_.notify_one();
  return accepted;
}

bool Frontier::PushSitemap(std::string_view url, uint32_t nesting, std::string_view parent) {
  std::lock_guard<std::mutex> lock(mu_);
  const bool accepted = PushLocked(url, nesting, parent, next_id_++, false, true);
  if (accepted && waiters_ > 0) cv_.notify_one();
  return accepted;
}

bool Frontier::PushLocked(std::string_view url, uint32_t depth, std::string_view parent,
                          uint64_t id, bool from_restore, bool sitemap) {
  UrlParts parts;
  if (SplitUrl(url, &parts)) return PushParts(parts, depth, parent, id, from_restore, sitemap);
  ++stats_.pushed;
  if (!from_restore && options_.checkpoints) {
    ckpt_inserts_.push_back({id, std::string(url), depth, std::string(parent),
                             sitemap ? PendingKind::kSitemap : PendingKind::kPage});
  }
  Reject(std::string(url), depth, id, RejectReason::kInvalidUrl, sitemap);
  return false;
}

bool Frontier::PushParts(const UrlParts& parts, uint32_t depth, std::string_view parent,
                         uint64_t id, bool from_restore, bool sitemap) {
  ++stats_.pushed;
  const std::string_view url = parts.url;
  if (!from_restore && options_.checkpoints) {
    ckpt_inserts_.push_back({id, std::string(url), depth, std::string(parent),
                             sitemap ? PendingKind::kSitemap : PendingKind::kPage});
  }
  // A sitemap's depth is its nesting level, which the crawler bounds (see the header).
  if (!sitemap && options_.max_depth && depth > *options_.max_depth) {
    Reject(std::string(url), depth, id, RejectReason::kMaxDepth);
    return false;
  }
  if (total_closed_) {
    Reject(std::string(url), depth, id, RejectReason::kTotalBudget, sitemap);
    return false;
  }
  const uint32_t origin_id = InternOrigin(parts);
  const OriginState& origin = origins_[origin_id];
  KeyState& key = keys_[origin.key];
  if (key.closed || origin.denied) {
    Reject(std::string(url), depth, id, key.closed ? key.close_reason : origin.deny_reason,
           sitemap);
    return false;
  }
  QueuedUrl queued{id, origin_id, depth, 0, parts.rest, parents_.Ref(parent)};
  queued.sitemap = sitemap;
  if (!expedite_.empty() && expedite_.erase(std::string(url)) > 0) {
    ++stats_.pending;
    ++stats_.pending_in_memory;
    key.express.Push(queued);
  } else {
    Enqueue(key, origin.key, queued);
  }
  Schedule(origin.key, clock_->Now());
  return true;
}

uint32_t Frontier::InternOrigin(const UrlParts& url) {
  // Heterogeneous lookup needs C++20 transparent hashing; a temporary string is cheap next to
  // the rest of a push and only built when needed.
  thread_local std::string lookup;
  lookup.assign(url.origin);
  if (auto it = origin_ids_.find(lookup); it != origin_ids_.end()) return it->second;

  auto [key_it, new_key] = key_ids_.emplace(PolitenessKey(options_, url), keys_.size());
  if (new_key) keys_.emplace_back();

  const auto origin_id = static_cast<uint32_t>(origins_.size());
  OriginState& origin = origins_.emplace_back();
  origin.name = lookup;
  origin.key = key_it->second;
  if (!options_.obey_robots) origin.robots = OriginState::Robots::kKnown;
  origin_ids_.emplace(lookup, origin_id);
  return origin_id;
}

void Frontier::Enqueue(KeyState& key, uint32_t key_id, const QueuedUrl& url) {
  ++stats_.pending;
  // Once a key has spilled URLs, newer ones follow them to disk to keep the queue FIFO.
  if (spill_ != nullptr &&
      (key.spilled() > 0 || stats_.pending_in_memory >= options_.max_pending_in_memory)) {
    const Status status = spill_->Append(key_id, key.spill_tail, url);
    if (status.ok()) {
      ++key.spill_tail;
      return;
    }
    // Never lose a URL: if the disk refuses it, RAM takes it (the queue order suffers only if
    // the key had spilled URLs already).
    KeepStorageError(status, "spilling a pending URL (it stays in memory)");
  }
  key.queue.Push(url);
  ++stats_.pending_in_memory;
}

bool Frontier::EnsureHead(KeyState& key, uint32_t key_id) {
  if (!key.express.empty() || !key.queue.empty()) return true;
  if (key.spilled() == 0 || key.storage_error) return false;
  // Refill within the RAM budget, but at least a few URLs so a full budget cannot stall a key.
  const size_t room = options_.max_pending_in_memory > stats_.pending_in_memory
                          ? options_.max_pending_in_memory - stats_.pending_in_memory
                          : 0;
  const uint64_t batch =
      std::min<uint64_t>(key.spilled(), std::clamp<uint64_t>(room, 4, options_.spill_batch));
  const Status status = spill_->Load(key_id, key.spill_head, batch, &key.queue);
  if (!status.ok()) {
    // The URLs stay in the checkpointed pending set; this key just cannot proceed (and keeps
    // its references to their parents).
    key.storage_error = true;
    key.queue.Clear();
    KeepStorageError(status,
                     "reading spilled URLs back (they stay in the checkpointed pending set)");
    return false;
  }
  key.spill_head += batch;
  stats_.pending_in_memory += batch;
  return true;
}

Clock::Duration Frontier::KeyDelay(const KeyState& key) {
  Clock::Duration delay = std::max(options_.delay, key.crawl_delay);
  if (options_.adaptive_factor > 0) {
    const auto adaptive =
        std::chrono::duration_cast<Clock::Duration>(key.last_fetch * options_.adaptive_factor);
    delay = std::max(delay, adaptive);
  }
  if (options_.jitter > 0 && delay.count() > 0) {
    const double unit = static_cast<double>(SplitMix64(&rng_) >> 11) * 0x1.0p-53;
    delay += Clock::Duration(static_cast<Clock::Duration::rep>(unit * options_.jitter *
                                                               static_cast<double>(delay.count())));
  }
  return delay;
}

Clock::Duration Frontier::Backoff(uint32_t failures) const {
  Clock::Duration backoff = options_.backoff_initial;
  for (uint32_t i = 1; i < failures && backoff < options_.backoff_max; ++i) backoff *= 2;
  return std::min(backoff, options_.backoff_max);
}

void Frontier::Schedule(uint32_t key_id, Clock::TimePoint now) {
  KeyState& key = keys_[key_id];
  using Where = KeyState::Where;
  const bool eligible = !key.closed && !key.waiting_robots && !key.storage_error &&
                        key.in_flight < options_.per_key_concurrency && key.has_urls();
  if (!eligible) {
    if (key.where != Where::kNowhere) ++key.generation;  // its heap entry becomes stale
    key.where = Where::kNowhere;
    return;
  }
  if (key.next_due <= now) {
    if (key.where == Where::kReady) return;
    if (!EnsureHead(key, key_id)) return Schedule(key_id, now);
    // Breadth-first across keys: the shallowest head goes first, FIFO among equals.
    const uint64_t depth =
        options_.breadth_first ? std::min<uint64_t>(key.head_queue().Front().depth, 0xffffff) : 0;
    ++key.generation;
    key.where = Where::kReady;
    ready_.push(
        {depth << 40 | (ready_sequence_++ & ((uint64_t{1} << 40) - 1)), key_id, key.generation});
    return;
  }
  const auto due = static_cast<uint64_t>(key.next_due.time_since_epoch().count());
  if (key.where == Where::kWaiting) {
    // Already waiting: a later due time is found when the entry surfaces (see TryNextLocked).
    return;
  }
  ++key.generation;
  key.where = Where::kWaiting;
  waiting_.push({due, key_id, key.generation});
}

NextStatus Frontier::TryNext(Lease* lease, Clock::TimePoint* wake_at) {
  std::lock_guard<std::mutex> lock(mu_);
  return TryNextLocked(lease, wake_at);
}

NextStatus Frontier::TryNextLocked(Lease* lease, Clock::TimePoint* wake_at) {
  if (stopped_) return NextStatus::kStopped;
  const Clock::TimePoint now = clock_->Now();
  const auto now_order = static_cast<uint64_t>(now.time_since_epoch().count());
  // Keys whose due time has come move to the ready heap.
  while (!waiting_.empty() && waiting_.top().order <= now_order) {
    const HeapEntry entry = waiting_.top();
    waiting_.pop();
    KeyState& key = keys_[entry.key];
    if (entry.generation != key.generation) continue;
    key.where = KeyState::Where::kNowhere;
    Schedule(entry.key, now);  // re-queues it as waiting if its due time moved later
  }
  while (!ready_.empty()) {
    const HeapEntry entry = ready_.top();
    ready_.pop();
    KeyState& key = keys_[entry.key];
    if (entry.generation != key.generation) continue;
    key.where = KeyState::Where::kNowhere;
    const bool handed = HandOut(entry.key, now, lease);
    Schedule(entry.key, now);
    if (handed) {
      if (!ready_.empty() && waiters_ > 0) cv_.notify_one();  // more work for another thread
      return NextStatus::kLease;
    }
  }
  while (!waiting_.empty() && waiting_.top().generation != keys_[waiting_.top().key].generation) {
    waiting_.pop();
  }
  if (!waiting_.empty()) {
    if (wake_at != nullptr) *wake_at = Clock::TimePoint(Clock::Duration(waiting_.top().order));
    return NextStatus::kWait;
  }
  if (stats_.in_flight > 0) {
    if (wake_at != nullptr) *wake_at = Clock::TimePoint::max();
    return NextStatus::kWait;
  }
  // Nothing due, nothing in flight: the crawl is over (or stuck on storage errors, which are
  // reported by StorageError(); those URLs remain in the checkpointed pending set).
  if (waiters_ > 0) cv_.notify_all();
  return NextStatus::kIdle;
}

bool Frontier::HandOut(uint32_t key_id, Clock::TimePoint now, Lease* lease) {
  KeyState& key = keys_[key_id];
  while (EnsureHead(key, key_id)) {
    const QueuedUrl head = key.head_queue().Front();
    OriginState& origin = origins_[head.origin];
    if (origin.denied) {
      PopAndReject(key, origin.deny_reason);
      continue;
    }
    if (lease_filter_ != nullptr && head.retries == 0 && !head.sitemap) {
      std::string rule = lease_filter_->Skip(origin.name + std::string(head.rest));
      if (!rule.empty()) {
        PopAndReject(key, RejectReason::kDust);
        rejections_.back().rule = std::move(rule);
        continue;
      }
    }
    // The page budgets do not count sitemaps (see the header).
    if (options_.max_pages_per_key > 0 && key.pages_started >= options_.max_pages_per_key &&
        head.retries == 0 && !head.sitemap) {
      CloseKey(key_id, RejectReason::kKeyBudget);
      return false;
    }
    if (options_.obey_robots) {
      switch (PassRobots(key, key_id, origin, head, now, lease)) {
        case RobotsGate::kAllowed:
          break;
        case RobotsGate::kDisallowed:
          PopAndReject(key, RejectReason::kRobotsDisallowed);
          continue;
        case RobotsGate::kWaitForRules:
          return false;
        case RobotsGate::kRulesLeased:
          return true;
      }
    }
    if (options_.max_total_pages > 0 && pages_started_ >= options_.max_total_pages &&
        head.retries == 0 && !head.sitemap) {
      total_closed_ = true;
      for (uint32_t k = 0; k < keys_.size(); ++k) CloseKey(k, RejectReason::kTotalBudget);
      return false;
    }
    LeaseHead(key, key_id, head, now, lease);
    return true;
  }
  return false;
}

Frontier::RobotsGate Frontier::PassRobots(KeyState& key, uint32_t key_id, OriginState& origin,
                                          const QueuedUrl& head, Clock::TimePoint now,
                                          Lease* lease) {
  if (origin.robots == OriginState::Robots::kKnown && now >= origin.robots_expires) {
    origin.robots = OriginState::Robots::kUnknown;  // RFC 9309 §2.4: refresh after the TTL
  }
  if (origin.robots == OriginState::Robots::kFetching) {
    key.waiting_robots = true;
    return RobotsGate::kWaitForRules;
  }
  if (origin.robots == OriginState::Robots::kUnknown) {
    origin.robots = OriginState::Robots::kFetching;
    key.waiting_robots = true;  // its pages wait for the rules
    LeaseRobots(key, key_id, origin, head, now, lease);
    return RobotsGate::kRulesLeased;
  }
  return RobotsAllow(origin, head.rest) ? RobotsGate::kAllowed : RobotsGate::kDisallowed;
}

bool Frontier::RobotsAllow(const OriginState& origin, std::string_view path) {
  if (path.empty() || path.front() != '/') {
    // "http://a?q" has the path "/" (RFC 3986 §6.2.3); match "/?q".
    thread_local std::string with_slash;
    with_slash.assign(1, '/');  // not assign("/"): GCC 12 -O3 warns -Wrestrict wrongly
    with_slash.append(path);
    path = with_slash;
  }
  return origin.policy->IsAllowed(path);
}

void Frontier::LeaseRobots(KeyState& key, uint32_t key_id, const OriginState& origin,
                           const QueuedUrl& head, Clock::TimePoint now, Lease* lease) {
  ++key.in_flight;
  ++stats_.in_flight;
  ++stats_.robots_handed_out;
  key.next_due = now + std::max(options_.delay, key.crawl_delay);
  lease->kind = Lease::Kind::kRobots;
  if (origin.robots_target.empty()) {
    lease->url.assign(origin.name).append("/robots.txt");
  } else {
    lease->url.assign(origin.robots_target);  // a redirect's next hop (FinishRobots)
  }
  lease->depth = head.depth;
  lease->retries = 0;
  lease->parent.clear();
  lease->start = now;
  lease->id = 0;
  lease->key = key_id;
  lease->origin = head.origin;
}

void Frontier::LeaseHead(KeyState& key, uint32_t key_id, const QueuedUrl& head,
                         Clock::TimePoint now, Lease* lease) {
  const OriginState& origin = origins_[head.origin];
  lease->kind = head.sitemap ? Lease::Kind::kSitemap : Lease::Kind::kPage;
  lease->url.assign(origin.name).append(head.rest);
  lease->depth = head.depth;
  lease->retries = head.retries;
  lease->parent.assign(parents_.Get(head.parent));
  lease->start = now;
  lease->id = head.id;
  lease->key = key_id;
  lease->origin = head.origin;
  key.head_queue().Pop();
  parents_.Unref(head.parent);  // a retry takes a new reference from lease.parent
  --stats_.pending;
  --stats_.pending_in_memory;
  if (head.retries == 0 && !head.sitemap) {
    ++key.pages_started;
    ++pages_started_;
  }
  ++key.in_flight;
  ++stats_.in_flight;
  ++(head.sitemap ? stats_.sitemaps_handed_out : stats_.handed_out);
  // Invariant 3: the next start of this key comes no sooner than one delay from now (Done()
  // then adds the adaptive delay and jitter, counted from the end of this fetch).
  key.next_due = now + std::max(options_.delay, key.crawl_delay);
}

DoneDecision Frontier::Done(const Lease& lease, const FetchOutcome& outcome) {
  std::lock_guard<std::mutex> lock(mu_);
  // A lease that is not ours, or a Done() for a key with nothing in flight, must not corrupt
  // the counts (a repeated Done() while other leases of the key are out cannot be told apart).
  if (lease.key >= keys_.size() || keys_[lease.key].in_flight == 0) return {};
  const Clock::TimePoint now = clock_->Now();
  KeyState& key = keys_[lease.key];
  --key.in_flight;
  --stats_.in_flight;
  const DoneDecision decision = lease.kind == Lease::Kind::kRobots
                                    ? FinishRobots(lease, outcome, now)
                                    : FinishPage(lease, outcome, now);
  Schedule(lease.key, now);
  if (waiters_ > 0) {
    // When the crawl is over every waiter must learn it; otherwise one can take the new work.
    if (stats_.pending == 0 && stats_.in_flight == 0) {
      cv_.notify_all();
    } else {
      cv_.notify_one();
    }
  }
  return decision;
}

void Frontier::Abandon(const Lease& lease) {
  std::lock_guard<std::mutex> lock(mu_);
  if (lease.key >= keys_.size() || keys_[lease.key].in_flight == 0) return;  // as in Done()
  KeyState& key = keys_[lease.key];
  --key.in_flight;
  --stats_.in_flight;
  ++stats_.abandoned;
  if (lease.kind == Lease::Kind::kRobots) {
    key.waiting_robots = false;
    OriginState& origin = origins_[lease.origin];
    if (origin.robots == OriginState::Robots::kFetching)
      origin.robots = OriginState::Robots::kUnknown;
  } else {
    if (lease.retries == 0 && lease.kind == Lease::Kind::kPage) {
      --key.pages_started;
      --pages_started_;
    }
    if (options_.checkpoints) ckpt_deletes_.push_back(lease.id);
  }
  Schedule(lease.key, clock_->Now());
  if (waiters_ > 0) cv_.notify_all();
}

void Frontier::DenyOrigin(OriginState& origin, RejectReason reason) {
  // Its queued URLs are rejected as they come up (HandOut), later ones at once (PushLocked).
  origin.denied = true;
  origin.deny_reason = reason;
  origin.robots = OriginState::Robots::kKnown;
  origin.policy = std::make_shared<const RobotsPolicy>(
      RobotsRules::DisallowAll().ForAgent(options_.user_agent));
  origin.robots_expires = Clock::TimePoint::max();
}

DoneDecision Frontier::FinishRobots(const Lease& lease, const FetchOutcome& outcome,
                                    Clock::TimePoint now) {
  OriginState& origin = origins_[lease.origin];
  KeyState& key = keys_[lease.key];
  key.waiting_robots = false;
  int status = outcome.http_status;
  DoneDecision decision;
  if (!outcome.robots_redirect.empty() && !outcome.permanent_failure) {
    if (origin.robots_hops < kRobotsMaxRedirects) {
      // RFC 9309 §2.3.1.2: follow the redirect. The next hop is a request to the key like any
      // other: HandOut gives it out when the key is next due (its delay, and any back-off).
      ++origin.robots_hops;
      origin.robots_target.assign(outcome.robots_redirect);
      origin.robots = OriginState::Robots::kUnknown;
      key.next_due = std::max(key.next_due, now + KeyDelay(key));
      return decision;
    }
    status = 0;  // one redirect too many: unreachable (§2.3.1.4)
  }
  origin.robots_hops = 0;  // decided (or retried from "/robots.txt" after a back-off)
  origin.robots_target.clear();
  if (outcome.permanent_failure) {
    // Asking again cannot help (a certificate that does not verify): the origin is given up now
    // rather than after every robots retry.
    DenyOrigin(origin, *outcome.permanent_failure);
    key.next_due = std::max(key.next_due, now + KeyDelay(key));
    decision.action = DoneDecision::Action::kRetired;
    decision.reason = *outcome.permanent_failure;
    decision.attempt = origin.robots_failures + 1;
    decision.max_attempts = decision.attempt;
    return decision;
  }
  if (status >= 200 && status < 300) {
    origin.policy = std::make_shared<const RobotsPolicy>(
        RobotsRules::Parse(outcome.robots_body).ForAgent(options_.user_agent));
  } else if (status > 0 && status < 500) {
    // RFC 9309 §2.3.1.3: 4xx means "unavailable": crawl without restrictions.
    origin.policy = std::make_shared<const RobotsPolicy>();
  } else {
    // RFC 9309 §2.3.1.4: 5xx or unreachable means complete disallow; we do not crawl the origin
    // and ask again after a back-off, at most robots_retries times.
    ++origin.robots_failures;
    decision.attempt = origin.robots_failures;
    decision.max_attempts = options_.robots_retries + 1;
    if (origin.robots_failures > options_.robots_retries) {
      DenyOrigin(origin, RejectReason::kRobotsUnreachable);
      decision.action = DoneDecision::Action::kRetired;
      decision.reason = RejectReason::kRobotsUnreachable;
    } else {
      origin.robots = OriginState::Robots::kUnknown;
      key.next_due = std::max(key.next_due, now + Backoff(origin.robots_failures));
      decision.action = DoneDecision::Action::kRetry;
      decision.wait = key.next_due - now;
    }
    return decision;
  }
  origin.robots_failures = 0;
  origin.robots = OriginState::Robots::kKnown;
  origin.robots_expires = now + options_.robots_ttl;
  if (std::optional<double> seconds = origin.policy->crawl_delay()) {
    auto crawl_delay = std::chrono::duration_cast<Clock::Duration>(
        std::chrono::duration<double>(std::min(*seconds, 1e9)));
    crawl_delay = std::max(crawl_delay, options_.crawl_delay_floor);
    if (crawl_delay > options_.crawl_delay_cap) {
      crawl_delay = options_.crawl_delay_cap;
      if (options_.crawl_delay_over_cap == CrawlDelayOverCap::kSkip) {
        origin.denied = true;
        origin.deny_reason = RejectReason::kCrawlDelayTooLong;
        crawl_delay = Clock::Duration::zero();  // its URLs are rejected, not fetched slowly
      }
    }
    key.crawl_delay = std::max(key.crawl_delay, crawl_delay);
  }
  key.next_due = std::max(key.next_due, now + KeyDelay(key));
  return decision;
}

DoneDecision Frontier::FinishPage(const Lease& lease, const FetchOutcome& outcome,
                                  Clock::TimePoint now) {
  // A sitemap lease is finished as a page is: same retries, back-off and rejections.
  const bool sitemap = lease.kind == Lease::Kind::kSitemap;
  KeyState& key = keys_[lease.key];
  const int status = outcome.http_status;
  DoneDecision decision;
  decision.attempt = lease.retries + 1;
  decision.max_attempts = options_.max_retries + 1;
  if (outcome.permanent_failure) {
    // Not the server's load: no back-off for the key, and no retry that would fail alike.
    key.next_due = std::max(key.next_due, now + KeyDelay(key));
    Reject(lease.url, lease.depth, lease.id, *outcome.permanent_failure, sitemap);
    DenyOrigin(origins_[lease.origin], *outcome.permanent_failure);
    decision.action = DoneDecision::Action::kRetired;
    decision.reason = *outcome.permanent_failure;
    return decision;
  }
  if (outcome.validators_refused && !sitemap) {
    key.next_due = std::max(key.next_due, now + KeyDelay(key));
    decision.action = DoneDecision::Action::kRetry;
    decision.wait = key.next_due - now;
    RequeueRetry(lease, key, lease.retries);
    return decision;
  }
  if (!IsBackoffStatus(status)) {
    key.failures = 0;
    key.last_fetch = outcome.fetch_time;
    if (!sitemap) ++stats_.completed;
    if (options_.checkpoints) ckpt_deletes_.push_back(lease.id);
    key.next_due = std::max(key.next_due, now + KeyDelay(key));
    return decision;
  }
  ++key.failures;
  Clock::Duration wait = Backoff(key.failures);
  if (status == 429 || status == 503) {
    // RFC 9110 §10.2.3: Retry-After is delta-seconds or an HTTP-date.
    if (std::optional<std::chrono::seconds> after =
            ParseRetryAfter(outcome.retry_after, clock_->WallNow())) {
      if (*after > options_.max_retry_after) {
        // Waiting that long would stall the crawl on this key: retire it instead.
        Reject(lease.url, lease.depth, lease.id, RejectReason::kRetryAfterTooLong, sitemap);
        CloseKey(lease.key, RejectReason::kRetryAfterTooLong);
        decision.action = DoneDecision::Action::kRetired;
        decision.reason = RejectReason::kRetryAfterTooLong;
        decision.wait = *after;
        return decision;
      }
      wait = *after;
    }
  }
  key.next_due = std::max(key.next_due, now + std::max(wait, KeyDelay(key)));
  decision.wait = key.next_due - now;
  if (key.failures >= options_.max_consecutive_failures) {
    Reject(lease.url, lease.depth, lease.id, RejectReason::kKeyRetired, sitemap);
    CloseKey(lease.key, RejectReason::kKeyRetired);
    decision.action = DoneDecision::Action::kRetired;
    decision.reason = RejectReason::kKeyRetired;
    return decision;
  }
  if (lease.retries >= options_.max_retries || key.closed) {
    decision.action = DoneDecision::Action::kGiveUp;
    decision.reason = key.closed ? key.close_reason : RejectReason::kFetchFailed;
    Reject(lease.url, lease.depth, lease.id, decision.reason, sitemap);
    return decision;
  }
  decision.action = DoneDecision::Action::kRetry;
  RequeueRetry(lease, key, lease.retries + 1);
  return decision;
}

void Frontier::RequeueRetry(const Lease& lease, KeyState& key, uint32_t retries) {
  // A retry is the same URL again (same id), not a duplicate: back of its key's queue.
  ++stats_.retried;
  // The lease's URL is its origin's name followed by the rest that was queued (HandOut).
  std::string_view rest = lease.url;
  rest.remove_prefix(std::min(rest.size(), origins_[lease.origin].name.size()));
  QueuedUrl retry{lease.id, lease.origin, lease.depth, retries, rest, parents_.Ref(lease.parent)};
  retry.sitemap = lease.kind == Lease::Kind::kSitemap;
  Enqueue(key, lease.key, retry);
}

void Frontier::Reject(std::string url, uint32_t depth, uint64_t id, RejectReason reason,
                      bool sitemap) {
  ++stats_.rejected[static_cast<size_t>(reason)];
  if (options_.checkpoints) ckpt_deletes_.push_back(id);
  rejections_.push_back({std::move(url), depth, reason, sitemap, {}});
}

void Frontier::PopAndReject(KeyState& key, RejectReason reason) {
  const QueuedUrl head = key.head_queue().Front();
  Reject(origins_[head.origin].name + std::string(head.rest), head.depth, head.id, reason,
         head.sitemap);
  key.head_queue().Pop();
  parents_.Unref(head.parent);
  --stats_.pending;
  --stats_.pending_in_memory;
}

void Frontier::CloseKey(uint32_t key_id, RejectReason reason) {
  KeyState& key = keys_[key_id];
  if (!key.closed) {
    key.closed = true;
    key.close_reason = reason;
  }
  while (EnsureHead(key, key_id)) PopAndReject(key, key.close_reason);
  Schedule(key_id, clock_->Now());
}

void Frontier::Expedite(std::string_view url) {
  std::lock_guard<std::mutex> lock(mu_);
  if (expedite_.size() >= kMaxExpedited) expedite_.clear();  // marks never pushed: forgotten
  expedite_.emplace(url);
}

void Frontier::SetLeaseFilter(LeaseFilter* filter) {
  std::lock_guard<std::mutex> lock(mu_);
  lease_filter_ = filter;
}

void Frontier::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  stopped_ = true;
  cv_.notify_all();
}

bool Frontier::Next(Lease* lease) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    Clock::TimePoint wake_at;
    switch (TryNextLocked(lease, &wake_at)) {
      case NextStatus::kLease:
        return true;
      case NextStatus::kStopped:
      case NextStatus::kIdle:
        return false;
      case NextStatus::kWait:
        break;
    }
    ++waiters_;
    if (wake_at == Clock::TimePoint::max()) {
      cv_.wait(lock);
    } else {
      clock_->WaitUntil(cv_, lock, wake_at);
    }
    --waiters_;
  }
}

std::vector<Rejection> Frontier::DrainRejections() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Rejection> out;
  out.swap(rejections_);
  return out;
}

std::vector<std::pair<std::string, Clock::Duration>> Frontier::LearnedDelays() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<std::string, Clock::Duration>> delays;
  for (const auto& [key, id] : key_ids_) {
    if (keys_[id].crawl_delay > options_.delay) delays.emplace_back(key, keys_[id].crawl_delay);
  }
  return delays;
}

FrontierStats Frontier::Stats() {
  std::lock_guard<std::mutex> lock(mu_);
  FrontierStats stats = stats_;
  stats.keys = keys_.size();
  stats.origins = origins_.size();
  uint64_t bytes = keys_.capacity() * sizeof(KeyState) + origins_.capacity() * sizeof(OriginState) +
                   (ready_.size() + waiting_.size()) * sizeof(HeapEntry);
  for (const KeyState& key : keys_) {
    bytes += key.queue.allocated_bytes() + key.express.allocated_bytes();
    if (key.closed) {
      ++stats.keys_retired;
    } else if (key.in_flight > 0) {
      ++stats.keys_active;
    } else if (key.has_urls()) {
      ++stats.keys_waiting;
    }
  }
  for (const OriginState& origin : origins_) bytes += origin.name.capacity() * 2 + 64;  // + maps
  bytes += parents_.memory_bytes();
  stats.parents = parents_.size();
  stats.memory_bytes = bytes;
  stats.spill_bytes = spill_ != nullptr ? spill_->FileBytes() : 0;
  return stats;
}

void Frontier::KeepStorageError(const Status& status, std::string_view doing) {
  if (!storage_error_.ok()) return;
  std::string message = "frontier: ";
  message.append(doing).append(": ").append(status.message());
  storage_error_ = Status(status.code(), std::move(message));
  has_storage_error_.store(true, std::memory_order_release);
}

Status Frontier::StorageError() {
  if (!has_storage_error_.load(std::memory_order_acquire)) return Status::Ok();
  std::lock_guard<std::mutex> lock(mu_);
  return storage_error_;
}

Status Frontier::Checkpoint(SqliteDb& db, std::vector<Rejection>* undrained) {
  if (!options_.checkpoints) {
    return Status::FailedPrecondition("frontier: checkpoints are turned off in its options");
  }
  std::lock_guard<std::mutex> checkpoint_lock(checkpoint_mu_);
  return pending_store_.Checkpoint(db, [&] {
    PendingDelta delta;
    std::lock_guard<std::mutex> lock(mu_);
    delta.inserts.swap(ckpt_inserts_);
    delta.deletes.swap(ckpt_deletes_);
    delta.next_id = next_id_;
    if (undrained != nullptr) {
      std::move(rejections_.begin(), rejections_.end(), std::back_inserter(*undrained));
      rejections_.clear();
    }
    return delta;
  });
}

Status Frontier::Restore(SqliteDb& db) {
  std::lock_guard<std::mutex> checkpoint_lock(checkpoint_mu_);
  std::lock_guard<std::mutex> lock(mu_);
  if (stats_.pushed > 0 || pending_store_.used()) {
    return Status::FailedPrecondition("frontier: Restore needs a new frontier");
  }
  Result<uint64_t> next_id =
      pending_store_.Load(db, [this](uint64_t id, std::string_view url, uint32_t depth,
                                     std::string_view parent, PendingKind kind) {
        PushLocked(url, depth, parent, id, true, kind == PendingKind::kSitemap);
        next_id_ = std::max(next_id_, id + 1);
      });
  if (!next_id.ok()) return next_id.status();
  next_id_ = std::max(next_id_, *next_id);
  cv_.notify_all();
  return Status::Ok();
}

}  // namespace urlsieve
