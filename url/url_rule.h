// UrlRule: one learned (or user-given) statement about one site's URLs — "these spellings are one
// page" or "pages of this form are not worth fetching" (docs/features/dust.md, "Rule forms";
// DESIGN §5). Rules are what DustLearner (url/dust_learner.h) learns from content-seen
// collisions; a rule of an origin rewrites a URL of that origin into its rule key, the spelling
// the seen stage tests instead of the URL's own key.
//
// Forms (the text form is the rule's identity, as listed by `urlsieve rules` and written in a
// --rules-file):
//   drop-param NAME[,NAME...] [on PATH] [where K=V] [without N[,N...]]
//                                    these parameters never select content (on PATH only; in URLs
//                                    with K=V only; in URLs with none of the N only: gitweb's
//                                    a=log without pg, a log's first page, not its later ones)
//   drop-param NAME=VALUE [on PATH] [where K=V] [without N...]
//                                    NAME=VALUE selects nothing (a branch equal to the default)
//   sort-params                      parameter order does not matter
//   alias FROM TO                    a path starting with FROM is the same page under TO
//   index-file NAME                  ".../NAME" is the directory ".../"
//   ignore-case                      paths are case-insensitive
//   param-path PATH NAME TO          PATH?NAME=V (V alone) is the page TO+V (/index.php?title=X)
//   skip-param NAME=VALUE            pages with NAME=VALUE are forms, noindex or errors: not
//                                    fetched
//   skip-path PATH                   pages at PATH (any query) are such pages: not fetched
// Rewrites always go towards one normal form (parameters removed, sorted, the shorter alias, the
// directory, lower case, the path form), so two rules never rewrite back and forth.
// Query parameters are split on '&' and ';' (gitweb and other CGI programs use ';').
//
// Thread-safety: immutable values; pure functions.
#ifndef URLSIEVE_URL_URL_RULE_H_
#define URLSIEVE_URL_URL_RULE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace urlsieve {

enum class UrlRuleKind : uint8_t {
  kDropParam,
  kDropParamValue,
  kSortParams,
  kAlias,
  kIndexFile,
  kIgnoreCase,
  kParamPath,
  kSkipParamValue,
  kSkipPath,
};

// A URL's path and query (without '?'), as a rule reads and rewrites them.
struct UrlTail {
  std::string path;
  std::string query;
};

// One "name[=value]" of a query.
struct QueryParam {
  std::string_view name;
  std::string_view value;
  bool has_value = false;
  std::string_view text;  // "name=value" as written
};
std::vector<QueryParam> SplitQuery(std::string_view query);

// Calls f(param) for each parameter of `query`, without allocating, until f returns true; whether
// one did.
template <typename F>
bool AnyParam(std::string_view query, F f) {
  size_t i = 0;
  while (i < query.size()) {
    size_t end = i;
    while (end < query.size() && query[end] != '&' && query[end] != ';') ++end;
    if (end > i) {
      QueryParam param;
      param.text = query.substr(i, end - i);
      const size_t eq = param.text.find('=');
      param.name = param.text.substr(0, eq);
      if (eq != std::string_view::npos) {
        param.value = param.text.substr(eq + 1);
        param.has_value = true;
      }
      if (f(param)) return true;
    }
    i = end + 1;
  }
  return false;
}

struct UrlRule {
  UrlRuleKind kind = UrlRuleKind::kDropParam;
  std::string path;   // drop-param's scope ("" = any path); param-path's and skip-path's path
  std::string name;   // parameter name(s) (drop-param: comma-separated, sorted); alias FROM; ...
  std::string value;  // a parameter value; alias TO; param-path's TO
  // drop-param: only in URLs with this parameter ("NAME=VALUE", the page kind of a one-script
  // application such as gitweb's a=search); "" = any.
  std::string where;
  // drop-param: only in URLs with none of these parameters (comma-separated, sorted); "" = any.
  std::string without;

  // The text form (see above); Parse(Form()) == *this.
  std::string Form() const;
  static Result<UrlRule> Parse(std::string_view form);

  // A skip rule (skip-param, skip-path): matching URLs are not fetched; the others rewrite.
  bool skips() const {
    return kind == UrlRuleKind::kSkipParamValue || kind == UrlRuleKind::kSkipPath;
  }
  // Whether a skip rule covers the URL with this path and query.
  bool Matches(std::string_view path, std::string_view query) const;
  bool Matches(const UrlTail& tail) const { return Matches(tail.path, tail.query); }
  // Whether Rewrite may change a URL with this path and query: false means it will not. No
  // allocation: the crawl asks it of every link of an origin with rules.
  bool MayRewrite(std::string_view path, std::string_view query) const;
  // Whether a drop-param rule's `where` and `without` hold for this query.
  bool WhereHolds(std::string_view query) const;
  // Whether a drop-param rule drops this parameter.
  bool Drops(const QueryParam& param) const;
  // The parameter names a rule needs in a URL's query to do anything (drop-param, skip-param,
  // param-path), appended to *names; false for the other rules.
  bool ParamNames(std::vector<std::string>* names) const;
  // Rewrites *tail towards the rule's normal form; whether it changed. A skip rule never rewrites.
  bool Rewrite(UrlTail* tail) const;

  bool operator==(const UrlRule& other) const = default;
};

// Whether every URL `specific` rewrites, `general` rewrites the same way (drop-param NAME covers
// drop-param NAME=VALUE and either on a path): the specific rule then adds nothing.
bool Subsumes(const UrlRule& general, const UrlRule& specific);

// The rule's short id (rejected.jsonl "rule", pages.jsonl "dust_check"): "d" + 8 hex digits of a
// hash of the origin and the form.
std::string RuleId(std::string_view origin, const UrlRule& rule);

// "scheme://host[:port]" + tail: the rule key of a URL.
std::string JoinTail(std::string_view origin, const UrlTail& tail);

}  // namespace urlsieve

#endif  // URLSIEVE_URL_URL_RULE_H_
