#include "url/dust_learner.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <optional>
#include <set>
#include <unordered_set>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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
// Parameter names tracked per origin; a page kind's selector is on half of the URLs with a query
// (once there are this many) and takes between 2 and kMaxKindValues values.
constexpr size_t kMaxTrackedParams = 1024;
constexpr uint64_t kMinKindUrls = 20;
constexpr size_t kMaxKindValues = 32;
// Parameter names remembered per page kind (Origin::kind_names).
constexpr size_t kMaxKindNames = 64;
// Pages a new candidate with a single pair is kept for, whatever comes (DustLearner::Propose).
constexpr uint64_t kFreshPages = 256;

// Per page kind ("a=tree"): the parameter names its URLs were seen with.
using NameSet = std::set<std::string, std::less<>>;
using KindNames = std::unordered_map<std::string, NameSet>;

// The lower bound of the Wilson score interval of a rule's confidence, at 95 %.
double ConfidenceLowerBound(const RuleRecord& r) {
  const double n = static_cast<double>(r.support + r.contradictions);
  if (n == 0) return 0;
  constexpr double z = 1.96;
  const double p = static_cast<double>(r.support) / n;
  return (p + z * z / (2 * n) - z * std::sqrt(p * (1 - p) / n + z * z / (4 * n * n))) /
         (1 + z * z / n);
}

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

// Rules that would make the two tails (one origin) one: the smallest differences. `kind_param`:
// the parameter that selects a kind of page on the origin ("" none): drop rules are also proposed
// for the pair's kind only, and for the pair's kind without the parameters its other URLs have
// (`kind_names`) and neither URL of the pair had as found (`pair_names`, before the active rules
// rewrote them): gitweb's a=log without pg is a log's first page, whichever way its branch is
// named; with pg it is a later page.
std::vector<UrlRule> Explain(const UrlTail& a, const UrlTail& b, std::string_view kind_param,
                             const KindNames& kind_names, const NameSet& pair_names) {
  std::vector<UrlRule> rules;
  const std::vector<QueryParam> pa = SplitQuery(a.query);
  const std::vector<QueryParam> pb = SplitQuery(b.query);
  const std::vector<std::string_view> sa = SortedTexts(pa);
  const std::vector<std::string_view> sb = SortedTexts(pb);
  if (a.path == b.path) {
    if (sa == sb) {
      if (a.query != b.query) rules.push_back({UrlRuleKind::kSortParams, "", "", "", "", ""});
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
    // The pair's page kind: the selector's value both share.
    std::string where;
    if (!kind_param.empty() && !std::binary_search(names.begin(), names.end(), kind_param)) {
      for (const QueryParam& p : pa) {
        if (p.name != kind_param || p.value.empty()) continue;
        if (std::any_of(pb.begin(), pb.end(),
                        [&](const QueryParam& q) { return q.text == p.text; })) {
          where = std::string(p.text);
        }
        break;
      }
    }
    std::string without;
    if (auto kind = kind_names.find(where); !where.empty() && kind != kind_names.end()) {
      size_t absent = 0;
      for (const std::string& n : kind->second) {
        if (pair_names.count(n) > 0) continue;
        without.append(without.empty() ? "" : ",").append(n);
        ++absent;
      }
      if (absent > kMaxDroppedNames) without.clear();
    }
    rules.push_back({UrlRuleKind::kDropParam, "", list, "", "", ""});
    rules.push_back({UrlRuleKind::kDropParam, a.path, list, "", "", ""});
    if (!where.empty()) rules.push_back({UrlRuleKind::kDropParam, "", list, "", where, ""});
    if (!without.empty()) rules.push_back({UrlRuleKind::kDropParam, "", list, "", where, without});
    const size_t eq = only.front().find('=');
    if (only.size() == 1 && eq != std::string_view::npos) {
      const std::string value(only.front().substr(eq + 1));
      rules.push_back({UrlRuleKind::kDropParamValue, "", list, value, "", ""});
      if (!where.empty()) {
        rules.push_back({UrlRuleKind::kDropParamValue, "", list, value, where, ""});
      }
    }
    return rules;
  }
  if (sa == sb) {
    if (EqualsIgnoringCase(a.path, b.path)) {
      rules.push_back({UrlRuleKind::kIgnoreCase, "", "", "", "", ""});
      return rules;
    }
    const std::string& shorter = a.path.size() < b.path.size() ? a.path : b.path;
    const std::string& longer = a.path.size() < b.path.size() ? b.path : a.path;
    if (shorter.ends_with('/') && longer.starts_with(shorter) &&
        longer.find('/', shorter.size()) == std::string::npos) {
      rules.push_back({UrlRuleKind::kIndexFile, "", longer.substr(shorter.size()), "", "", ""});
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
    rules.push_back({UrlRuleKind::kAlias, "", std::move(from), std::move(to), "", ""});
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
      rules.push_back(
          {UrlRuleKind::kParamPath, with_query.path, std::string(one[0].name), to, "", ""});
    }
  }
  return rules;
}

uint64_t UrlHash(std::string_view url) { return std::hash<std::string_view>()(url); }

// A query's separators ('&', ';') and its '=', as bit masks (bit i: the query's byte i).
struct QueryMarks {
  uint64_t seps = 0;
  uint64_t eqs = 0;
};

// The marks of a query shorter than 64 bytes that ends its buffer (a URL's key), `before` bytes
// of which precede it, 16 bytes at a time: chunks are loaded back from the query's end, so the
// first may start before the query, never past the buffer's end. False when they cannot be made
// so (no SSE2, a long query, a short key): the caller takes its byte-wise way.
inline bool MarkQuery(std::string_view query, size_t before, QueryMarks* marks) {
#if defined(__SSE2__)
  const size_t size = query.size();
  if (size == 0) {
    *marks = QueryMarks{};
    return true;
  }
  if (size >= 64 || size + before < (size + 15) / 16 * 16) return false;
  const char* const end = query.data() + size;
  const __m128i amp = _mm_set1_epi8('&');
  const __m128i semi = _mm_set1_epi8(';');
  const __m128i equals = _mm_set1_epi8('=');
  uint64_t seps = 0;
  uint64_t eqs = 0;
  for (size_t done = 0; done < size; done += 16) {
    const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(end - done - 16));
    const __m128i sep = _mm_or_si128(_mm_cmpeq_epi8(chunk, amp), _mm_cmpeq_epi8(chunk, semi));
    const __m128i eq = _mm_cmpeq_epi8(chunk, equals);
    seps |= static_cast<uint64_t>(static_cast<uint16_t>(_mm_movemask_epi8(sep))) << (48 - done);
    eqs |= static_cast<uint64_t>(static_cast<uint16_t>(_mm_movemask_epi8(eq))) << (48 - done);
  }
  // The bytes before the query are shifted out.
  marks->seps = seps >> (64 - size);
  marks->eqs = eqs >> (64 - size);
  return true;
#else
  (void)query;
  (void)before;
  (void)marks;
  return false;
#endif
}

