// What any robots.txt body must satisfy once parsed: checked by fuzz/fuzz_robots.cc on random
// input and by robots_rules_test.cc on the fuzzer's corpus. Parsing never fails (RFC 9309 §2.2 asks
// for leniency), and matching obeys the rules it reports. The paths matched are "/", the body's
// last line, and every rule's own pattern.
#ifndef URLSIEVE_TESTS_FRONTIER_ROBOTS_INVARIANTS_H_
#define URLSIEVE_TESTS_FRONTIER_ROBOTS_INVARIANTS_H_

#include <cmath>
#include <string>
#include <string_view>

#include "frontier/robots_rules.h"

namespace urlsieve::testing {

// Empty if `policy` decides `path` consistently; else what is wrong.
inline std::string RobotsMatchViolation(const RobotsPolicy& policy, std::string_view path) {
  const RobotsMatch match = policy.Match(path);
  if (match.allowed != policy.IsAllowed(path)) return "Match and IsAllowed disagree";
  if (match.rule == nullptr) {
    // No deciding rule: allowed, unless the whole site is disallowed (robots.txt itself never is).
    if (!match.allowed && !policy.disallow_all()) return "disallowed without a rule";
    return "";
  }
  const auto& rules = policy.rules();
  if (match.rule < rules.data() || match.rule >= rules.data() + rules.size()) {
    return "deciding rule is not one of the policy's";
  }
  if (match.allowed != match.rule->allow) return "verdict differs from the deciding rule";
  return "";
}

// Empty if the parse of `body` keeps every invariant; else what is wrong, and where.
inline std::string RobotsInvariantViolation(std::string_view body) {
  const RobotsRules rules = RobotsRules::Parse(body);
  const size_t last_newline = body.find_last_of("\r\n");
  const std::string_view last_line =
      last_newline == std::string_view::npos ? body : body.substr(last_newline + 1);
  for (std::string_view agent : {"urlsieve/0.1 (+https://example.com/bot)", "*", "googlebot"}) {
    const RobotsPolicy policy = rules.ForAgent(agent);
    const auto delay = policy.crawl_delay();
    if (delay && !(std::isfinite(*delay) && *delay >= 0)) return "crawl-delay out of range";
    for (std::string_view path : {std::string_view("/"), last_line}) {
      std::string wrong = RobotsMatchViolation(policy, path);
      if (!wrong.empty()) return wrong + ": " + std::string(path);
    }
    for (const RobotsRule& rule : policy.rules()) {
      const std::string& pattern = rule.pattern;
      if (NormalizeRobotsPath(pattern) != pattern) return "pattern not normalized: " + pattern;
      std::string wrong = RobotsMatchViolation(policy, pattern);
      if (!wrong.empty()) return wrong + ": " + pattern;
      // A rule without wildcards matches its own pattern, so that path must be decided by a rule
      // at least as specific (RFC 9309 §2.2.2: the longest match wins).
      if (pattern.empty() || pattern.front() != '/' || pattern == "/robots.txt" ||
          pattern.find_first_of("*$") != std::string::npos) {
        continue;
      }
      const RobotsMatch own = policy.Match(pattern);
      if (own.rule == nullptr) return "a rule does not match its own pattern: " + pattern;
      if (own.rule->pattern.size() < pattern.size()) return "a less specific rule won: " + pattern;
    }
  }
  const std::string normalized = NormalizeRobotsPath(last_line);
  if (NormalizeRobotsPath(normalized) != normalized) {
    return "NormalizeRobotsPath is not idempotent: " + std::string(last_line);
  }
  return "";
}

}  // namespace urlsieve::testing

#endif  // URLSIEVE_TESTS_FRONTIER_ROBOTS_INVARIANTS_H_
