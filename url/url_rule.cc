#include "url/url_rule.h"

#include <algorithm>
#include <cstdio>
#include <optional>

namespace urlsieve {
namespace {

struct KindName {
  UrlRuleKind kind;
  std::string_view word;
};
constexpr KindName kKindNames[] = {
    {UrlRuleKind::kDropParam, "drop-param"},
    {UrlRuleKind::kSortParams, "sort-params"},
    {UrlRuleKind::kAlias, "alias"},
    {UrlRuleKind::kIndexFile, "index-file"},
    {UrlRuleKind::kIgnoreCase, "ignore-case"},
    {UrlRuleKind::kParamPath, "param-path"},
    {UrlRuleKind::kSkipParamValue, "skip-param"},
    {UrlRuleKind::kSkipPath, "skip-path"},
};

// Calls f(name) for each of the comma-separated `names` (a drop-param rule's) until it returns
// true; whether one did.
template <typename F>
bool AnyName(std::string_view names, F f) {
  for (size_t i = 0; i <= names.size();) {
    size_t end = names.find(',', i);
    if (end == std::string_view::npos) end = names.size();
    if (f(names.substr(i, end - i))) return true;
    i = end + 1;
  }
  return false;
}

bool NameIn(std::string_view names, std::string_view name) {
  return AnyName(names, [&](std::string_view n) { return n == name; });
}

// Whether any of `names` occurs in `text` (a cheap first test).
bool AnyNameIn(std::string_view text, std::string_view names) {
  return AnyName(names, [&](std::string_view n) { return text.find(n) != std::string_view::npos; });
}

std::vector<std::string_view> Words(std::string_view text) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    size_t end = i;
    while (end < text.size() && text[end] != ' ') ++end;
    if (end > i) words.push_back(text.substr(i, end - i));
    i = end;
  }
  return words;
}

bool IsPath(std::string_view word) { return !word.empty() && word.front() == '/'; }

// "b,a" as "a,b" (one rule, one form); nothing when a name is empty.
std::optional<std::string> SortedNames(std::string_view list) {
  std::vector<std::string_view> names;
  if (AnyName(list, [&](std::string_view n) {
        names.push_back(n);
        return n.empty();
      })) {
    return std::nullopt;
  }
  std::sort(names.begin(), names.end());
  std::string sorted;
  for (std::string_view n : names) sorted.append(sorted.empty() ? "" : ",").append(n);
  return sorted;
}

// The query of `params`, joined with the separator `query` used first ('&' when none).
std::string JoinQuery(std::string_view query, const std::vector<QueryParam>& params) {
  // Not find_first_of: it calls memchr over "&;" for each byte of the query.
  const auto at =
      std::find_if(query.begin(), query.end(), [](char ch) { return ch == '&' || ch == ';'; });
  const char separator = at == query.end() ? '&' : *at;
  std::string joined;
  joined.reserve(query.size());
  for (const QueryParam& param : params) {
    if (!joined.empty()) joined += separator;
    joined += param.text;
  }
  return joined;
}

// Removes the parameters `drop` selects; whether any was. Two passes over the query and no vector
// of its parameters: most links a rule is asked about keep them all; a rewritten one is built once.
template <typename Drop>
bool DropParams(UrlTail* tail, Drop drop) {
  const std::string_view query = tail->query;
  if (!AnyParam(query, drop)) return false;
  const auto at =
      std::find_if(query.begin(), query.end(), [](char ch) { return ch == '&' || ch == ';'; });
  const char separator = at == query.end() ? '&' : *at;
  std::string kept;
  kept.reserve(query.size());
  AnyParam(query, [&](const QueryParam& p) {
    if (!drop(p)) kept.append(kept.empty() ? 0 : 1, separator).append(p.text);
    return false;
  });
  tail->query = std::move(kept);
  return true;
}

}  // namespace

std::vector<QueryParam> SplitQuery(std::string_view query) {
  std::vector<QueryParam> params;
  params.reserve(1 + std::count_if(query.begin(), query.end(),
                                   [](char ch) { return ch == '&' || ch == ';'; }));
  AnyParam(query, [&](const QueryParam& p) {
    params.push_back(p);
    return false;
  });
  return params;
}