// a == b for origins (~25 bytes, mostly equal: a page's links share one): 16 (SSE2) or 8 bytes at
// a time, the last ones overlapping, without a call to memcmp.
bool SameOrigin(std::string_view a, std::string_view b) {
  const size_t n = a.size();
  if (n != b.size()) return false;
#if defined(__SSE2__)
  // Most origins are 16 to 32 bytes: two compares of 16, the second overlapping.
  if (n >= 16) {
    auto chunk = [](const char* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); };
    __m128i eq = _mm_and_si128(_mm_cmpeq_epi8(chunk(a.data()), chunk(b.data())),
                               _mm_cmpeq_epi8(chunk(a.data() + n - 16), chunk(b.data() + n - 16)));
    for (size_t i = 16; i + 16 < n; i += 16) {
      eq = _mm_and_si128(eq, _mm_cmpeq_epi8(chunk(a.data() + i), chunk(b.data() + i)));
    }
    return _mm_movemask_epi8(eq) == 0xffff;
  }
#endif
  if (n < 8) return a == b;
  auto word = [](const char* p) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    return w;
  };
  for (size_t i = 0; i + 8 < n; i += 8) {
    if (word(a.data() + i) != word(b.data() + i)) return false;
  }
  return word(a.data() + n - 8) == word(b.data() + n - 8);
}

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
    bool check = false;  // the page was a check of this rule (fetched before its key's page)
  };
  std::unordered_map<std::string, Seen> keys;  // rule key → the first page that had it
  uint64_t covered = 0;                        // URLs it would have suppressed (check_every)
  std::vector<SuppressedUrl> suppressed;       // while live: queued again if it is retired
  // Hashes of the URLs admitted under its keys (Admitted; bounded by max_keys_per_candidate).
  std::unordered_set<uint64_t> admitted;
  uint32_t pending_checks = 0;
  uint64_t proposed_at = 0;   // pages_observed_ when it was proposed
  Origin* origin = nullptr;   // the origin it belongs to
  bool needs_params = false;  // the rule needs a parameter of its own (UrlRule::ParamNames)

  bool live() const {
    return record.state == RuleState::kActive || record.state == RuleState::kValidating;
  }
};

