// DustLearner: learns, while a crawl runs, which URLs of a site are the same page ("DUST":
// different URLs with similar text — Bar-Yossef, Keidar and Schonfeld, WWW 2007), and which are
// not worth fetching, and tells the crawl which links it need not fetch (docs/features/dust.md;
// DESIGN §5).
//
// Evidence: every fetched page of an origin, with its content fingerprint (payload digest,
// SimHash) and whether it is barren (noindex/nofollow, or a 4xx error). A pair of pages the
// content-seen test found equal or near-equal proposes candidate rules (UrlRule, url/url_rule.h):
// the smallest differences between the two URLs. A barren page proposes skip rules for its path
// and its short parameter values.
// Scoring: a candidate keeps, per rule key, the fingerprint of the first page that had it. Each
// later page whose rule key is known supports the candidate (the same page: equal digests, or
// SimHashes within max_distance) or contradicts it; a skip candidate counts its barren and not
// barren pages. Confidence = support / (support + contradictions).
// Life of a rule: candidate → (support ≥ min_support, confidence ≥ min_confidence, its lower
// bound at 95 % ≥ min_confidence_bound) validating →
// (validation_sample checks passed: URLs the rule would rewrite or skip, fetched anyway and found
// the same page, or barren) active → retired when a later check contradicts it. A validating rule
// that fails a check is rejected. The 4th and 16th URL an active rule would suppress, then every
// check_every-th, is fetched as a check (all checks together stay under max_check_share of the
// pages fetched: past it, a rule on probation is validated by the pages fetched anyway); an
// active rule is retired when one of its checks finds another page (a check samples what the
// rule suppresses, which its evidence cannot speak for), or when its confidence falls below
// min_confidence. A retired rule's suppressed URLs are handed back (TakeRequeue) to be queued
// again. Rules of a --rules-file are pinned (active, never retired) or forbidden (never adopted).
//
// Thread-safety: every method may be called from any thread; one mutex guards the model (the
// crawl calls Decide once per page's links and Observe once per fetched page).
#ifndef URLSIEVE_URL_DUST_LEARNER_H_
#define URLSIEVE_URL_DUST_LEARNER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "url/url_canonicalizer.h"
#include "url/url_rule.h"

namespace urlsieve {

enum class DustMode : uint8_t {
  kOff,    // no learning, no rule applied
  kLearn,  // learn and validate rules from what is fetched anyway; never suppress
  kApply,  // learn, validate, and suppress the URLs active rules cover
};
std::string_view DustModeName(DustMode mode);
Result<DustMode> ParseDustMode(std::string_view name);

struct DustOptions {
  DustMode mode = DustMode::kApply;
  uint32_t min_support = 5;      // pairs (or barren pages) before a candidate is validated
  double min_confidence = 0.95;  // support / (support + contradictions)
  // And the confidence's lower bound at 95 % (Wilson score interval): 16 pairs without a
  // counter-example, 24 with one, 31 with two. Near copies are noisy evidence: a handful that
  // agree by chance must not suppress thousands of URLs.
  double min_confidence_bound = 0.8;
  uint32_t validation_sample = 3;  // checks a rule passes before it suppresses anything
  uint32_t check_every = 50;  // an active rule checks its 4th, 16th, then every Nth covered URL
  // Checks (validation and spot) stay under this share of the pages fetched (at least 10).
  double max_check_share = 0.015;
  int max_distance = 3;  // SimHashes this close are the same page
  size_t max_candidates_per_origin = 256;
  size_t max_keys_per_candidate = 8192;  // rule keys remembered per candidate
};

enum class RuleState : uint8_t { kCandidate, kValidating, kActive, kRetired, kRejected };
std::string_view RuleStateName(RuleState state);
Result<RuleState> ParseRuleState(std::string_view name);

// A page's content, as the content-seen test sees it.
struct PageFingerprint {
  uint64_t digest = 0;
  uint64_t simhash = 0;
  bool has_simhash = false;
};

// A rule with its evidence: what the state keeps and `urlsieve rules` lists.
struct RuleRecord {
  std::string origin;  // "scheme://host[:port]"
  UrlRule rule;
  std::string id;  // RuleId(origin, rule)
  RuleState state = RuleState::kCandidate;
  bool pinned = false;     // a --rules-file pin: active, never retired
  bool forbidden = false;  // a --rules-file forbid: never adopted
  uint64_t support = 0;
  uint64_t contradictions = 0;
  uint64_t validated = 0;  // checks passed
  uint64_t checks = 0;     // URLs fetched as checks (validation fetches)
  uint64_t suppressed = 0;
  std::string example;  // a pair that proposed it: "first ≡ copy" (or the barren page)