std::string UrlRule::Form() const {
  std::string form;
  for (const KindName& k : kKindNames) {
    if (k.kind == kind) form = k.word;
  }
  switch (kind) {
    case UrlRuleKind::kDropParam:
    case UrlRuleKind::kDropParamValue:
      form = "drop-param " + name;
      if (kind == UrlRuleKind::kDropParamValue) form += "=" + value;
      if (!path.empty()) form += " on " + path;
      if (!where.empty()) form += " where " + where;
      if (!without.empty()) form += " without " + without;
      break;
    case UrlRuleKind::kSkipParamValue:
      form += " " + name + "=" + value;
      break;
    case UrlRuleKind::kAlias:
      form += " " + name + " " + value;
      break;
    case UrlRuleKind::kIndexFile:
      form += " " + name;
      break;
    case UrlRuleKind::kParamPath:
      form += " " + path + " " + name + " " + value;
      break;
    case UrlRuleKind::kSkipPath:
      form += " " + path;
      break;
    case UrlRuleKind::kSortParams:
    case UrlRuleKind::kIgnoreCase:
      break;
  }
  return form;
}

Result<UrlRule> UrlRule::Parse(std::string_view form) {
  std::vector<std::string_view> w = Words(form);
  auto bad = [&](std::string_view why) {
    return Status::InvalidArgument("URL rule \"" + std::string(form) + "\": " + std::string(why));
  };
  if (w.empty()) return bad("empty");
  UrlRule rule;
  auto kind = std::find_if(std::begin(kKindNames), std::end(kKindNames),
                           [&](const KindName& k) { return k.word == w[0]; });
  if (kind == std::end(kKindNames)) {
    return bad(
        "unknown form (drop-param, sort-params, alias, index-file, ignore-case, "
        "param-path, skip-param, skip-path)");
  }
  rule.kind = kind->kind;
  // "NAME=VALUE" into name and value; whether it had a value.
  auto name_value = [&](std::string_view word) {
    const size_t eq = word.find('=');
    rule.name = std::string(word.substr(0, eq));
    if (eq == std::string_view::npos) return false;
    rule.value = std::string(word.substr(eq + 1));
    return true;
  };
  switch (rule.kind) {
    case UrlRuleKind::kDropParam:
    case UrlRuleKind::kDropParamValue:
      if (w.size() >= 4 && w[w.size() - 2] == "without") {
        std::optional<std::string> names = SortedNames(w.back());
        if (!names) return bad("expected without NAME[,NAME...]");
        rule.without = std::move(*names);
        w.resize(w.size() - 2);
      }
      if (w.size() >= 4 && w[w.size() - 2] == "where") {
        if (w.back().find('=') == std::string_view::npos || w.back().front() == '=') {
          return bad("expected where NAME=VALUE");
        }
        rule.where = std::string(w.back());
        w.resize(w.size() - 2);
      }
      if (w.size() != 2 && !(w.size() == 4 && w[2] == "on" && IsPath(w[3]))) {
        return bad(
            "expected drop-param NAME[=VALUE] [on PATH] [where NAME=VALUE] [without "
            "NAME[,NAME...]]");
      }
      if (name_value(w[1])) rule.kind = UrlRuleKind::kDropParamValue;
      if (rule.name.empty()) return bad("no parameter name");
      if (rule.name.find(',') != std::string::npos) {
        if (rule.kind == UrlRuleKind::kDropParamValue) return bad("one NAME=VALUE only");
        std::optional<std::string> names = SortedNames(rule.name);
        if (!names) return bad("an empty parameter name");
        rule.name = std::move(*names);
      }
      if (AnyName(rule.without, [&](std::string_view n) { return NameIn(rule.name, n); })) {
        return bad("a parameter both dropped and required absent");
      }
      if (w.size() == 4) rule.path = std::string(w[3]);
      break;
    case UrlRuleKind::kSkipParamValue:
      if (w.size() != 2 || !name_value(w[1]) || rule.name.empty()) {
        return bad("expected skip-param NAME=VALUE");
      }
      break;
    case UrlRuleKind::kAlias:
      if (w.size() != 3 || !IsPath(w[1]) || !IsPath(w[2]) || w[1] == w[2]) {
        return bad("expected alias FROM TO (two different paths)");
      }
      rule.name = std::string(w[1]);
      rule.value = std::string(w[2]);
      break;
    case UrlRuleKind::kIndexFile:
      if (w.size() != 2 || w[1].find('/') != std::string_view::npos) {
        return bad("expected index-file NAME (a file name)");
      }
      rule.name = std::string(w[1]);
      break;
    case UrlRuleKind::kParamPath:
      if (w.size() != 4 || !IsPath(w[1]) || !IsPath(w[3])) {
        return bad("expected param-path PATH NAME TO");
      }
      rule.path = std::string(w[1]);
      rule.name = std::string(w[2]);
      rule.value = std::string(w[3]);
      break;
    case UrlRuleKind::kSkipPath:
      if (w.size() != 2 || !IsPath(w[1])) return bad("expected skip-path PATH");
      rule.path = std::string(w[1]);
      break;
    case UrlRuleKind::kSortParams:
    case UrlRuleKind::kIgnoreCase:
      if (w.size() != 1) return bad("takes no argument");
      break;
  }
  return rule;
}

