// RobotsRules: a parsed robots.txt (RFC 9309), and RobotsPolicy: the rules that apply to one
// crawler, ready for matching.
//
// Parsing never fails: robots.txt in the wild is full of typos, BOMs, mixed line endings and
// garbage, and RFC 9309 §2.2 asks crawlers to be lenient. Only the first kRobotsParseLimit bytes
// are parsed (§2.5). Fetch semantics (2xx parse, 4xx allow all, 5xx/unreachable disallow all,
// §2.3.1) are expressed by the AllowAll()/DisallowAll() factories; the frontier applies them.
//
// Usage: RobotsRules::Parse(body).ForAgent("MyBot/1.0") → RobotsPolicy; policy.Match(path) or
// policy.IsAllowed(path), where path is the URL's path and query ("/a/b?c").
//
// Thread-safety: both types are immutable after construction; share them freely.
#ifndef URLSIEVE_FRONTIER_ROBOTS_RULES_H_
#define URLSIEVE_FRONTIER_ROBOTS_RULES_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace urlsieve {

// RFC 9309 §2.5: crawlers SHOULD parse at least 500 KiB; we parse exactly that much.
inline constexpr size_t kRobotsParseLimit = 500 * 1024;

struct RobotsRule {
  bool allow = false;
  std::string pattern;  // normalized (see NormalizeRobotsPath); may hold '*' and a final '$'
  uint32_t line = 0;    // 1-based line number in the robots.txt body
  std::string text;     // the line as written (comment and surrounding blanks removed)
};

struct RobotsMatch {
  bool allowed = true;
  const RobotsRule* rule = nullptr;  // the deciding rule; null when no rule matched
};

// The product token of a user-agent, lowercased: what selects its robots.txt groups (RFC 9309
// §2.2.1: [a-zA-Z_-]; "urlsieve/0.1 (+https://...)" is "urlsieve").
std::string RobotsProductToken(std::string_view agent);

// The rules for one user agent: the merged matching groups, or the '*' groups, or nothing.
class RobotsPolicy {
 public:
  RobotsPolicy() = default;  // allows everything

  // `path` is the URL's path plus query; percent-encoding is normalized before matching.
  RobotsMatch Match(std::string_view path) const;
  bool IsAllowed(std::string_view path) const { return Match(path).allowed; }

  // Crawl-delay (not part of RFC 9309, widely used) of the selected groups, in seconds.
  std::optional<double> crawl_delay() const { return crawl_delay_; }
  bool disallow_all() const { return disallow_all_; }
  const std::vector<RobotsRule>& rules() const { return rules_; }

 private:
  friend class RobotsRules;
  std::vector<RobotsRule> rules_;
  std::optional<double> crawl_delay_;
  bool disallow_all_ = false;
};

class RobotsRules {
 public:
  RobotsRules() = default;  // no groups: allows everything
  static RobotsRules Parse(std::string_view body);
  // RFC 9309 §2.3.1.3: an unavailable robots.txt (4xx) means no restrictions.
  static RobotsRules AllowAll() { return RobotsRules(); }
  // RFC 9309 §2.3.1.4: an unreachable robots.txt (5xx, network error) means complete disallow.
  static RobotsRules DisallowAll();

  // Selects the groups for the crawler whose user-agent (or product token) is `agent`:
  // "FooBot/1.2 (+https://x)" selects groups for "foobot" (RFC 9309 §2.2.1).
  RobotsPolicy ForAgent(std::string_view agent) const;

  const std::vector<std::string>& sitemaps() const { return sitemaps_; }
  bool truncated() const { return truncated_; }  // the body was longer than kRobotsParseLimit

 private:
  struct Group {
    std::vector<std::string> agents;  // lowercased product tokens, "*" for the fallback
    std::vector<RobotsRule> rules;
    std::optional<double> crawl_delay;
  };
  std::vector<Group> groups_;
  std::vector<std::string> sitemaps_;
  bool truncated_ = false;
  bool disallow_all_ = false;
};

// Percent-encoding normalization applied to patterns and paths alike (RFC 9309 §2.2.2):
// "%xx" of an unreserved character is decoded, other "%xx" get uppercase hex, and octets that
// may not appear in a URI (non-ASCII, controls, space) are percent-encoded.
std::string NormalizeRobotsPath(std::string_view path);

}  // namespace urlsieve

#endif  // URLSIEVE_FRONTIER_ROBOTS_RULES_H_
