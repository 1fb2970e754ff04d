#include "url/dust_learner.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <functional>
#include <optional>
#include <set>

#include "url/url_parts.h"

namespace urlsieve {
namespace {

constexpr std::string_view kModeNames[] = {"off", "learn", "apply"};
constexpr std::string_view kStateNames[] = {"candidate", "validating", "active", "retired",
                                            "rejected"};

// Parameter values longer than this are identifiers (a return URL, a hash), not a page kind.
constexpr size_t kMaxSkipValue = 32;
// Pages remembered per origin for SkipFetched.
constexpr size_t kMaxFetchedKeys = 1 << 18;
// A pair that differs in more parameters than this is not one rule's doing.
constexpr size_t kMaxDroppedNames = 4;
// Page-kind scoped variants proposed per pair; parameter names whose values are tracked.
constexpr size_t kMaxKindScopes = 2;
constexpr size_t kMaxTrackedParams = 1024;

UrlTail TailOf(std::string_view path_and_query) {
  const size_t q = path_and_query.find('?');
  UrlTail tail;
  tail.path = std::string(path_and_query.substr(0, q));
  if (q != std::string_view::npos) tail.query = std::string(path_and_query.substr(q + 1));
  return tail;
}

std::vector<std::string_view> SortedTexts(const std::vector<QueryParam>& params) {
  std::vector<std::string_view> texts;
  for (const QueryParam& p : params) texts.push_back(p.text);
  std::sort(texts.begin(), texts.end());
  return texts;
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

// Rules that would make the two tails (one origin) one: the smallest differences. `kind_param`
// tells which parameter names select a kind of page (several values seen on the origin).
template <typename KindParam>
std::vector<UrlRule> Explain(const UrlTail& a, const UrlTail& b, KindParam kind_param) {
  std::vector<UrlRule> rules;
  const std::vector<QueryParam> pa = SplitQuery(a.query);
  const std::vector<QueryParam> pb = SplitQuery(b.query);
  const std::vector<std::string_view> sa = SortedTexts(pa);
  const std::vector<std::string_view> sb = SortedTexts(pb);
  if (a.path == b.path) {
    if (sa == sb) {
      if (a.query != b.query) rules.push_back({UrlRuleKind::kSortParams, "", "", "", ""});
      return rules;
    }
    // The parameters in one and not the other (as multisets): dropping every name among them
    // makes the two equal (the parameters they share stay the same on both sides).
    std::vector<std::string_view> only;
    std::set_symmetric_difference(sa.begin(), sa.end(), sb.begin(), sb.end(),
                                  std::back_inserter(only));
    std::vector<std::string_view> names;
    for (std::string_view text : only) names.push_back(text.substr(0, text.find('=')));
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    if (names.size() > kMaxDroppedNames) return rules;
    std::string list;
    for (std::string_view n : names) list.append(list.empty() ? "" : ",").append(n);
    rules.push_back({UrlRuleKind::kDropParam, "", list, "", ""});
    rules.push_back({UrlRuleKind::kDropParam, a.path, list, "", ""});
    // The same, in the pair's page kind only: a parameter both share, with one short value.
    std::vector<std::string_view> shared;
    std::set_intersection(sa.begin(), sa.end(), sb.begin(), sb.end(), std::back_inserter(shared));
    size_t scoped = 0;
    for (std::string_view text : shared) {
      const size_t eq = text.find('=');
      if (eq == std::string_view::npos || eq + 1 == text.size() || text.size() - eq > 17) continue;
      const std::string_view name = text.substr(0, eq);
      if (std::binary_search(names.begin(), names.end(), name) || !kind_param(name)) continue;
      rules.push_back({UrlRuleKind::kDropParam, "", list, "", std::string(text)});
      if (++scoped == kMaxKindScopes) break;
    }
    const size_t eq = only.front().find('=');
    if (only.size() == 1 && eq != std::string_view::npos) {
      rules.push_back(
          {UrlRuleKind::kDropParamValue, "", list, std::string(only.front().substr(eq + 1)), ""});
    }
    return rules;
  }
  if (sa == sb) {
    if (EqualsIgnoringCase(a.path, b.path)) {
      rules.push_back({UrlRuleKind::kIgnoreCase, "", "", "", ""});
      return rules;
    }
    const std::string& shorter = a.path.size() < b.path.size() ? a.path : b.path;
    const std::string& longer = a.path.size() < b.path.size() ? b.path : a.path;
    if (shorter.ends_with('/') && longer.starts_with(shorter) &&
        longer.find('/', shorter.size()) == std::string::npos) {
      rules.push_back({UrlRuleKind::kIndexFile, "", longer.substr(shorter.size()), "", ""});
      return rules;
    }
    // An alias: the longest common suffix starting at a '/', the prefixes before it differ.
    size_t common = 0;
    while (common < a.path.size() && common < b.path.size() &&
           a.path[a.path.size() - 1 - common] == b.path[b.path.size() - 1 - common]) {
      ++common;
    }
    std::string_view suffix = std::string_view(a.path).substr(a.path.size() - common);
    const size_t slash = suffix.find('/');
    if (slash == std::string_view::npos || suffix.size() - slash < 2) return rules;
    suffix.remove_prefix(slash);
    std::string from = a.path.substr(0, a.path.size() - suffix.size()) + "/";
    std::string to = b.path.substr(0, b.path.size() - suffix.size()) + "/";
    if (from.size() < to.size() || (from.size() == to.size() && from < to)) std::swap(from, to);
    rules.push_back({UrlRuleKind::kAlias, "", std::move(from), std::move(to), ""});
    return rules;
  }
  // PATH?NAME=V and TO+V: a script's page under its path form.
  const UrlTail& with_query = pa.size() == 1 && pb.empty() ? a : b;
  const UrlTail& path_form = pa.size() == 1 && pb.empty() ? b : a;
  const std::vector<QueryParam>& one = pa.size() == 1 && pb.empty() ? pa : pb;
  if (one.size() == 1 && path_form.query.empty() && !one[0].value.empty() &&
      path_form.path.ends_with(one[0].value)) {
    const std::string to = path_form.path.substr(0, path_form.path.size() - one[0].value.size());
    if (to.ends_with('/')) {
      rules.push_back({UrlRuleKind::kParamPath, with_query.path, std::string(one[0].name), to, ""});
    }
  }
  return rules;
}

uint64_t UrlHash(std::string_view url) { return std::hash<std::string_view>()(url); }

}  // namespace

std::string_view DustModeName(DustMode mode) { return kModeNames[static_cast<int>(mode)]; }

Result<DustMode> ParseDustMode(std::string_view name) {
  for (size_t i = 0; i < std::size(kModeNames); ++i) {
    if (kModeNames[i] == name) return static_cast<DustMode>(i);
  }
  std::string message("--dust: \"");
  message.append(name).append("\" is not a mode (off, learn, apply)");
  return Status::InvalidArgument(std::move(message));
}

std::string_view RuleStateName(RuleState state) { return kStateNames[static_cast<int>(state)]; }

Result<RuleState> ParseRuleState(std::string_view name) {
  for (size_t i = 0; i < std::size(kStateNames); ++i) {
    if (kStateNames[i] == name) return static_cast<RuleState>(i);
  }
  // Built with append: GCC 12 -O3 reports a false -Wrestrict on "literal" + string here.
  std::string message(1, '"');
  message.append(name).append("\" is not a URL rule state");
  return Status::Corruption(std::move(message));
}

struct DustLearner::Candidate {
  RuleRecord record;
  struct Seen {
    PageFingerprint fingerprint;
    uint64_t url_hash = 0;
  };
  std::unordered_map<std::string, Seen> keys;  // rule key → the first page that had it
  uint64_t covered = 0;                        // URLs it would have suppressed (check_every)
  std::vector<SuppressedUrl> suppressed;       // while live: queued again if it is retired
  uint32_t pending_checks = 0;
  Origin* origin = nullptr;   // the origin it belongs to
  bool needs_params = false;  // the rule needs a parameter of its own (UrlRule::ParamNames)