struct DustLearner::Origin {
  std::vector<std::unique_ptr<Candidate>> candidates;
  // The pages fetched, by their rule key under the active rules when they were fetched (bounded):
  // SkipFetched's memory. A rule retired takes the pages of the keys it made with it (wrong now).
  struct Fetched {
    uint64_t url_hash = 0;
    std::vector<std::string> rule_ids;  // the rules that changed the page's URL, in order
  };
  std::unordered_map<std::string, Fetched> fetched;
  // Per parameter name (bounded): the URLs that had it and up to kMaxKindValues + 1 of its values.
  // A page kind's selector (gitweb's `a`, a wiki's `action`) is on most URLs with a query and
  // takes few values: on such an origin, a drop rule is learned per page kind (`where a=tree`),
  // never for the whole origin (its evidence, from one kind, does not speak for the others).
  struct ParamStats {
    uint64_t urls = 0;
    std::set<std::string, std::less<>> values;
  };
  std::unordered_map<std::string, ParamStats> params;
  uint64_t urls_with_query = 0;
  std::string kind_param;  // the selector ("" none), chosen again as pages are observed
  KindNames kind_names;    // per kind ("a=tree", bounded): the names its URLs had
  bool IsKind(const ParamStats& stats) const {
    return urls_with_query >= kMinKindUrls && stats.values.size() >= 2 &&
           stats.values.size() <= kMaxKindValues && 2 * stats.urls >= urls_with_query;
  }
  void CountParams(std::string_view query) {
    if (query.empty()) return;
    ++urls_with_query;
    AnyParam(query, [&](const QueryParam& p) {
      auto it = params.find(std::string(p.name));
      if (it == params.end()) {
        if (params.size() >= kMaxTrackedParams) return false;
        it = params.emplace(std::string(p.name), ParamStats{}).first;
      }
      ++it->second.urls;
      if (it->second.values.size() <= kMaxKindValues) it->second.values.emplace(p.value);
      return false;
    });
    // The most frequent of the names that qualify.
    const ParamStats* best = nullptr;
    for (const auto& [name, stats] : params) {
      if (IsKind(stats) && (best == nullptr || stats.urls > best->urls)) {
        best = &stats;
        kind_param = name;
      }
    }
    if (best == nullptr) kind_param.clear();
    // The names of this URL's kind.
    if (kind_param.empty()) return;
    std::string_view kind;
    AnyParam(query, [&](const QueryParam& p) {
      if (p.name == kind_param) kind = p.text;
      return !kind.empty();
    });
    if (kind.empty()) return;
    auto names = kind_names.find(std::string(kind));
    if (names == kind_names.end()) {
      if (kind_names.size() > kMaxKindValues) return;
      names = kind_names.emplace(std::string(kind), NameSet{}).first;
    }
    AnyParam(query, [&](const QueryParam& p) {
      if (names->second.size() < kMaxKindNames) names->second.emplace(p.name);
      return false;
    });
  }
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
  // 256 bits, one per (first byte, length) of the names, hashed: a query's parameter names are
  // told apart from the rules' by one bit test each, whatever their first byte (the memchr per
  // name found its first byte in most queries: 'a', 's' begin names and values alike).
  uint64_t name_bits[4] = {};
  static unsigned NameBit(char first, size_t length) {
    return (static_cast<unsigned char>(first) + (length << 4)) & 255;
  }
  bool MayBeName(char first, size_t length) const {
    const unsigned bit = NameBit(first, length);
    return (name_bits[bit / 64] >> (bit % 64)) & 1;
  }
  // `before`: bytes of the URL's key before the query (MarkQuery).
  bool HasParamOfRules(std::string_view query, size_t before) const {
    if (query.empty() || param_names.empty()) return false;
    QueryMarks marks;
    if (!MarkQuery(query, before, &marks)) return HasParamOfRulesBySearch(query);
    const uint64_t stops = marks.seps | marks.eqs | (uint64_t{1} << query.size());  // names' ends
    for (uint64_t starts = ((marks.seps << 1) | 1) & ~stops; starts != 0; starts &= starts - 1) {
      const int at = std::countr_zero(starts);
      const auto length = static_cast<size_t>(std::countr_zero(stops >> at));
      if (MayBeName(query[at], length) && IsParamName(query.substr(at, length))) return true;
    }
    return false;
  }
  // Out of line, as the rare cases they are: the hot loops keep their registers.
  [[gnu::noinline]] bool IsParamName(std::string_view name) const {
    return std::binary_search(param_names.begin(), param_names.end(), name);
  }
  [[gnu::noinline]] bool HasParamOfRulesBySearch(std::string_view query) const {
    if (param_names.size() <= kFewNames) {
      // A search per name for its first byte (memchr) beats a pass over the query's bytes; a hit
      // not at a parameter's start (most are inside another name or a value) is told by one byte,
      // before the name is compared.
      const char* const begin = query.data();
      const char* const end = begin + query.size();
      for (const std::string& name : param_names) {
        const size_t n = name.size();
        if (n == 0) continue;
        for (const char* at = begin; end - at >= static_cast<ptrdiff_t>(n); ++at) {
          at = static_cast<const char*>(std::memchr(at, name[0], end - at - n + 1));
          if (at == nullptr) break;
          if (at != begin && at[-1] != '&' && at[-1] != ';') continue;
          const char* const after = at + n;
          if ((after == end || *after == '=' || *after == '&' || *after == ';') &&
              std::equal(name.begin() + 1, name.end(), at + 1)) {
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
      if (end > i && MayBeName(query[i], end - i) && IsParamName(query.substr(i, end - i))) {
        return true;
      }
      while (end < query.size() && query[end] != '&' && query[end] != ';') ++end;
      i = end + 1;
    }
    return false;
  }

  // What else may trigger an active rule that needs no parameter of its own: a path prefix (alias,
  // skip-path), a path suffix (index-file), several parameters (sort-params), an upper-case
  // letter in the path (ignore-case).
  struct PathAffix {
    std::string text;
    bool suffix = false;
  };
  std::vector<PathAffix> path_affixes;
  // Per affix, the bytes of it that are in a path's first 8 (a prefix) or last 8 (a suffix), in
  // place, and their mask (the other half 0): most paths differ from every affix in a few ALU
  // operations, without a branch.
  struct AffixWords {
    uint64_t head = 0;
    uint64_t head_mask = 0;
    uint64_t tail = 0;
    uint64_t tail_mask = 0;
  };
  std::vector<AffixWords> affix_words;
  void AddAffix(std::string text, bool suffix) {
    const size_t n = std::min<size_t>(8, text.size());
    unsigned char word[8] = {};
    unsigned char mask[8] = {};
    const size_t at = suffix ? 8 - n : 0;
    std::memcpy(word + at, text.data() + (suffix ? text.size() - n : 0), n);
    std::memset(mask + at, 0xff, n);
    AffixWords w;
    std::memcpy(suffix ? &w.tail : &w.head, word, 8);
    std::memcpy(suffix ? &w.tail_mask : &w.head_mask, mask, 8);
    affix_words.push_back(w);
    path_affixes.push_back(PathAffix{std::move(text), suffix});
  }
  [[gnu::noinline]] bool HasPathAffix(std::string_view path) const {
    const size_t size = path.size();
    for (const PathAffix& a : path_affixes) {
      const size_t n = a.text.size();
      if (size >= n &&
          std::memcmp(path.data() + (a.suffix ? size - n : 0), a.text.data(), n) == 0) {
        return true;
      }
    }
    return false;
  }
  bool sort_params = false;
  bool ignore_case = false;
  [[gnu::noinline]] bool SortOrCaseTriggers(std::string_view path, std::string_view query,
                                            size_t before) const {
    if (sort_params) {
      QueryMarks marks;
      if (MarkQuery(query, before, &marks) ? marks.seps != 0
                                           : std::any_of(query.begin(), query.end(), [](char ch) {
                                               return ch == '&' || ch == ';';
                                             })) {
        return true;
      }
    }
    return ignore_case &&
           std::any_of(path.begin(), path.end(), [](char ch) { return ch >= 'A' && ch <= 'Z'; });
  }
  // Whether an active rule may apply to the URL (a necessary condition, told without building
  // anything); `has_param`: HasParamOfRules(query, before).
  bool MayTrigger(std::string_view path, std::string_view query, size_t before,
                  bool has_param) const {
    if (has_param) return true;
    const size_t size = path.size();
    if (size >= 8) {
      uint64_t head;
      uint64_t tail;
      std::memcpy(&head, path.data(), 8);
      std::memcpy(&tail, path.data() + size - 8, 8);
      bool near = false;  // an affix's first or last 8 bytes are in place
      for (const AffixWords& w : affix_words) {
        near |= (((head & w.head_mask) ^ w.head) | ((tail & w.tail_mask) ^ w.tail)) == 0;
      }
      if (near && HasPathAffix(path)) return true;
    } else if (!path_affixes.empty() && HasPathAffix(path)) {
      return true;
    }
    return (sort_params || ignore_case) && SortOrCaseTriggers(path, query, before);
  }

  void Relist() {
    active.clear();
    validating.clear();
    param_names.clear();
    path_affixes.clear();
    affix_words.clear();
    sort_params = ignore_case = false;
    for (const auto& c : candidates) {
      if (c->record.state == RuleState::kActive) active.push_back(c.get());
      if (c->record.state == RuleState::kValidating) validating.push_back(c.get());
    }
    std::sort(active.begin(), active.end(), [](const Candidate* x, const Candidate* y) {
      if (x->record.rule.skips() != y->record.rule.skips()) return x->record.rule.skips();
      return x->record.rule.Form() < y->record.rule.Form();
    });
    for (const Candidate* c : active) {
      const UrlRule& rule = c->record.rule;
      if (rule.ParamNames(&param_names)) continue;
      switch (rule.kind) {
        case UrlRuleKind::kAlias:
          AddAffix(rule.name, false);
          break;
        case UrlRuleKind::kSkipPath:
          AddAffix(rule.path, false);
          break;
        case UrlRuleKind::kIndexFile:
          AddAffix("/" + rule.name, true);
          break;
        case UrlRuleKind::kSortParams:
          sort_params = true;
          break;
        default:  // kIgnoreCase, and whatever comes next: any URL
          ignore_case = true;
          break;
      }
    }
    std::sort(param_names.begin(), param_names.end());
    param_names.erase(std::unique(param_names.begin(), param_names.end()), param_names.end());
    std::fill(std::begin(name_bits), std::end(name_bits), 0);
    for (const std::string& n : param_names) {
      if (n.empty()) continue;
      const unsigned bit = NameBit(n[0], n.size());
      name_bits[bit / 64] |= uint64_t{1} << (bit % 64);
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
    // Make room: a plain candidate whose evidence says no (a confidence it cannot be adopted
    // with), the least confident first; else the oldest with a single pair that no page has
    // supported since kFreshPages pages. On a site of near copies the table fills with rules that
    // pairs of similar pages proposed and later pages refuted: kept, they would shut out the
    // rules proposed later; and new candidates must live long enough to meet their second pair.
    constexpr double kStays = 2;
    auto rank = [&](const Candidate& c) {  // lowest goes: refuted [0, 1), stale 1
      const RuleRecord& r = c.record;
      if (r.support + r.contradictions >= options_.min_support &&
          r.confidence() < options_.min_confidence) {
        return r.confidence();
      }
      return r.support <= 1 && pages_observed_ - c.proposed_at > kFreshPages ? 1.0 : kStays;
    };
    auto weakest = origin.candidates.end();
    for (auto it = origin.candidates.begin(); it != origin.candidates.end(); ++it) {
      const RuleRecord& r = (*it)->record;
      if (r.state != RuleState::kCandidate || r.pinned || r.forbidden) continue;
      if (weakest == origin.candidates.end() || rank(**it) < rank(**weakest)) weakest = it;
    }
    if (weakest == origin.candidates.end() || rank(**weakest) == kStays) return nullptr;
    by_id_.erase((*weakest)->record.id);
    origin.candidates.erase(weakest);
  }
  auto candidate = std::make_unique<Candidate>();
  candidate->origin = &origin;
  candidate->proposed_at = pages_observed_;
  candidate->record.rule = rule;
  candidate->needs_params = origin.NeedsParams(rule);
  candidate->record.example = std::string(example);
  Candidate* raw = candidate.get();
  origin.candidates.push_back(std::move(candidate));
  return raw;
}

UrlTail DustLearner::Normalized(const Origin& origin, UrlTail tail, const Candidate* except,
                                std::vector<std::string>* changed_by) {
  for (const Candidate* c : origin.active) {
    if (c == except || c->record.rule.skips()) continue;
    if (!c->record.rule.MayRewrite(tail.path, tail.query)) continue;
    if (c->record.rule.Rewrite(&tail) && changed_by != nullptr) {
      changed_by->push_back(c->record.id);
    }
  }
  return tail;
}

bool DustLearner::Same(const PageFingerprint& a, const PageFingerprint& b) const {
  if (a.digest == b.digest) return true;
  return a.has_simhash && b.has_simhash &&
         std::popcount(a.simhash ^ b.simhash) <= options_.max_distance;
}

void DustLearner::Promote(Origin& origin, Candidate& c) {
  RuleRecord& r = c.record;
  if (r.forbidden || r.pinned) return;
  if (r.state == RuleState::kCandidate && r.support >= options_.min_support &&
      r.confidence() >= options_.min_confidence &&
      ConfidenceLowerBound(r) >= options_.min_confidence_bound) {
    // A rule goes no wider than its evidence: where pages have kinds, a drop rule is adopted per
    // kind (unless it drops the selector itself).
    const bool drops =
        r.rule.kind == UrlRuleKind::kDropParam || r.rule.kind == UrlRuleKind::kDropParamValue;
    if (drops && r.rule.where.empty() && !origin.kind_param.empty()) {
      std::vector<std::string> names;
      r.rule.ParamNames(&names);
      if (std::find(names.begin(), names.end(), origin.kind_param) == names.end()) return;
    }
    // A rule a live one covers adds nothing but checks.
    for (const auto& other : origin.candidates) {
      if (other->live() && Subsumes(other->record.rule, r.rule)) return;
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
  // The pages remembered by a key it made: that key is wrong now.
  std::erase_if(c.origin->fetched, [&](const auto& entry) {
    const std::vector<std::string>& ids = entry.second.rule_ids;
    return std::find(ids.begin(), ids.end(), r.id) != ids.end();
  });
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

inline bool DustLearner::MayDecide(const Origin& origin, std::string_view path,
                                   std::string_view query, size_t before, bool has_param) const {
  // Most links of an origin with rules are covered by none: told apart without building anything.
  if (origin.MayTrigger(path, query, before, has_param)) return true;
  if (origin.validating.empty()) return false;
  return std::any_of(origin.validating.begin(), origin.validating.end(), [&](const Candidate* c) {
    const UrlRule& rule = c->record.rule;
    return rule.skips() ? rule.Matches(path, query) : rule.MayRewrite(path, query);
  });
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
    const std::string_view name = url.origin();
    if (!SameOrigin(name, last_name)) {
      last_name = name;
      origin = nullptr;
      if (MayBeLive(last_name)) {
        auto found = origins_.find(last_name);
        if (found != origins_.end()) origin = found->second.get();
      }
      if (origin != nullptr && origin->active.empty() && origin->validating.empty()) {
        origin = nullptr;
      }
    }
    if (origin == nullptr) continue;
    const std::string_view query = url.query();
    const size_t before = url.key().size() - query.size();  // the query ends the key
    const bool has_param = origin->HasParamOfRules(query, before);
    if (!MayDecide(*origin, url.path(), query, before, has_param)) continue;
    LinkDecision decision = DecideOne(*origin, url, has_param);
    if (decision.kind == LinkDecision::Kind::kKeep) continue;
    decision.index = i;
    decisions->push_back(std::move(decision));
  }
}

bool DustLearner::MayCheck(bool at_lease) const {
  const double allowed = std::max(static_cast<double>(kMinChecks),
                                  options_.max_check_share * static_cast<double>(pages_observed_));
  const auto outstanding = static_cast<double>(checks_.size());
  // A check decided with a page's links may wait in the frontier (a cluster node routes it to
  // its host's owner, behind what is queued there): those may hold half of the allowance only.
  if (!at_lease && outstanding >= allowed / 2) return false;
  return static_cast<double>(checks_fetched_) + outstanding < allowed;
}

bool DustLearner::CheckDue(Candidate& c) {
  // The 4th and 16th URL a rule covers, then every check_every-th: the first ones early, before a
  // wrong rule suppresses much.
  const uint64_t covered = ++c.covered;
  return !c.record.pinned && options_.check_every > 0 &&
         ((covered < options_.check_every && (covered == 4 || covered == 16)) ||
          covered % options_.check_every == 0);
}

void DustLearner::IssueCheck(Candidate& c, std::string url) {
  ++c.pending_checks;
  checks_[std::move(url)] = c.record.id;
}

LinkDecision DustLearner::DecideOne(Origin& origin, const CanonicalUrl& url, bool has_param) {
  LinkDecision decision;  // kKeep; its strings are empty (no allocation) unless decided otherwise
  const std::string_view path = url.path();
  const std::string_view query = url.query();
  // A validating rule takes the URLs it covers as its checks, up to its sample.
  for (Candidate* c : origin.validating) {
    const UrlRule& rule = c->record.rule;
    if (c->record.validated + c->pending_checks >= options_.validation_sample) continue;
    // Past the checks' share, a rule on probation waits for pages fetched anyway that it covers.
    if (!MayCheck(false)) break;
    // A check is compared with whichever page of its rule key the crawl fetches, before or after.
    bool covered = rule.skips() && rule.Matches(path, query);
    if (!rule.skips() && rule.MayRewrite(path, query)) {
      UrlTail rewritten{std::string(path), std::string(query)};
      covered = rule.Rewrite(&rewritten);
    }
    if (!covered || checks_.count(url.key()) > 0) continue;
    IssueCheck(*c, std::string(url.key()));
    decision.kind = LinkDecision::Kind::kCheck;
    decision.rule_id = c->record.id;
    return decision;
  }
  std::optional<UrlTail> rewritten;  // made by the first rule that changes the URL
  Candidate* first = nullptr;
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
  // A check is fetched under its own key.
  if (CheckDue(*first) && MayCheck(false) && checks_.count(url.key()) == 0) {
    IssueCheck(*first, std::string(url.key()));
    decision.kind = LinkDecision::Kind::kCheck;
    decision.rule_key.clear();
  }
  return decision;
}

uint64_t DustLearner::OriginHash(std::string_view origin) {
  constexpr uint64_t kMultiplier = 0xC2B2AE3D27D4EB4Full;
  const size_t n = origin.size();
  uint64_t h = n * 0x9E3779B97F4A7C15ull;
  auto mix = [&](uint64_t word) {
    h = (h ^ word) * kMultiplier;
    h ^= h >> 29;
  };
  if (n >= 8) {
    uint64_t word;
    for (size_t i = 0; i + 8 < n; i += 8) {
      std::memcpy(&word, origin.data() + i, 8);
      mix(word);
    }
    std::memcpy(&word, origin.data() + n - 8, 8);  // the last 8, overlapping
    mix(word);
  } else {
    for (char ch : origin) mix(static_cast<unsigned char>(ch));
  }
  return h ^ (h >> 32);
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

void DustLearner::Admitted(std::string_view rule_id, std::string_view url) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_id_.find(std::string(rule_id));
  if (it == by_id_.end() || it->second->admitted.size() >= options_.max_keys_per_candidate) return;
  it->second->admitted.insert(UrlHash(url));
}

bool DustLearner::Suppressed(SuppressedUrl url) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_id_.find(url.rule_id);
  if (it == by_id_.end()) return true;
  if (it->second->admitted.count(UrlHash(url.url)) > 0) return false;
  ++counters_.suppressed;
  ++it->second->record.suppressed;
  if (!it->second->live()) {
    // Retired between Decide and now: queued again at once.
    ++counters_.requeued;
    requeue_.push_back(std::move(url));
    return true;
  }
  it->second->suppressed.push_back(url);
  new_suppressed_.push_back(std::move(url));
  return true;
}

void DustLearner::CheckNotQueued(std::string_view url) {
  std::lock_guard<std::mutex> lock(mu_);
  auto check = checks_.find(std::string(url));
  if (check == checks_.end()) return;
  if (auto c = by_id_.find(check->second); c != by_id_.end() && c->second->pending_checks > 0) {
    --c->second->pending_checks;
  }
  checks_.erase(check);
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
  Candidate* skipped_by = nullptr;
  for (Candidate* c : origin.active) {
    if (c->record.rule.skips() && c->record.rule.Matches(path, query)) {
      skipped_by = c;
      break;
    }
  }
  if (skipped_by == nullptr) {
    // Its rule key under the active rules, when a page of that key was fetched under another URL.
    std::vector<std::string> changed_by;
    const UrlTail key =
        Normalized(origin, UrlTail{std::string(path), std::string(query)}, nullptr, &changed_by);
    auto seen = origin.fetched.find(JoinTail(parts.origin, key));
    if (seen == origin.fetched.end() || seen->second.url_hash == UrlHash(url)) return "";
    const std::vector<std::string>& ids = changed_by.empty() ? seen->second.rule_ids : changed_by;
    auto rule = ids.empty() ? by_id_.end() : by_id_.find(ids.front());
    if (rule == by_id_.end()) return "";
    skipped_by = rule->second;
  }
  // A check fetched now, not one waiting in the frontier: the URL is about to be fetched.
  if (CheckDue(*skipped_by) && MayCheck(true)) {
    IssueCheck(*skipped_by, std::string(url));
    return "";
  }
  return skipped_by->record.id;
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
  origin.CountParams(tail.query);
  UrlParts first_parts;
  const bool pair = !first_copy.empty() && SplitUrl(first_copy, &first_parts) &&
                    first_parts.origin == parts.origin;
  const std::string example =
      pair ? std::string(first_copy) + " = " + std::string(url) : std::string(url) + " (barren)";
  if (pair) {
    // What the active rules do not explain of the pair proposes the candidates.
    const UrlTail first_tail = TailOf(first_parts.rest);
    NameSet pair_names;
    for (const UrlTail* t : {&first_tail, &tail}) {
      AnyParam(t->query, [&](const QueryParam& p) {
        pair_names.emplace(p.name);
        return false;
      });
    }
    for (const UrlRule& rule :
         Explain(Normalized(origin, first_tail, nullptr), Normalized(origin, tail, nullptr),
                 origin.kind_param, origin.kind_names, pair_names)) {
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
    Propose(origin, {UrlRuleKind::kSkipPath, tail.path, "", "", "", ""}, example);
    for (const QueryParam& p : SplitQuery(tail.query)) {
      if (!p.has_value || p.value.empty() || p.value.size() > kMaxSkipValue) continue;
      Propose(origin,
              {UrlRuleKind::kSkipParamValue, "", std::string(p.name), std::string(p.value), "", ""},
              example);
    }
  }
  // A check of a rule: fetched although the rule covers it.
  const auto check = checks_.find(std::string(url));
  const std::string_view check_of = check == checks_.end() ? "" : std::string_view(check->second);
  std::string checked;
  Score(origin, url, tail, fingerprint, barren, check_of, &checked);
  // Remembered for SkipFetched, by its rule key under the rules active now; not a check, which
  // jumps the queue: its key's own URL, queued before it, is still fetched.
  if (check == checks_.end() && origin.fetched.size() < kMaxFetchedKeys) {
    std::vector<std::string> changed_by;
    const UrlTail key = Normalized(origin, tail, nullptr, &changed_by);
    origin.fetched.try_emplace(JoinTail(parts.origin, key),
                               Origin::Fetched{UrlHash(url), std::move(changed_by)});
  }
  if (check != checks_.end()) {
    auto c = by_id_.find(check->second);
    if (c != by_id_.end()) {
      ++c->second->record.checks;
      if (c->second->pending_checks > 0) --c->second->pending_checks;
    }
    checked = check->second;
    checks_.erase(check);
    ++counters_.validation_fetches;
    ++checks_fetched_;
  }
  if (std::exchange(states_changed_, false)) Relist(parts.origin, origin);
  return checked;
}

void DustLearner::Score(Origin& origin, std::string_view key, const UrlTail& tail,
                        const PageFingerprint& fingerprint, bool barren, std::string_view check_of,
                        std::string* checked) {
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
    bool checks = check_of == r.id;  // this observation checks the rule
    if (r.rule.skips()) {
      if (!r.rule.Matches(tail)) continue;
      covered = true;
      agrees = barren;
      ++(barren ? r.support : r.contradictions);
    } else {
      UrlTail rewritten = tail;
      covered = r.rule.Rewrite(&rewritten);
      const std::string rule_key = JoinTail(parts.origin, rewritten);
      auto [it, fresh] =
          c.keys.try_emplace(rule_key, Candidate::Seen{fingerprint, url_hash, checks});
      if (fresh) {
        if (c.keys.size() > options_.max_keys_per_candidate) c.keys.erase(it);
        continue;
      }
      if (it->second.url_hash == url_hash) continue;  // the same URL again
      // A page neither clearly near nor clearly far counts against the rule: pages that drift
      // (a repository's state commit after commit) are near their neighbours and far from the
      // first page only at the end, where the rule, once active, no longer looks.
      agrees = Same(it->second.fingerprint, fingerprint);
      ++(agrees ? r.support : r.contradictions);
      checks = checks || it->second.check;
      // A URL the rule does not rewrite that meets a rewritten one's page checks it as well.
      covered = true;
    }
    if (covered && c.live()) {
      if (agrees) {
        ++r.validated;
      } else if (r.state == RuleState::kValidating || checks ||
                 r.confidence() < options_.min_confidence) {
        // A rule on probation fails at its first counter-example, and so does a check of an
        // active one: a check is a sample of what the rule suppresses, the pages its evidence
        // before adoption cannot speak for. Otherwise an active rule is retired when
        // counter-examples outweigh what it was adopted on.
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