  double confidence() const {
    const uint64_t seen = support + contradictions;
    return seen == 0 ? 0.0 : static_cast<double>(support) / static_cast<double>(seen);
  }
};

// What to do with one link.
struct LinkDecision {
  enum class Kind : uint8_t {
    kKeep,     // the URL's own key
    kRewrite,  // seen-test rule_key instead: when it is not new, the URL is suppressed (rule_id)
    kSkip,     // a skip rule covers it: suppressed (rule_id)
    kCheck,    // fetch it as a check of rule_id (its own key)
  };
  Kind kind = Kind::kKeep;
  size_t index = 0;  // of the URL in the batch
  std::string rule_id;
  std::string rule_key;  // kRewrite
};

// A URL a rule kept the crawl from fetching, as it was found.
struct SuppressedUrl {
  std::string rule_id;
  std::string url;
  uint32_t depth = 0;
  std::string parent;
  // It had been queued (its own key is in the seen set) and was skipped when its turn came
  // (SkipFetched): queued again, it goes to the frontier directly, not through the seen stage.
  bool queued = false;
};

struct DustCounters {
  uint64_t suppressed = 0;
  uint64_t validation_fetches = 0;
  uint64_t requeued = 0;
  // Rules by state (computed, not stored).
  uint64_t rules_active = 0;
  uint64_t rules_validating = 0;
  uint64_t rules_retired = 0;
  uint64_t rules_rejected = 0;
  uint64_t candidates = 0;
};

class DustLearner {
 public:
  explicit DustLearner(DustOptions options);
  ~DustLearner();
  DustLearner(const DustLearner&) = delete;
  DustLearner& operator=(const DustLearner&) = delete;

  const DustOptions& options() const { return options_; }

  // Rules from the state (Records()) and their suppressed URLs, before the crawl starts.
  void Restore(const std::vector<RuleRecord>& records, std::vector<SuppressedUrl> suppressed,
               const DustCounters& counters);
  // A --rules-file entry: pinned (active from now on, never retired) or forbidden.
  Status AddUserRule(std::string_view origin, std::string_view form, bool pin);

  // A rule another crawl on the same shared set adopted (`retired` false: it becomes active here,
  // unless forbidden or already retired) or retired (retired here too; its suppressed URLs are
  // handed back). A form that does not parse is ignored (another version's).
  void Merge(std::string_view origin, std::string_view form, bool retired);

  // The decisions for a page's links (fetch form) that are not kKeep, in order, each with its
  // URL's index. In kLearn mode every link is kept (none).
  void Decide(std::span<const CanonicalUrl> urls, std::vector<LinkDecision>* decisions);
  // A URL decided kRewrite whose rule key was not new, or kSkip: it is not fetched. False (nothing
  // recorded) for a URL Admitted under that rule: found again, it is a URL seen, not a copy.
  bool Suppressed(SuppressedUrl url);
  // A URL decided kRewrite (by rule_id) whose rule key was new: it is queued, the page of its key.
  // A page links the same URL again and again; those are not suppressed copies (their rule
  // retired, they are not queued again: the page was fetched).
  void Admitted(std::string_view rule_id, std::string_view url);
  // A URL decided kCheck that was not queued (its own key was not new): the check is given back.
  void CheckNotQueued(std::string_view url);
  // A queued URL about to be fetched (fetch form): the id of an active rule that makes fetching
  // it useless — a skip rule covers it, or a rewrite rule maps it to a rule key whose page was
  // fetched under another URL — or "". URLs queued before their rule was adopted are caught here.
  // When the rule is due for a check, "": the URL is fetched as its check (no wait in a queue).
  std::string SkipFetched(std::string_view url);