  bool live() const {
    return record.state == RuleState::kActive || record.state == RuleState::kValidating;
  }
};

struct DustLearner::Origin {
  std::vector<std::unique_ptr<Candidate>> candidates;
  // The pages fetched, by their rule key under the active rules when they were fetched (bounded):
  // SkipFetched's memory. Cleared when a rule is retired (keys made with it are wrong).
  struct Fetched {
    uint64_t url_hash = 0;
    std::string rule_id;  // the rule that changed the page's URL ("" none)
  };
  std::unordered_map<std::string, Fetched> fetched;
  // Up to two values of each parameter name seen (bounded): a name with two may be a page kind,
  // the `where` of a drop rule.
  std::unordered_map<std::string, std::set<std::string>> param_values;
  // The live rules, active ones in a fixed order (skip rules first, then by form), so that a URL
  // gets one rule key whatever the order the rules were learned in.
  std::vector<Candidate*> active;
  std::vector<Candidate*> validating;

  // The parameter names the active parameter rules need (sorted): a URL whose query has none of
  // them skips those rules after one pass over its parameters.
  std::vector<std::string> param_names;
  static constexpr size_t kFewNames = 4;
  bool NeedsParams(const UrlRule& rule) const {
    std::vector<std::string> unused;
    return rule.ParamNames(&unused);
  }
  // A 64-bit mask of the names' first bytes (mod 64): most parameters are told apart by one AND.
  uint64_t first_bytes = 0;
  bool HasParamOfRules(std::string_view query) const {
    if (query.empty() || param_names.empty()) return false;
    if (param_names.size() <= kFewNames) {
      // A search per name (memchr-led) beats a pass over the query's bytes.
      for (const std::string& name : param_names) {
        for (size_t at = query.find(name); at != std::string_view::npos;
             at = query.find(name, at + 1)) {
          const size_t end = at + name.size();
          if ((at == 0 || query[at - 1] == '&' || query[at - 1] == ';') &&
              (end == query.size() || query[end] == '=' || query[end] == '&' ||
               query[end] == ';')) {
            return true;
          }
        }
      }
      return false;
    }
    size_t i = 0;
    while (i < query.size()) {
      size_t end = i;
      while (end < query.size() && query[end] != '&' && query[end] != ';' && query[end] != '=') {
        ++end;
      }
      if (end > i && ((first_bytes >> (static_cast<unsigned char>(query[i]) & 63)) & 1) &&
          std::binary_search(param_names.begin(), param_names.end(), query.substr(i, end - i))) {
        return true;
      }
      while (end < query.size() && query[end] != '&' && query[end] != ';') ++end;
      i = end + 1;
    }
    return false;
  }