bool UrlRule::Matches(std::string_view url_path, std::string_view query) const {
  if (kind == UrlRuleKind::kSkipPath) return url_path == path;
  if (kind != UrlRuleKind::kSkipParamValue) return false;
  if (query.find(name) == std::string_view::npos) return false;  // one memchr-led search
  return AnyParam(query, [&](const QueryParam& p) {
    return p.has_value && p.name == name && p.value == value;
  });
}

bool UrlRule::Drops(const QueryParam& p) const {
  if (kind == UrlRuleKind::kDropParamValue)
    return p.has_value && p.name == name && p.value == value;
  return kind == UrlRuleKind::kDropParam && NameIn(name, p.name);
}

bool UrlRule::WhereHolds(std::string_view query) const {
  if (!where.empty() && !AnyParam(query, [&](const QueryParam& p) { return p.text == where; })) {
    return false;
  }
  return without.empty() ||
         !AnyParam(query, [&](const QueryParam& p) { return NameIn(without, p.name); });
}

bool UrlRule::ParamNames(std::vector<std::string>* names) const {
  switch (kind) {
    case UrlRuleKind::kDropParam:
      AnyName(name, [&](std::string_view n) {
        names->emplace_back(n);
        return false;
      });
      return true;
    case UrlRuleKind::kDropParamValue:
    case UrlRuleKind::kSkipParamValue:
    case UrlRuleKind::kParamPath:
      names->push_back(name);
      return true;
    default:
      return false;
  }
}

bool UrlRule::MayRewrite(std::string_view url_path, std::string_view query) const {
  switch (kind) {
    case UrlRuleKind::kDropParam:
    case UrlRuleKind::kDropParamValue:
      if (query.empty() || (!path.empty() && url_path != path)) return false;
      if (!AnyNameIn(query, name) || !WhereHolds(query)) return false;
      return AnyParam(query, [&](const QueryParam& p) { return Drops(p); });
    case UrlRuleKind::kSortParams: {
      std::string_view previous;
      return AnyParam(query, [&](const QueryParam& p) {
        const bool unsorted = p.text < previous;
        previous = p.text;
        return unsorted;
      });
    }
    case UrlRuleKind::kAlias:
      return url_path.starts_with(name);
    case UrlRuleKind::kIndexFile:
      return url_path.size() > name.size() && url_path.ends_with(name) &&
             url_path[url_path.size() - name.size() - 1] == '/';
    case UrlRuleKind::kIgnoreCase:
      for (size_t i = 0; i < url_path.size(); ++i) {
        if (url_path[i] == '%') {
          i += 2;
        } else if (url_path[i] >= 'A' && url_path[i] <= 'Z') {
          return true;
        }
      }
      return false;
    case UrlRuleKind::kParamPath:
      return url_path == path && query.size() > name.size() && query.starts_with(name) &&
             query[name.size()] == '=';
    case UrlRuleKind::kSkipParamValue:
    case UrlRuleKind::kSkipPath:
      return false;
  }
  return false;
}

