#include "frontier/robots_rules.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

#include "base/strings.h"

namespace urlsieve {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool IsUnreserved(unsigned char c) {  // RFC 3986 §2.3
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

}  // namespace

std::string RobotsProductToken(std::string_view agent) {
  agent = Trim(agent);
  size_t n = 0;
  while (n < agent.size() &&
         ((agent[n] >= 'a' && agent[n] <= 'z') || (agent[n] >= 'A' && agent[n] <= 'Z') ||
          agent[n] == '_' || agent[n] == '-')) {
    ++n;
  }
  return AsciiLowercase(agent.substr(0, n));
}

namespace {

enum class Key { kUnknown, kUserAgent, kAllow, kDisallow, kCrawlDelay, kSitemap };

// RFC 9309 §2.2 asks for leniency; besides the canonical spellings we accept the typos that are
// common in the wild (the same set Google's parser accepts, plus a few more).
Key ParseKey(std::string_view raw) {
  const std::string k = AsciiLowercase(Trim(raw));
  if (k == "user-agent" || k == "useragent" || k == "user agent" || k == "user_agent") {
    return Key::kUserAgent;
  }
  if (k == "allow") return Key::kAllow;
  if (k == "disallow" || k == "dissallow" || k == "dissalow" || k == "disalow" || k == "diasllow" ||
      k == "disallaw" || k == "dis-allow") {
    return Key::kDisallow;
  }
  if (k == "crawl-delay" || k == "crawldelay" || k == "crawl delay" || k == "crawl_delay") {
    return Key::kCrawlDelay;
  }
  if (k == "sitemap" || k == "site-map") return Key::kSitemap;
  return Key::kUnknown;
}

// Splits "key: value" into a known key and its value. Lenient (RFC 9309 §2.2): the colon may be
// missing ("Disallow /a"), and the key may be two words ("user agent: b").
bool SplitLine(std::string_view line, Key* key, std::string_view* value) {
  if (const size_t colon = line.find(':'); colon != std::string_view::npos) {
    *key = ParseKey(line.substr(0, colon));
    if (*key != Key::kUnknown) {
      *value = Trim(line.substr(colon + 1));
      return true;
    }
  }
  size_t sep = line.find_first_of(" \t");
  for (int words = 0; words < 2 && sep != std::string_view::npos; ++words) {
    *key = ParseKey(line.substr(0, sep));
    if (*key != Key::kUnknown) {
      std::string_view rest = Trim(line.substr(sep));
      if (!rest.empty() && rest.front() == ':') rest = Trim(rest.substr(1));
      *value = rest;
      return true;
    }
    sep = line.find_first_of(" \t", line.find_first_not_of(" \t", sep));
  }
  return false;
}

// Does `pattern` (with '*' wildcards and an optional final '$') match a prefix of `path`
// (RFC 9309 §2.2.3)? Tracks the set of path positions reachable after each pattern octet, so the
// cost is O(|pattern| · |path|) in the worst case and never exponential.
bool PatternMatches(std::string_view pattern, std::string_view path) {
  const bool anchored = !pattern.empty() && pattern.back() == '$';
  if (anchored) pattern.remove_suffix(1);
  if (pattern.find('*') == std::string_view::npos) {
    return anchored ? path == pattern : path.substr(0, pattern.size()) == pattern;
  }
  // positions[i] is true when the pattern read so far can end just before path[i].
  std::vector<size_t> positions{0};
  std::vector<size_t> next;
  for (char c : pattern) {
    if (c == '*') {
      const size_t from = positions.front();  // positions are kept sorted
      positions.clear();
      for (size_t p = from; p <= path.size(); ++p) positions.push_back(p);
      continue;
    }
    next.clear();
    for (size_t p : positions) {
      if (p < path.size() && path[p] == c) next.push_back(p + 1);
    }
    if (next.empty()) return false;
    positions.swap(next);
  }
  return !anchored || positions.back() == path.size();
}

// The part of a robots.txt body that is parsed: at most kRobotsParseLimit bytes (*truncated when
// the body is longer), without a leading byte order mark.
std::string_view ParsedPart(std::string_view body, bool* truncated) {
  if (body.size() > kRobotsParseLimit) {
    // RFC 9309 §2.5: parse the first 500 KiB; a line cut by the limit is dropped, not half-read.
    *truncated = true;
    body = body.substr(0, kRobotsParseLimit);
    const size_t last_break = body.find_last_of("\r\n");
    body = last_break == std::string_view::npos ? std::string_view() : body.substr(0, last_break);
  }
  // A UTF-8 byte order mark (or the part of one that survived) precedes the first line.
  for (unsigned char bom : {0xEF, 0xBB, 0xBF}) {
    if (!body.empty() && static_cast<unsigned char>(body.front()) == bom) body.remove_prefix(1);
  }
  return body;
}

// The line of `body` that starts at *pos, without its end; *pos moves past the end.
std::string_view NextLine(std::string_view body, size_t* pos) {
  // CR, LF and CRLF all end a line (RFC 9309 §2.2: EOL = %x0A / %x0D / %x0D.0A).
  size_t end = body.find_first_of("\r\n", *pos);
  if (end == std::string_view::npos) end = body.size();
  const std::string_view line = body.substr(*pos, end - *pos);
  *pos = end + 1;
  if (end + 1 < body.size() && body[end] == '\r' && body[end + 1] == '\n') ++*pos;
  return line;
}

std::string_view StripCommentAndBlanks(std::string_view line) {
  if (const size_t hash = line.find('#'); hash != std::string_view::npos) {
    line = line.substr(0, hash);
  }
  return Trim(line);
}

// The agent a user-agent line names: "*", or the product token of its value ("" when none).
std::string AgentToken(std::string_view value) {
  return !value.empty() && value.front() == '*' ? std::string("*") : RobotsProductToken(value);
}

// The rule of an allow or disallow line with a non-empty `value`.
RobotsRule MakeRule(bool allow, std::string_view value, std::string_view line, uint32_t line_no) {
  RobotsRule rule;
  rule.allow = allow;
  rule.pattern = NormalizeRobotsPath(value);
  // Patterns must start with '/' or '*' (§2.2.2); be lenient and anchor the others.
  if (rule.pattern.front() != '/' && rule.pattern.front() != '*') {
    rule.pattern.insert(rule.pattern.begin(), '/');
  }
  rule.line = line_no;
  rule.text = std::string(line);
  return rule;
}

// A crawl-delay value in seconds; none unless it is a finite number >= 0.
std::optional<double> ParseCrawlDelay(std::string_view value) {
  double seconds = 0;
  const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  (void)ptr;
  if (ec == std::errc() && std::isfinite(seconds) && seconds >= 0) return seconds;
  return std::nullopt;
}

}  // namespace

std::string NormalizeRobotsPath(std::string_view path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(path.size());
  for (size_t i = 0; i < path.size(); ++i) {
    const auto c = static_cast<unsigned char>(path[i]);
    if (c == '%' && i + 2 < path.size() && HexValue(path[i + 1]) >= 0 &&
        HexValue(path[i + 2]) >= 0) {
      const auto decoded =
          static_cast<unsigned char>(HexValue(path[i + 1]) * 16 + HexValue(path[i + 2]));
      // RFC 9309 §2.2.2: percent-encoded unreserved octets are decoded before comparison;
      // everything else stays encoded (with one spelling of the hex digits).
      if (IsUnreserved(decoded)) {
        out.push_back(static_cast<char>(decoded));
      } else {
        out.push_back('%');
        out.push_back(kHex[decoded >> 4]);
        out.push_back(kHex[decoded & 15]);
      }
      i += 2;
    } else if (c == '%' || c >= 0x80 || c <= 0x20 || c == 0x7f) {
      // RFC 9309 §2.2.2: non-ASCII (UTF-8) octets in patterns are matched percent-encoded. A '%'
      // that starts no escape is a literal percent sign: "%25", as the URL canonicalizer writes it
      // in the paths matched (and so that normalizing twice changes nothing: "/%7%41" is "/%257A",
      // not "/%7A", which would then decode to "/z").
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

RobotsRules RobotsRules::DisallowAll() {
  RobotsRules rules;
  rules.disallow_all_ = true;
  return rules;
}

RobotsRules RobotsRules::Parse(std::string_view body) {
  RobotsRules out;
  body = ParsedPart(body, &out.truncated_);
  // A group is one or more user-agent lines followed by rules (RFC 9309 §2.1, §2.2.1); a
  // user-agent line after a rule starts the next group.
  bool in_agent_run = false;
  uint32_t line_no = 0;
  size_t pos = 0;
  while (pos < body.size()) {
    const std::string_view line = StripCommentAndBlanks(NextLine(body, &pos));
    ++line_no;
    if (line.empty()) continue;
    Key key;
    std::string_view value;
    if (!SplitLine(line, &key, &value)) continue;  // garbage or an unknown field

    switch (key) {
      case Key::kUserAgent: {
        if (!in_agent_run) {
          out.groups_.emplace_back();
          in_agent_run = true;
        }
        std::string token = AgentToken(value);
        if (!token.empty()) out.groups_.back().agents.push_back(std::move(token));
        break;
      }
      case Key::kAllow:
      case Key::kDisallow:
        in_agent_run = false;
        // Rules before the first user-agent line belong to no group and are ignored.
        if (out.groups_.empty()) break;
        // An empty value matches nothing (RFC 9309 §2.2.2); keep no rule for it.
        if (value.empty()) break;
        out.groups_.back().rules.push_back(MakeRule(key == Key::kAllow, value, line, line_no));
        break;
      case Key::kCrawlDelay:
        in_agent_run = false;
        if (out.groups_.empty()) break;
        if (const std::optional<double> seconds = ParseCrawlDelay(value)) {
          out.groups_.back().crawl_delay = *seconds;
        }
        break;
      case Key::kSitemap:
        // Sitemap lines are global, not group members (RFC 9309 §2.2.4), so they do not end a
        // run of user-agent lines either.
        if (!value.empty()) out.sitemaps_.emplace_back(value);
        break;
      case Key::kUnknown:
        break;
    }
  }
  return out;
}

RobotsPolicy RobotsRules::ForAgent(std::string_view agent) const {
  RobotsPolicy policy;
  if (disallow_all_) {
    policy.disallow_all_ = true;
    return policy;
  }
  const std::string token = RobotsProductToken(agent);
  // RFC 9309 §2.2.1: all groups naming the product token are merged; only when none does are
  // the '*' groups used (also merged).
  auto select = [&](std::string_view want) {
    bool any = false;
    for (const Group& group : groups_) {
      if (std::find(group.agents.begin(), group.agents.end(), want) == group.agents.end()) {
        continue;
      }
      any = true;
      policy.rules_.insert(policy.rules_.end(), group.rules.begin(), group.rules.end());
      if (group.crawl_delay) {
        policy.crawl_delay_ = std::max(policy.crawl_delay_.value_or(0), *group.crawl_delay);
      }
    }
    return any;
  };
  if (token.empty() || token == "*" || !select(token)) select("*");
  return policy;
}

RobotsMatch RobotsPolicy::Match(std::string_view path) const {
  if (path.empty()) path = "/";
  // RFC 9309 §2.2.2: "/robots.txt" is implicitly allowed.
  if (path == "/robots.txt") return {};
  if (disallow_all_) return {false, nullptr};
  if (rules_.empty()) return {};
  const std::string normalized = NormalizeRobotsPath(path);
  // RFC 9309 §2.2.2: the most specific (longest) matching pattern wins; on a tie between an
  // allow and a disallow rule, allow wins.
  const RobotsRule* best = nullptr;
  for (const RobotsRule& rule : rules_) {
    if (best != nullptr && (rule.pattern.size() < best->pattern.size() ||
                            (rule.pattern.size() == best->pattern.size() && !rule.allow))) {
      continue;
    }
    if (!PatternMatches(rule.pattern, normalized)) continue;
    if (best == nullptr || rule.pattern.size() > best->pattern.size() || rule.allow) best = &rule;
  }
  if (best == nullptr) return {};
  return {best->allow, best};
}

}  // namespace urlsieve