  void Relist() {
    active.clear();
    validating.clear();
    param_names.clear();
    for (const auto& c : candidates) {
      if (c->record.state == RuleState::kActive) active.push_back(c.get());
      if (c->record.state == RuleState::kValidating) validating.push_back(c.get());
    }
    std::sort(active.begin(), active.end(), [](const Candidate* x, const Candidate* y) {
      if (x->record.rule.skips() != y->record.rule.skips()) return x->record.rule.skips();
      return x->record.rule.Form() < y->record.rule.Form();
    });
    for (const Candidate* c : active) c->record.rule.ParamNames(&param_names);
    std::sort(param_names.begin(), param_names.end());
    param_names.erase(std::unique(param_names.begin(), param_names.end()), param_names.end());
    first_bytes = 0;
    for (const std::string& n : param_names) {
      if (!n.empty()) first_bytes |= uint64_t{1} << (static_cast<unsigned char>(n[0]) & 63);
    }
  }
};

DustLearner::DustLearner(DustOptions options) : options_(options) {}
DustLearner::~DustLearner() = default;

void DustLearner::Relist(std::string_view name, Origin& origin) {
  origin.Relist();
  if (origin.active.empty() && origin.validating.empty()) return;
  const uint32_t bit = OriginBit(name);
  live_filter_[bit / 64] |= uint64_t{1} << (bit % 64);
}

DustLearner::Origin& DustLearner::OriginFor(std::string_view origin) {
  auto it = origins_.find(origin);
  if (it == origins_.end()) {
    it = origins_.emplace(std::string(origin), std::make_unique<Origin>()).first;
  }
  return *it->second;
}

DustLearner::Candidate* DustLearner::Propose(Origin& origin, const UrlRule& rule,
                                             std::string_view example) {
  for (const auto& c : origin.candidates) {
    if (c->record.rule == rule) return c.get();
  }
  if (origin.candidates.size() >= options_.max_candidates_per_origin) {
    // Make room: the weakest plain candidate goes (it has the least evidence).
    auto weakest = origin.candidates.end();
    for (auto it = origin.candidates.begin(); it != origin.candidates.end(); ++it) {
      const RuleRecord& r = (*it)->record;
      if (r.state != RuleState::kCandidate || r.pinned || r.forbidden) continue;
      if (weakest == origin.candidates.end() || r.support < (*weakest)->record.support) {
        weakest = it;
      }
    }
    if (weakest == origin.candidates.end() || (*weakest)->record.support > 1) return nullptr;
    by_id_.erase((*weakest)->record.id);
    origin.candidates.erase(weakest);
  }
  auto candidate = std::make_unique<Candidate>();
  candidate->origin = &origin;
  candidate->record.rule = rule;
  candidate->needs_params = origin.NeedsParams(rule);
  candidate->record.example = std::string(example);
  Candidate* raw = candidate.get();
  origin.candidates.push_back(std::move(candidate));
  return raw;
}

UrlTail DustLearner::Normalized(const Origin& origin, UrlTail tail, const Candidate* except,
                                const Candidate** changed_by) {
  for (const Candidate* c : origin.active) {
    if (c == except || c->record.rule.skips()) continue;
    if (!c->record.rule.MayRewrite(tail.path, tail.query)) continue;
    if (c->record.rule.Rewrite(&tail) && changed_by != nullptr && *changed_by == nullptr) {
      *changed_by = c;
    }
  }
  return tail;
}

DustLearner::Sameness DustLearner::Compare(const PageFingerprint& a,
                                           const PageFingerprint& b) const {
  if (a.digest == b.digest) return Sameness::kSame;
  if (!a.has_simhash || !b.has_simhash) return Sameness::kDifferent;
  const int distance = std::popcount(a.simhash ^ b.simhash);
  if (distance <= options_.max_distance) return Sameness::kSame;
  // Near-duplication is not transitive: two copies of one page may each be near it and farther
  // from each other. Only a page clearly farther is a counter-example.
  return distance > 2 * options_.max_distance ? Sameness::kDifferent : Sameness::kUnsure;
}

void DustLearner::Promote(Origin& origin, Candidate& c) {
  RuleRecord& r = c.record;
  if (r.forbidden || r.pinned) return;
  if (r.state == RuleState::kCandidate && r.support >= options_.min_support &&
      r.confidence() >= options_.min_confidence) {
    // A rule a live one covers adds nothing but checks; and a rule goes no wider than its
    // evidence: when a page-kind variant explains all of it, that one is adopted instead.
    for (const auto& other : origin.candidates) {
      if (other->live() && Subsumes(other->record.rule, r.rule)) return;
      if (r.rule.where.empty() && !other->record.rule.where.empty() &&
          other->record.support >= r.support && Subsumes(r.rule, other->record.rule)) {
        return;
      }
    }
    r.state = RuleState::kValidating;
    states_changed_ = true;
  }
  if (r.state == RuleState::kValidating && r.validated >= options_.validation_sample) {
    r.state = RuleState::kActive;
    states_changed_ = true;
    // The rules it covers step back (their suppressed URLs are now its own: retiring it queues
    // them again).
    for (const auto& other : origin.candidates) {
      if (!other->live() || other->record.pinned || !Subsumes(r.rule, other->record.rule)) continue;
      other->record.state = RuleState::kCandidate;
      for (SuppressedUrl& url : other->suppressed) {
        url.rule_id = r.id;
        c.suppressed.push_back(std::move(url));
      }
      other->suppressed.clear();
    }
  }
}

void DustLearner::Retire(Candidate& c) {
  RuleRecord& r = c.record;
  if (r.pinned) return;
  states_changed_ = true;
  if (r.state == RuleState::kValidating) {
    r.state = RuleState::kRejected;
    return;
  }
  if (r.state != RuleState::kActive) return;
  r.state = RuleState::kRetired;
  c.origin->fetched.clear();
  counters_.requeued += c.suppressed.size();
  for (SuppressedUrl& url : c.suppressed) requeue_.push_back(std::move(url));
  c.suppressed.clear();
  c.suppressed.shrink_to_fit();
  retired_ids_.push_back(r.id);
}

void DustLearner::Restore(const std::vector<RuleRecord>& records,
                          std::vector<SuppressedUrl> suppressed, const DustCounters& counters) {
  std::lock_guard<std::mutex> lock(mu_);
  counters_.suppressed = counters.suppressed;
  counters_.validation_fetches = counters.validation_fetches;
  counters_.requeued = counters.requeued;
  for (const RuleRecord& record : records) {
    Origin& origin = OriginFor(record.origin);
    Candidate* c = Propose(origin, record.rule, record.example);
    if (c == nullptr) continue;
    c->record = record;
    c->record.id = RuleId(record.origin, record.rule);
    by_id_[c->record.id] = c;
  }
  for (SuppressedUrl& url : suppressed) {
    auto it = by_id_.find(url.rule_id);
    if (it != by_id_.end() && it->second->live()) it->second->suppressed.push_back(std::move(url));
  }
  for (auto& [name, origin] : origins_) Relist(name, *origin);
}

Status DustLearner::AddUserRule(std::string_view origin_name, std::string_view form, bool pin) {
  Result<UrlRule> rule = UrlRule::Parse(form);
  if (!rule.ok()) return rule.status();
  std::lock_guard<std::mutex> lock(mu_);
  Origin& origin = OriginFor(origin_name);
  Candidate* c = Propose(origin, *rule, "--rules-file");
  if (c == nullptr)
    return Status::InvalidArgument("too many URL rules for " + std::string(origin_name));
  RuleRecord& r = c->record;
  r.origin = std::string(origin_name);
  r.id = RuleId(origin_name, *rule);
  r.pinned = pin;
  r.forbidden = !pin;
  r.state = pin ? RuleState::kActive : RuleState::kCandidate;
  by_id_[r.id] = c;
  Relist(origin_name, origin);
  return Status::Ok();
}

void DustLearner::Merge(std::string_view origin_name, std::string_view form, bool retired) {
  Result<UrlRule> rule = UrlRule::Parse(form);
  if (!rule.ok()) return;
  std::lock_guard<std::mutex> lock(mu_);
  Origin& origin = OriginFor(origin_name);
  Candidate* c = Propose(origin, *rule, "shared");
  if (c == nullptr) return;
  RuleRecord& r = c->record;
  if (r.id.empty()) {
    r.origin = std::string(origin_name);
    r.id = RuleId(origin_name, *rule);
    by_id_[r.id] = c;
  }
  if (retired) {
    if (r.state == RuleState::kCandidate) r.state = RuleState::kRejected;
    Retire(*c);
  } else if (!r.forbidden &&
             (r.state == RuleState::kCandidate || r.state == RuleState::kValidating)) {
    r.state = RuleState::kActive;
  }
  Relist(origin_name, origin);
}

void DustLearner::Decide(std::span<const CanonicalUrl> urls, std::vector<LinkDecision>* decisions) {
  decisions->clear();
  if (options_.mode != DustMode::kApply) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (by_id_.empty()) return;
  std::string_view last_name;  // a page's links mostly share their origin: one lookup per run
  Origin* origin = nullptr;
  for (size_t i = 0; i < urls.size(); ++i) {
    const CanonicalUrl& url = urls[i];
    if (url.origin() != last_name) {
      last_name = url.origin();
      origin = nullptr;
      if (MayBeLive(last_name)) {
        auto found = origins_.find(last_name);
        if (found != origins_.end()) origin = found->second.get();
      }
    }
    if (origin == nullptr || (origin->active.empty() && origin->validating.empty())) continue;
    if (!MayDecide(*origin, url)) continue;
    LinkDecision decision = DecideOne(*origin, url);
    if (decision.kind == LinkDecision::Kind::kKeep) continue;
    decision.index = i;
    decisions->push_back(std::move(decision));
  }
}

bool DustLearner::MayCheck() const {
  const double allowed = std::max(static_cast<double>(kMinChecks),
                                  options_.max_check_share * static_cast<double>(pages_observed_));
  return static_cast<double>(checks_issued_) < allowed;
}

bool DustLearner::MayDecide(const Origin& origin, const CanonicalUrl& url) const {
  // Most links of an origin with rules are covered by none: told apart without building anything.
  const std::string_view path = url.path();
  const std::string_view query = url.query();
  auto may = [&](const Candidate* c) {
    const UrlRule& rule = c->record.rule;
    return rule.skips() ? rule.Matches(path, query) : rule.MayRewrite(path, query);
  };
  if (std::any_of(origin.validating.begin(), origin.validating.end(), may)) return true;
  // The active rules' parameter names are indexed (HasParamOfRules).
  const bool has_param = origin.HasParamOfRules(query);
  return std::any_of(origin.active.begin(), origin.active.end(),
                     [&](const Candidate* c) { return (!c->needs_params || has_param) && may(c); });
}

LinkDecision DustLearner::DecideOne(Origin& origin, const CanonicalUrl& url) {
  LinkDecision decision;  // kKeep; its strings are empty (no allocation) unless decided otherwise
  const std::string_view path = url.path();
  const std::string_view query = url.query();
  // A validating rule takes the URLs it covers as its checks, up to its sample.
  for (Candidate* c : origin.validating) {
    const UrlRule& rule = c->record.rule;
    if (c->record.validated + c->pending_checks >= options_.validation_sample) continue;
    // Past the checks' share, a rule on probation waits for pages fetched anyway that it covers.
    if (!MayCheck()) break;
    // A check is compared with whichever page of its rule key the crawl fetches, before or after.
    bool covered = rule.skips() && rule.Matches(path, query);
    if (!rule.skips() && rule.MayRewrite(path, query)) {
      UrlTail rewritten{std::string(path), std::string(query)};
      covered = rule.Rewrite(&rewritten);
    }
    if (!covered || checks_.count(url.key()) > 0) continue;
    ++checks_issued_;
    ++c->pending_checks;
    checks_[url.key()] = c->record.id;
    decision.kind = LinkDecision::Kind::kCheck;
    decision.rule_id = c->record.id;
    return decision;
  }
  std::optional<UrlTail> rewritten;  // made by the first rule that changes the URL
  Candidate* first = nullptr;
  const bool has_param = origin.HasParamOfRules(query);
  for (Candidate* c : origin.active) {
    const UrlRule& rule = c->record.rule;
    if (!has_param && c->needs_params) continue;
    if (rule.skips()) {
      if (!rule.Matches(path, query)) continue;
      first = c;
      decision.kind = LinkDecision::Kind::kSkip;
      break;
    }
    if (!rewritten) {
      if (!rule.MayRewrite(path, query)) continue;
      rewritten = UrlTail{std::string(path), std::string(query)};
    }
    if (rule.Rewrite(&*rewritten) && first == nullptr) first = c;
  }
  if (first == nullptr) return decision;
  decision.rule_id = first->record.id;
  if (decision.kind != LinkDecision::Kind::kSkip) {
    decision.kind = LinkDecision::Kind::kRewrite;
    decision.rule_key = JoinTail(url.origin(), *rewritten);
  }
  // Every check_every-th URL a rule covers is fetched as a check (its own key), while checks stay
  // under max_check_share of the pages fetched.
  if (!first->record.pinned && options_.check_every > 0 &&
      ++first->covered % options_.check_every == 0 && MayCheck() && checks_.count(url.key()) == 0) {
    ++checks_issued_;
    ++first->pending_checks;
    checks_[url.key()] = first->record.id;
    decision.kind = LinkDecision::Kind::kCheck;
    decision.rule_key.clear();
  }
  return decision;
}

uint32_t DustLearner::OriginBit(std::string_view origin) {
  // The first and last 8 bytes and the length: origins differ in their host's end or start.
  uint64_t a = 0;
  uint64_t b = 0;
  std::memcpy(&a, origin.data(), std::min<size_t>(8, origin.size()));
  if (origin.size() >= 8) std::memcpy(&b, origin.data() + origin.size() - 8, 8);
  const uint64_t h = (a * 0x9E3779B97F4A7C15ull) ^ (b * 0xC2B2AE3D27D4EB4Full) ^ origin.size();
  return static_cast<uint32_t>(h >> (64 - kLiveFilterBits));
}

bool DustLearner::MayBeLive(std::string_view origin) const {
  const uint32_t bit = OriginBit(origin);
  return (live_filter_[bit / 64] >> (bit % 64)) & 1;
}

void DustLearner::Suppressed(SuppressedUrl url) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_id_.find(url.rule_id);
  if (it == by_id_.end()) return;
  ++counters_.suppressed;
  ++it->second->record.suppressed;
  if (!it->second->live()) {
    // Retired between Decide and now: queued again at once.
    ++counters_.requeued;
    requeue_.push_back(std::move(url));
    return;
  }
  it->second->suppressed.push_back(url);
  new_suppressed_.push_back(std::move(url));
}

std::string DustLearner::SkipFetched(std::string_view url) {
  if (options_.mode != DustMode::kApply) return "";
  UrlParts parts;
  if (!SplitUrl(url, &parts)) return "";
  std::lock_guard<std::mutex> lock(mu_);
  if (!MayBeLive(parts.origin)) return "";
  auto found = origins_.find(parts.origin);
  if (found == origins_.end() || found->second->active.empty()) return "";
  if (checks_.count(std::string(url)) > 0) return "";  // fetched as a check
  const size_t q = parts.rest.find('?');
  const std::string_view path = parts.rest.substr(0, q);
  const std::string_view query =
      q == std::string_view::npos ? std::string_view() : parts.rest.substr(q + 1);
  const Origin& origin = *found->second;
  for (const Candidate* c : origin.active) {
    if (c->record.rule.skips() && c->record.rule.Matches(path, query)) return c->record.id;
  }
  // Its rule key under the active rules, when a page of that key was fetched under another URL.
  const Candidate* changed_by = nullptr;
  const UrlTail key =
      Normalized(origin, UrlTail{std::string(path), std::string(query)}, nullptr, &changed_by);
  auto seen = origin.fetched.find(JoinTail(parts.origin, key));
  if (seen == origin.fetched.end() || seen->second.url_hash == UrlHash(url)) return "";
  return changed_by != nullptr ? changed_by->record.id : seen->second.rule_id;
}

std::string DustLearner::Observe(std::string_view url, const PageFingerprint& fingerprint,
                                 bool barren, std::string_view first_copy) {
  if (options_.mode == DustMode::kOff) return "";
  UrlParts parts;
  if (!SplitUrl(url, &parts)) return "";
  const UrlTail tail = TailOf(parts.rest);
  std::lock_guard<std::mutex> lock(mu_);
  ++pages_observed_;
  Origin& origin = OriginFor(parts.origin);
  // Which parameters take several values here (a page kind's selector is one of them).
  AnyParam(tail.query, [&](const QueryParam& p) {
    const std::string name(p.name);
    if (origin.param_values.size() < kMaxTrackedParams || origin.param_values.count(name) > 0) {
      std::set<std::string>& values = origin.param_values[name];
      if (values.size() < 2) values.emplace(p.value);
    }
    return false;
  });
  UrlParts first_parts;
  const bool pair = !first_copy.empty() && SplitUrl(first_copy, &first_parts) &&
                    first_parts.origin == parts.origin;
  const std::string example =
      pair ? std::string(first_copy) + " = " + std::string(url) : std::string(url) + " (barren)";
  if (pair) {
    // What the active rules do not explain of the pair proposes the candidates.
    const UrlTail first_tail = TailOf(first_parts.rest);
    auto kind_param = [&](std::string_view name) {
      auto it = origin.param_values.find(std::string(name));
      return it != origin.param_values.end() && it->second.size() >= 2;
    };
    for (const UrlRule& rule : Explain(Normalized(origin, first_tail, nullptr),
                                       Normalized(origin, tail, nullptr), kind_param)) {
      Propose(origin, rule, example);
    }
    // The first copy stands in every candidate's table with this page's fingerprint (they are one
    // page), so that the pair itself is scored below.
    const UrlTail first_base = Normalized(origin, first_tail, nullptr);
    for (const auto& c : origin.candidates) {
      if (c->record.rule.skips() || c->keys.size() >= options_.max_keys_per_candidate) continue;
      UrlTail rewritten = first_base;
      c->record.rule.Rewrite(&rewritten);
      c->keys.try_emplace(JoinTail(parts.origin, rewritten),
                          Candidate::Seen{fingerprint, UrlHash(first_copy)});
    }
  }
  if (barren && !tail.query.empty()) {
    Propose(origin, {UrlRuleKind::kSkipPath, tail.path, "", "", ""}, example);
    for (const QueryParam& p : SplitQuery(tail.query)) {
      if (!p.has_value || p.value.empty() || p.value.size() > kMaxSkipValue) continue;
      Propose(origin,
              {UrlRuleKind::kSkipParamValue, "", std::string(p.name), std::string(p.value), ""},
              example);
    }
  }
  std::string checked;
  Score(origin, url, tail, fingerprint, barren, &checked);
  // Remembered for SkipFetched, by its rule key under the rules active now.
  if (origin.fetched.size() < kMaxFetchedKeys) {
    const Candidate* changed_by = nullptr;
    const UrlTail key = Normalized(origin, tail, nullptr, &changed_by);
    origin.fetched.try_emplace(
        JoinTail(parts.origin, key),
        Origin::Fetched{UrlHash(url), changed_by ? changed_by->record.id : ""});
  }
  if (auto it = checks_.find(std::string(url)); it != checks_.end()) {
    auto c = by_id_.find(it->second);
    if (c != by_id_.end()) {
      ++c->second->record.checks;
      if (c->second->pending_checks > 0) --c->second->pending_checks;
    }
    checked = it->second;
    checks_.erase(it);
    ++counters_.validation_fetches;
  }
  if (std::exchange(states_changed_, false)) Relist(parts.origin, origin);
  return checked;
}

void DustLearner::Score(Origin& origin, std::string_view key, const UrlTail& tail,
                        const PageFingerprint& fingerprint, bool barren, std::string* checked) {
  const uint64_t url_hash = UrlHash(key);
  UrlParts parts;
  SplitUrl(key, &parts);
  for (const auto& owned : origin.candidates) {
    Candidate& c = *owned;
    RuleRecord& r = c.record;
    if (r.state == RuleState::kRetired || r.state == RuleState::kRejected) continue;
    if (r.id.empty()) {
      r.origin = std::string(parts.origin);
      r.id = RuleId(parts.origin, r.rule);
      by_id_[r.id] = &c;
    }
    bool covered = false;  // the rule covers this URL (it would rewrite or skip it)
    bool agrees = false;
    if (r.rule.skips()) {
      if (!r.rule.Matches(tail)) continue;
      covered = true;
      agrees = barren;
      ++(barren ? r.support : r.contradictions);
    } else {
      UrlTail rewritten = tail;
      covered = r.rule.Rewrite(&rewritten);
      const std::string rule_key = JoinTail(parts.origin, rewritten);
      auto [it, fresh] = c.keys.try_emplace(rule_key, Candidate::Seen{fingerprint, url_hash});
      if (fresh) {
        if (c.keys.size() > options_.max_keys_per_candidate) c.keys.erase(it);
        continue;
      }
      if (it->second.url_hash == url_hash) continue;  // the same URL again
      const Sameness same = Compare(it->second.fingerprint, fingerprint);
      if (same == Sameness::kUnsure) continue;
      agrees = same == Sameness::kSame;
      ++(agrees ? r.support : r.contradictions);
      // A URL the rule does not rewrite that meets a rewritten one's page checks it as well.
      covered = true;
    }
    if (covered && c.live()) {
      if (agrees) {
        ++r.validated;
      } else if (r.state == RuleState::kValidating || r.confidence() < options_.min_confidence) {
        // A rule on probation fails at its first counter-example; an active one when they
        // outweigh what it was adopted on (one near copy farther than usual is not a retirement).
        if (checked->empty()) *checked = r.id;
        Retire(c);
        continue;
      }
    }
    Promote(origin, c);
  }
}

std::vector<SuppressedUrl> DustLearner::TakeRequeue() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(requeue_, {});
}

