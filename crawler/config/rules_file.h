// The --rules-file (docs/features/dust.md, "Pinning and forbidding rules"): URL rules a user
// pins (applied from the start, never retired) or forbids (never learned), in TOML:
//
//   [[pin]]
//   origin = "https://example.com"     # scheme://host[:port], as the crawl fetches it
//   rule = "drop-param sessionid"      # a form of url/url_rule.h
//
//   [[forbid]]
//   origin = "https://example.com"
//   rule = "drop-param page"
//
// Thread-safety: a pure function of the file.
#ifndef URLSIEVE_CRAWLER_CONFIG_RULES_FILE_H_
#define URLSIEVE_CRAWLER_CONFIG_RULES_FILE_H_

#include <string>
#include <vector>

#include "base/status.h"

namespace urlsieve {

struct UserRule {
  std::string origin;
  std::string form;
  bool pin = true;  // false: forbid
};

// The file's rules, checked (an origin of a URL, a form that parses). Errors name the file, the
// entry and what is wrong.
Result<std::vector<UserRule>> ReadRulesFile(const std::string& path);

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CONFIG_RULES_FILE_H_