  // A fetched page (`url` in fetch form). `first_copy`: the first copy's URL when the content-seen
  // test found the page a copy ("" otherwise). Returns the id of the rule this fetch checked
  // (pages.jsonl "dust_check"), or "".
  std::string Observe(std::string_view url, const PageFingerprint& fingerprint, bool barren,
                      std::string_view first_copy);

  // The URLs of rules retired since the last call, to be queued again.
  std::vector<SuppressedUrl> TakeRequeue();

  // The rules worth keeping (everything but plain candidates), sorted by origin then form.
  std::vector<RuleRecord> Records() const;
  // Suppressed URLs of live rules recorded since the last call (the checkpoint appends them).
  std::vector<SuppressedUrl> TakeNewSuppressed();
  // Ids of rules retired since the last call (the checkpoint drops their suppressed URLs).
  std::vector<std::string> TakeRetiredIds();
  DustCounters counters() const;

 private:
  struct Candidate;
  struct Origin;
  Origin& OriginFor(std::string_view origin);  // requires mu_
  Candidate* Propose(Origin& origin, const UrlRule& rule, std::string_view example);
  // false: kKeep. `before`: bytes of the URL's key before its query; `has_param`: the URL has a
  // parameter an active rule needs (HasParamOfRules).
  bool MayDecide(const Origin& origin, std::string_view path, std::string_view query, size_t before,
                 bool has_param) const;
  LinkDecision DecideOne(Origin& origin, const CanonicalUrl& url, bool has_param);
  // A filter of the origins that have (or had) live rules, so that the links of the others cost
  // a few instructions: one bit per hash of the origin, set when an origin gets a live rule.
  static constexpr int kLiveFilterBits = 16;
  static uint32_t OriginBit(std::string_view origin);
  // The hash of origins_: a multiply per 8 bytes (std::hash's Murmur, a call, cost 80 instructions
  // at each change of origin in a page's links).
  static uint64_t OriginHash(std::string_view origin);
  bool MayBeLive(std::string_view origin) const;
  void Relist(std::string_view name, Origin& origin);
  // `check_of`: the rule this fetch checks ("" none).
  void Score(Origin& origin, std::string_view key, const UrlTail& tail,
             const PageFingerprint& fingerprint, bool barren, std::string_view check_of,
             std::string* checked);
  void Promote(Origin& origin, Candidate& candidate);
  void Retire(Candidate& candidate);
  // The same page: equal digests, or SimHashes within max_distance.
  bool Same(const PageFingerprint& a, const PageFingerprint& b) const;
  // `tail` under the origin's active rewrite rules but `except`; *changed_by: the ids of those
  // that changed it, in order.
  static UrlTail Normalized(const Origin& origin, UrlTail tail, const Candidate* except,
                            std::vector<std::string>* changed_by = nullptr);

  const DustOptions options_;
  mutable std::mutex mu_;
  // Guarded by mu_.
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return OriginHash(s); }
  };
  std::unordered_map<std::string, std::unique_ptr<Origin>, StringHash, std::equal_to<>> origins_;
  std::unordered_map<std::string, Candidate*> by_id_;
  std::unordered_map<std::string, std::string> checks_;  // URL being checked → rule id
  std::vector<SuppressedUrl> requeue_;
  std::vector<SuppressedUrl> new_suppressed_;
  std::vector<std::string> retired_ids_;
  DustCounters counters_;
  bool states_changed_ = false;  // since Observe last relisted its origin's live rules
  uint64_t pages_observed_ = 0;
  uint64_t checks_fetched_ = 0;          // checks fetched by this crawl (max_check_share)
  static constexpr int kMinChecks = 10;  // allowed whatever the crawl's size
  // Whether another check may be issued: checks fetched and outstanding (checks_) stay under
  // max_check_share of the pages fetched (or kMinChecks). `at_lease`: the URL is about to be
  // fetched (SkipFetched), not queued.
  bool MayCheck(bool at_lease) const;
  // Counts a URL `c` covers; whether it is due for a check.
  bool CheckDue(Candidate& c);
  void IssueCheck(Candidate& c, std::string url);
  std::vector<uint64_t> live_filter_ = std::vector<uint64_t>((1u << kLiveFilterBits) / 64);
};

}  // namespace urlsieve

#endif  // URLSIEVE_URL_DUST_LEARNER_H_
