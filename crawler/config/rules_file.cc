#include "crawler/config/rules_file.h"

#include <toml++/toml.h>

#include "url/url_canonicalizer.h"
#include "url/url_rule.h"

namespace urlsieve {

Result<std::vector<UserRule>> ReadRulesFile(const std::string& path) {
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& error) {
    return Status::InvalidArgument("--rules-file " + path + ": " +
                                   std::string(error.description()));
  }
  std::vector<UserRule> rules;
  for (const auto& [key, node] : root) {
    const std::string_view action = key.str();
    if (action != "pin" && action != "forbid") {
      return Status::InvalidArgument("--rules-file " + path + ": unknown table \"" +
                                     std::string(action) + "\" (expected [[pin]] or [[forbid]])");
    }
    const toml::array* entries = node.as_array();
    if (entries == nullptr) {
      return Status::InvalidArgument("--rules-file " + path + ": " + std::string(action) +
                                     " must be an array of tables ([[" + std::string(action) +
                                     "]])");
    }
    for (size_t i = 0; i < entries->size(); ++i) {
      const std::string where = "--rules-file " + path + ": [[" + std::string(action) + "]] " +
                                std::to_string(i + 1) + ": ";
      const toml::table* entry = entries->get(i)->as_table();
      if (entry == nullptr) return Status::InvalidArgument(where + "not a table");
      std::optional<std::string> origin = (*entry)["origin"].value<std::string>();
      std::optional<std::string> form = (*entry)["rule"].value<std::string>();
      if (!origin || !form) return Status::InvalidArgument(where + "needs origin and rule strings");
      // The origin as the crawl spells it: canonical scheme and host, default port dropped.
      Result<CanonicalUrl> url = UrlCanonicalizer().Canonicalize(*origin);
      if (!url.ok() || url->path() != "/" || url->has_query()) {
        return Status::InvalidArgument(where + "origin \"" + *origin +
                                       "\" is not scheme://host[:port]");
      }
      Result<UrlRule> rule = UrlRule::Parse(*form);
      if (!rule.ok()) return Status::InvalidArgument(where + rule.status().message());
      rules.push_back({std::string(url->origin()), rule->Form(), action == "pin"});
    }
  }
  return rules;
}

}  // namespace urlsieve
