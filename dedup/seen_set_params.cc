#include "dedup/seen_set_params.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "url/tracking_params.h"

namespace urlsieve {
namespace {

const std::string* Find(const StoredFields& fields, std::string_view name) {
  auto it = fields.find(name);
  return it == fields.end() ? nullptr : &it->second;
}

bool ParseFlag(const std::string& text, bool* out) {
  if (text != "0" && text != "1") return false;
  *out = text == "1";
  return true;
}

}  // namespace

bool ParseStoredUint(const std::string& text, uint64_t* out) {
  if (text.empty() || text.size() > 20) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  errno = 0;
  *out = std::strtoull(text.c_str(), nullptr, 10);
  return errno == 0;
}

std::string FormatStoredDouble(double value) {
  char buffer[40];
  std::snprintf(buffer, sizeof(buffer), "%.17g", value);
  return buffer;
}

std::string EncodeStoredCanonicalize(const CanonicalizeOptions& o) {
  std::string s;
  if (o.key_version != 1) s += "key_version=" + std::to_string(o.key_version) + ",";
  // "sort_query=0,drop_empty_query=0,...": the rules in table order, as existing states hold them;
  // a rule added since only when on, as its version (CanonicalizeRule::stored_version).
  for (const CanonicalizeRule& rule : kCanonicalizeRules) {
    const bool on = o.*rule.member;
    if (rule.stored_version > 0 && !on) continue;
    if (&rule != &kCanonicalizeRules[0]) s += ',';
    s += rule.name;
    s += '=';
    s += std::to_string(rule.stored_version > 0 ? rule.stored_version : static_cast<int>(on));
    if (rule.member == &CanonicalizeOptions::strip_tracking_params) {
      const std::vector<std::string> exceptions =
          NormalizeTrackingExceptions(o.tracking_exceptions);
      for (size_t i = 0; i < exceptions.size(); ++i) {
        s += i == 0 ? ",tracking_exceptions=" : ";";
        s += exceptions[i];
      }
    }
  }
  s += ",max_length=" + std::to_string(o.max_length);
  return s;
}

Result<CanonicalizeOptions> DecodeStoredCanonicalize(const std::string& s) {
  CanonicalizeOptions o;
  int consumed = 0;
  o.key_version = 1;
  if (std::sscanf(s.c_str(), "key_version=%d,%n", &o.key_version, &consumed) == 1 &&
      (consumed == 0 || o.key_version < 2 || o.key_version > kCurrentKeyVersion)) {
    return Status::Unsupported("the state's keys are of canonicalizer version " +
                               std::to_string(o.key_version) + "; this build makes versions 1 to " +
                               std::to_string(kCurrentKeyVersion));
  }
  // Field by field, as one sscanf over "sort_query=%u,...,max_length=%llu" read them: each name
  // matched literally, each value by %u (so trailing text after max_length is ignored, as before).
  auto unreadable = [&s] {
    return Status::Corruption("unreadable canonicalizer options in state: '" + s + "'");
  };
  std::string_view rest = std::string_view(s).substr(consumed);
  auto literal = [&rest](std::string_view text) {
    if (!rest.starts_with(text)) return false;
    rest.remove_prefix(text.size());
    return true;
  };
  for (const CanonicalizeRule& rule : kCanonicalizeRules) {
    unsigned value = 0;
    int n = 0;
    if (rule.stored_version > 0) {
      // A rule added since: there only when on; its value is the version of what it does.
      // Appended, not "," + std::string: GCC 12 -O3 reports a false -Wrestrict on that.
      std::string field(1, ',');
      field.append(rule.name).push_back('=');
      if (!literal(field)) continue;
      if (std::sscanf(rest.data(), "%u%n", &value, &n) != 1) return unreadable();
      rest.remove_prefix(n);
      if (value != 0 && value != static_cast<unsigned>(rule.stored_version)) {
        return Status::Unsupported("the state's keys are made with " + std::string(rule.name) +
                                   " version " + std::to_string(value) + "; this build makes " +
                                   std::to_string(rule.stored_version));
      }
      o.*rule.member = value != 0;
      if (rule.member == &CanonicalizeOptions::strip_tracking_params &&
          literal(",tracking_exceptions=")) {
        const std::string_view list = rest.substr(0, rest.find(','));
        rest.remove_prefix(list.size());
        for (size_t b = 0; b <= list.size();) {
          const size_t end = std::min(list.find(';', b), list.size());
          const std::string exception(list.substr(b, end - b));
          if (!CheckTrackingException(exception).empty()) return unreadable();
          o.tracking_exceptions.push_back(exception);
          b = end + 1;
        }
      }
      continue;
    }
    if ((&rule != &kCanonicalizeRules[0] && !literal(",")) || !literal(rule.name) ||
        !literal("=") || std::sscanf(rest.data(), "%u%n", &value, &n) != 1) {
      return unreadable();
    }
    rest.remove_prefix(n);
    o.*rule.member = value != 0;
  }
  unsigned long long max_length = 0;
  if (!literal(",max_length=") || std::sscanf(rest.data(), "%llu", &max_length) != 1) {
    return unreadable();
  }
  o.max_length = static_cast<size_t>(max_length);
  return o;
}

bool HasStoredTimeFields(const StateParameters& p) { return p.revisit_after_s > 0 || p.deletable; }

FieldList EncodeStoredParameters(const StateParameters& p, StoredTimeFields time) {
  FieldList fields = {{"capacity", std::to_string(p.capacity)},
                      {"fp_rate", FormatStoredDouble(p.fp_rate)},
                      {"exact", p.exact ? "1" : "0"},
                      {"canonicalize", EncodeStoredCanonicalize(p.canonicalize)}};
  const bool all = time == StoredTimeFields::kAllOrNone && HasStoredTimeFields(p);
  if (all || p.revisit_after_s > 0) {
    fields.push_back({"revisit_after", std::to_string(p.revisit_after_s)});
    fields.push_back({"generations", std::to_string(p.generations)});
  }
  if (all || p.deletable) fields.push_back({"deletable", p.deletable ? "1" : "0"});
  return fields;
}

Result<StateParameters> DecodeStoredParameters(const StoredFields& fields,
                                               const StoredParameterRules& rules) {
  auto bad = [&rules, &fields](std::string_view name) {
    const std::string* value = Find(fields, name);
    return Status::Corruption(rules.where + ": " +
                              (value == nullptr ? "no field '" + std::string(name) + "'"
                                                : "unreadable field '" + std::string(name) +
                                                      "' (\"" + value->substr(0, 40) + "\")"));
  };
  StateParameters p;
  const std::string* text = Find(fields, "capacity");
  if (text == nullptr || !ParseStoredUint(*text, &p.capacity) || p.capacity == 0) {
    return bad("capacity");
  }
  if ((text = Find(fields, "fp_rate")) == nullptr) return bad("fp_rate");
  char* end = nullptr;
  p.fp_rate = std::strtod(text->c_str(), &end);
  if (end == text->c_str() || *end != '\0' || !(p.fp_rate > 0 && p.fp_rate < 1)) {
    return bad("fp_rate");
  }
  if ((text = Find(fields, "exact")) == nullptr || !ParseFlag(*text, &p.exact)) return bad("exact");
  if ((text = Find(fields, "canonicalize")) == nullptr) return bad("canonicalize");
  auto canonicalize = DecodeStoredCanonicalize(*text);
  if (!canonicalize.ok()) {
    return Status(canonicalize.status().code(),
                  rules.where + ": " + canonicalize.status().message());
  }
  p.canonicalize = *canonicalize;

  // The time fields: all three or none (the Redis meta), or each when set (the state directory,
  // whose revisit_after is never 0).
  const bool all = rules.time == StoredTimeFields::kAllOrNone;
  if (all && !rules.has_time_fields) return p;
  if ((text = Find(fields, "revisit_after")) != nullptr || all) {
    if (text == nullptr || !ParseStoredUint(*text, &p.revisit_after_s) ||
        (!all && p.revisit_after_s == 0)) {
      return bad("revisit_after");
    }
    uint64_t generations = 0;
    if ((text = Find(fields, "generations")) == nullptr || !ParseStoredUint(*text, &generations) ||
        generations > rules.max_generations || (p.revisit_after_s > 0 && generations == 0)) {
      return bad("generations");
    }
    p.generations = p.revisit_after_s > 0 ? static_cast<uint32_t>(generations) : 0;
  }
  if ((text = Find(fields, "deletable")) != nullptr || all) {
    if (text == nullptr || !ParseFlag(*text, &p.deletable)) return bad("deletable");
  }
  return p;
}

}  // namespace urlsieve
