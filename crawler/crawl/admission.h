// Admission: the seam between a page's links and the work to come (docs/architecture.md, "The
// seams"). The crawl loop hands it the links of one page (or the seeds, or a sitemap's URLs),
// parsed in fetch form, scoped and keyed (LinkBatch); the admission asks the seen stage which are
// new and queues those where the deployment keeps its pending work:
//   - LocalAdmission (local_admission.h): the crawl's own seen set, then the local frontier;
//   - SharedAdmission (shared_admission.h): a Redis seen set shared with other crawls, with claims
//     and retries, then the local frontier;
//   - ClusterAdmission (cluster_admission.h): the cluster's routed seen set, which appends each URL
//     new to the cluster to its partition's inbox in the same atomic step.
//
// The crawl loop holds the checkpoint gate (shared) across Admit and the page's Done when
// NeedsGate() (what Admit queued is in the local checkpoint: invariants 2 and 4); a cluster's
// inboxes are durable in Redis, so its Admit runs before the gate is taken.
//
// Thread-safety: Admit may be called from any number of fetcher threads at once; implementations
// say how they synchronise.
#ifndef URLSIEVE_CRAWLER_CRAWL_ADMISSION_H_
#define URLSIEVE_CRAWLER_CRAWL_ADMISSION_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "dedup/bloom/key_hash_value.h"
#include "url/url_canonicalizer.h"

namespace urlsieve {

class SeenFilter;

// One page's links on their way to the seen stage.
struct LinkBatch {
  std::vector<CanonicalUrl> urls;  // fetch form, in scope; after Admit: the new ones only
  uint32_t depth = 0;              // the depth they were found at
  std::string_view parent;         // the page they were found on ("" for seeds)
  // The seen stage's key of each URL and its hash (KeyLinks).
  std::vector<std::string_view> keys;
  std::vector<KeyHash> hashes;
  std::vector<std::string> rule_keys;  // the keys' storage under opt-in rules
  // Under learned URL rules (url/dust_learner.h): per URL, the rule key seen-tested instead of its
  // own ("" = its own); empty when no rule rewrote any.
  std::vector<std::string> dust_keys;

  // Keeps urls[i] where is_new[i], in order; returns how many. keys and hashes are stale after.
  size_t KeepNew(const bool* is_new);
};

// Fills batch->keys and hashes: each URL's fetch form itself (or its dust_keys entry), or under
// opt-in rules
// (`opt_in_rules`) the key `seen`'s canonicalizer makes of it (the one step that reads the URL
// again, and only when a rule is on).
Status KeyLinks(const SeenFilter& seen, bool opt_in_rules, LinkBatch* batch);

// Where Admission::AdmitSitemap queued a sitemap.
enum class SitemapQueued : uint8_t {
  kLocally,  // in the local frontier: the crawl's SitemapStore keeps it pending until read
  kRouted,   // in the inbox of its host's partition (a cluster): its owner reads it
  kBefore,   // not queued: it was, earlier in this crawl (by another node of its cluster)
};

struct Admitted {
  int fresh = 0;  // URLs new to the seen stage and queued (left in LinkBatch::urls)
  // The seen stage answered: its answers are counted (CrawlStats::RecordSeen). False when a
  // shared set never answered and the batch was queued whole.
  bool answered = true;
  // False: the links were not taken (a stop while the cluster's seen set did not answer); the
  // page must not be recorded, so that its work item is handed out again.
  bool taken = true;
};

class Admission {
 public:
  virtual ~Admission() = default;

  // Seen-tests a keyed batch and queues the URLs new to the seen stage, leaving only those in
  // batch->urls. A non-OK Status fails the crawl (some URL may not have been queued).
  virtual Result<Admitted> Admit(LinkBatch* batch) = 0;
  // Queues a sitemap to read at nesting level `nesting`, named by `parent`, where the deployment
  // keeps its pending work (a cluster reads a sitemap once per crawl and re-crawl round,
  // whichever node finds it). The crawler claims it first (SitemapStore::Claim: this node's
  // budget and repeats).
  virtual Result<SitemapQueued> AdmitSitemap(const CanonicalUrl& url, uint32_t nesting,
                                             std::string_view parent) = 0;
  // Whether what Admit queues is in the local checkpoint (see above).
  virtual bool NeedsGate() const { return true; }
  // Ends the waits for a seen set that does not answer (a stop).
  virtual void Stop() {}
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CRAWL_ADMISSION_H_