std::vector<SuppressedUrl> DustLearner::TakeNewSuppressed() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(new_suppressed_, {});
}

std::vector<std::string> DustLearner::TakeRetiredIds() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(retired_ids_, {});
}

std::vector<RuleRecord> DustLearner::Records() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<RuleRecord> records;
  for (const auto& [name, origin] : origins_) {
    for (const auto& c : origin->candidates) {
      const RuleRecord& r = c->record;
      if (r.state == RuleState::kCandidate && !r.forbidden) continue;
      records.push_back(r);
    }
  }
  std::sort(records.begin(), records.end(), [](const RuleRecord& a, const RuleRecord& b) {
    return a.origin != b.origin ? a.origin < b.origin : a.rule.Form() < b.rule.Form();
  });
  return records;
}

DustCounters DustLearner::counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  DustCounters counters = counters_;
  for (const auto& [name, origin] : origins_) {
    for (const auto& c : origin->candidates) {
      switch (c->record.state) {
        case RuleState::kCandidate:
          ++counters.candidates;
          break;
        case RuleState::kValidating:
          ++counters.rules_validating;
          break;
        case RuleState::kActive:
          ++counters.rules_active;
          break;
        case RuleState::kRetired:
          ++counters.rules_retired;
          break;
        case RuleState::kRejected:
          ++counters.rules_rejected;
          break;
      }
    }
  }
  return counters;
}

}  // namespace urlsieve