bool UrlRule::Rewrite(UrlTail* tail) const {
  switch (kind) {
    case UrlRuleKind::kDropParam:
    case UrlRuleKind::kDropParamValue:
      if (!path.empty() && tail->path != path) return false;
      if (tail->query.empty() || !WhereHolds(tail->query)) return false;
      return DropParams(tail, [&](const QueryParam& p) { return Drops(p); });
    case UrlRuleKind::kSortParams: {
      std::vector<QueryParam> params = SplitQuery(tail->query);
      auto by_text = [](const QueryParam& a, const QueryParam& b) { return a.text < b.text; };
      if (std::is_sorted(params.begin(), params.end(), by_text)) return false;
      // Not stable_sort (a buffer allocated per call): parameters of equal text are equal.
      std::sort(params.begin(), params.end(), by_text);
      tail->query = JoinQuery(tail->query, params);
      return true;
    }
    case UrlRuleKind::kAlias:
      if (!tail->path.starts_with(name)) return false;
      tail->path = value + tail->path.substr(name.size());
      return true;
    case UrlRuleKind::kIndexFile: {
      const size_t n = name.size();
      if (tail->path.size() <= n || !tail->path.ends_with(name) ||
          tail->path[tail->path.size() - n - 1] != '/') {
        return false;
      }
      tail->path.resize(tail->path.size() - n);
      return true;
    }
    case UrlRuleKind::kIgnoreCase: {
      bool changed = false;
      for (size_t i = 0; i < tail->path.size(); ++i) {
        char& c = tail->path[i];
        if (c == '%') {
          i += 2;  // a percent-escape's hex digits stay upper case (RFC 3986 §6.2.2.1)
        } else if (c >= 'A' && c <= 'Z') {
          c = static_cast<char>(c - 'A' + 'a');
          changed = true;
        }
      }
      return changed;
    }
    case UrlRuleKind::kParamPath: {
      if (tail->path != path) return false;
      const std::vector<QueryParam> params = SplitQuery(tail->query);
      if (params.size() != 1 || params[0].name != name || params[0].value.empty()) return false;
      std::string rewritten = value;
      for (char c : params[0].value) {
        if (c == '?') {
          rewritten += "%3F";  // would start a query in a path
        } else {
          rewritten += c;
        }
      }
      tail->path = std::move(rewritten);
      tail->query.clear();
      return true;
    }
    case UrlRuleKind::kSkipParamValue:
    case UrlRuleKind::kSkipPath:
      return false;
  }
  return false;
}

bool Subsumes(const UrlRule& general, const UrlRule& specific) {
  const auto is_drop = [](const UrlRule& r) {
    return r.kind == UrlRuleKind::kDropParam || r.kind == UrlRuleKind::kDropParamValue;
  };
  if (!is_drop(general) || !is_drop(specific) || general == specific) return false;
  if (!general.path.empty() && general.path != specific.path) return false;
  if (!general.where.empty() && general.where != specific.where) return false;
  // The general rule requires no more parameters absent than the specific one.
  if (AnyName(general.without,
              [&](std::string_view n) { return !n.empty() && !NameIn(specific.without, n); })) {
    return false;
  }
  if (general.kind == UrlRuleKind::kDropParamValue) {
    return specific.kind == UrlRuleKind::kDropParamValue && general.name == specific.name &&
           general.value == specific.value;
  }
  // Every name the specific rule drops, the general one drops.
  return !AnyName(specific.name, [&](std::string_view n) { return !NameIn(general.name, n); });
}

std::string RuleId(std::string_view origin, const UrlRule& rule) {
  // FNV-1a: stable across builds and platforms (ids are written to outputs and the state).
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](std::string_view text) {
    for (unsigned char c : text) {
      h ^= c;
      h *= 0x100000001b3ull;
    }
  };
  mix(origin);
  mix("\n");
  mix(rule.Form());
  char id[16];
  std::snprintf(id, sizeof(id), "d%08x", static_cast<unsigned>((h ^ (h >> 32)) & 0xffffffffu));
  return id;
}

std::string JoinTail(std::string_view origin, const UrlTail& tail) {
  std::string key;
  key.reserve(origin.size() + tail.path.size() + 1 + tail.query.size());
  key.append(origin).append(tail.path);
  if (!tail.query.empty()) key.append("?").append(tail.query);
  return key;
}

}  // namespace urlsieve
