// The table of crawl options (crawler/config/crawl_options.h) and the canonicalization rules
// (kCanonicalizeRules): configs/default.toml agrees with the table, the table's rules fit the
// fields they set, and the reader, Validate and the flags all follow it.
#include "crawler/config/crawl_options.h"

#include <gtest/gtest.h>
#include <toml++/toml.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "crawler/cli/option_flags.h"
#include "crawler/config/crawl_config.h"
#include "url/url_canonicalizer.h"

namespace urlsieve {
namespace {

const std::string kDefaultToml = std::string(URLSIEVE_SOURCE_DIR) + "/configs/default.toml";

const CrawlOptionSpec* Find(std::string_view key) {
  for (const CrawlOptionSpec& spec : CrawlOptionSpecs()) {
    if (spec.key() == key) return &spec;
  }
  return nullptr;
}

// A TOML value as the spec's type (the test's own reading, independent of ParseCrawlConfig).
std::optional<OptionValue> FromToml(const CrawlOptionSpec& spec, const toml::node& n) {
  switch (spec.type) {
    case OptionType::kBool:
      if (auto v = n.value<bool>()) return OptionValue(*v);
      break;
    case OptionType::kInteger:
      if (n.is_integer()) return OptionValue(n.as_integer()->get());
      break;
    case OptionType::kNumber:
      if (auto v = n.value<double>()) return OptionValue(*v);
      break;
    case OptionType::kString:
    case OptionType::kChoice:
    case OptionType::kDuration:
      if (n.is_string()) return OptionValue(n.as_string()->get());
      break;
    case OptionType::kStringList:
      if (const toml::array* array = n.as_array()) {
        std::vector<std::string> list;
        for (const toml::node& item : *array) {
          if (!item.is_string()) return std::nullopt;
          list.push_back(item.as_string()->get());
        }
        return OptionValue(list);
      }
      break;
  }
  return std::nullopt;
}

// A required option (a seeds file) has no default: default.toml shows an example instead.
bool IsRequiredWithoutDefault(const CrawlOptionSpec& spec) {
  const OptionValue value = spec.get(CrawlConfig());
  const std::string* text = std::get_if<std::string>(&value);
  return !spec.if_empty.empty() && text != nullptr && text->empty();
}

TEST(CrawlOptionsTest, DefaultTomlListsEveryOptionWithItsDefault) {
  toml::table root = toml::parse_file(kDefaultToml);
  const CrawlConfig defaults;
  for (const CrawlOptionSpec& spec : CrawlOptionSpecs()) {
    if (!spec.in_file) continue;
    const toml::node* node = root[spec.section][spec.name].node();
    ASSERT_NE(node, nullptr) << spec.key() << " is not in configs/default.toml";
    std::optional<OptionValue> value = FromToml(spec, *node);
    ASSERT_TRUE(value.has_value()) << spec.key() << " has a value of the wrong type";
    if (IsRequiredWithoutDefault(spec)) {
      EXPECT_NE(std::get<std::string>(*value), "") << spec.key() << ": an example is expected";
    } else {
      EXPECT_EQ(*value, spec.get(defaults)) << spec.key() << " differs from its default";
    }
  }
}

TEST(CrawlOptionsTest, EveryKeyOfDefaultTomlIsAnOption) {
  toml::table root = toml::parse_file(kDefaultToml);
  size_t keys = 0;
  for (auto&& [section, node] : root) {
    const toml::table* table = node.as_table();
    ASSERT_NE(table, nullptr) << section.str() << " is not a [section]";
    for (auto&& [name, value] : *table) {
      const std::string key = std::string(section.str()) + "." + std::string(name.str());
      const CrawlOptionSpec* spec = Find(key);
      EXPECT_TRUE(spec != nullptr && spec->in_file) << key << " is in default.toml but no option";
      ++keys;
    }
  }
  size_t in_file = 0;
  for (const CrawlOptionSpec& spec : CrawlOptionSpecs()) in_file += spec.in_file;
  EXPECT_EQ(keys, in_file);
}

TEST(CrawlOptionsTest, KeysAndFlagsAreUnique) {
  std::set<std::string> keys;
  std::set<std::string> flags = {"-c", "--config", "-h", "--help"};
  for (const CrawlOptionSpec& spec : CrawlOptionSpecs()) {
    EXPECT_TRUE(keys.insert(spec.key()).second) << spec.key();
    EXPECT_TRUE(spec.in_file || !spec.flag.empty()) << spec.key() << " can be set nowhere";
    std::string_view names = spec.flag;
    while (!names.empty()) {
      const size_t comma = names.find(',');
      EXPECT_TRUE(flags.insert(std::string(names.substr(0, comma))).second) << spec.flag;
      names = comma == std::string_view::npos ? "" : names.substr(comma + 1);
    }
  }
}

// The defaults meet the rules, and each rule fits the field it guards: its bounds are stored and
// read back unchanged, so a value in range never wraps around.
TEST(CrawlOptionsTest, DefaultsMeetTheRulesAndRangesFitTheirFields) {
  for (const CrawlOptionSpec& spec : CrawlOptionSpecs()) {
    CrawlConfig config;
    EXPECT_EQ(CheckOptionValue(spec, spec.get(config)), "") << spec.key();
    EXPECT_TRUE(StoreOption(spec, spec.get(CrawlConfig()), &config).ok()) << spec.key();
    if (spec.type != OptionType::kInteger) continue;
    ASSERT_LE(spec.min, spec.max) << spec.key();
    for (int64_t bound : {spec.min, spec.max}) {
      ASSERT_TRUE(StoreOption(spec, bound, &config).ok()) << spec.key() << " " << bound;
      EXPECT_EQ(spec.get(config), OptionValue(bound)) << spec.key();
    }
  }
}

// Validate checks every option's rule, whichever way the value got into the config.
TEST(CrawlOptionsTest, ValidateChecksEveryRuleByKey) {
  for (const CrawlOptionSpec& spec : CrawlOptionSpecs()) {
    if (spec.type != OptionType::kInteger && spec.type != OptionType::kNumber) continue;
    CrawlConfig config;
    config.crawl.seeds = "s";
    // Out of range: below it, or (0 being "off" there) above it.
    const OptionValue below = spec.type == OptionType::kInteger
                                  ? OptionValue(spec.zero_is_off ? int64_t{1} : spec.min - 1)
                                  : OptionValue(spec.zero_is_off ? spec.below : spec.above);
    ASSERT_TRUE(spec.set(&config, below).ok()) << spec.key();
    const Status status = config.Validate();
    ASSERT_FALSE(status.ok()) << spec.key();
    EXPECT_EQ(status.message(), spec.key() + ": " + CheckOptionValue(spec, below));
  }
  CrawlConfig config;
  config.crawl.seeds = "s";
  config.fetch.user_agent = "";
  EXPECT_EQ(config.Validate().message(), "fetch.user_agent: must not be empty");
}

TEST(CrawlOptionsTest, RuleMessages) {
  EXPECT_EQ(CheckOptionValue(*Find("crawl.threads"), int64_t{0}), "must be in [1, 1024], got 0");
  EXPECT_EQ(CheckOptionValue(*Find("scope.max_repeated_segments"), int64_t{1}),
            "must be 0 (off) or in [2, 1000], got 1");
  EXPECT_EQ(CheckOptionValue(*Find("scope.max_repeated_segments"), int64_t{0}), "");
  EXPECT_EQ(CheckOptionValue(*Find("crawl.false_positive_rate"), 1.0), "must be in (0, 1), got 1");
  EXPECT_EQ(CheckOptionValue(*Find("dust.min_confidence_bound"), 0.0), "");
  EXPECT_EQ(CheckOptionValue(*Find("dust.min_confidence_bound"), 1.0),
            "must be 0 (off) or in (0, 1), got 1");
  EXPECT_EQ(CheckOptionValue(*Find("scope.mode"), std::string("site")),
            "must be one of host, domain, any, not \"site\"");
}

TEST(CrawlOptionsTest, AFileWithSeveralMistakesIsReportedAtTheFirst) {
  Result<CrawlConfig> c = ParseCrawlConfig(
      "[scope]\nmode = \"any\"\nmax_url_length = 1\n[crawl]\nthreads = 0\nnope = 1\n", "t.toml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            "t.toml:3: scope.max_url_length: must be in [16, 1048576], got 1");
  c = ParseCrawlConfig("[scope]\ndeny = [\n  \"a\",\n  2,\n]\n", "t.toml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "t.toml:4: scope.deny: must be an array of strings");
}

// A flag's value is held to the same rule as the file's, and one too large for its field is an
// error, not a value that wrapped around into range.
TEST(CrawlOptionsTest, FlagValuesMeetTheSameRules) {
  for (const char* threads : {"2000", "4294967297", "99999999999"}) {
    CLI::App app("test");
    CrawlFlags flags;
    cli::AddCrawlFlags(&app, &flags);
    app.parse(std::vector<std::string>{threads, "--threads", "s", "--seeds"});
    Result<CrawlConfig> c = ResolveCrawlConfig(flags);
    ASSERT_FALSE(c.ok()) << threads;
    EXPECT_EQ(c.status().message(),
              std::string("crawl.threads: must be in [1, 1024], got ") + threads);
  }
}

TEST(CrawlOptionsTest, FlagsAndHelpComeFromTheTable) {
  CLI::App app("test");
  CrawlFlags flags;
  cli::AddCrawlFlags(&app, &flags);
  size_t with_flag = 0;
  for (const CrawlOptionSpec& spec : CrawlOptionSpecs()) {
    if (spec.flag.empty()) continue;
    ++with_flag;
    const std::string name(spec.flag.substr(0, spec.flag.find(',')));
    const CLI::Option* option = app.get_option_no_throw(name);
    ASSERT_NE(option, nullptr) << name;
    EXPECT_EQ(option->get_description(), spec.help) << name;
  }
  EXPECT_EQ(app.get_options().size(), with_flag + 2);  // and --help, --config
}

TEST(CanonicalizeRulesTest, OneTableForKeysFlagsAndTheOptInCheck) {
  CanonicalizeOptions options;
  EXPECT_FALSE(HasOptInRules(options));
  CLI::App app("test");
  std::vector<CLI::Option*> flags = cli::AddCanonicalizeRuleFlags(&app, &options);
  ASSERT_EQ(flags.size(), std::size(kCanonicalizeRules) + 1);  // and --keep-tracking-param
  EXPECT_EQ(flags.back()->get_name(), cli::kKeepTrackingParamFlag);
  for (size_t i = 0; i < std::size(kCanonicalizeRules); ++i) {
    const CanonicalizeRule& rule = kCanonicalizeRules[i];
    std::string flag = "--" + std::string(rule.name);
    for (char& c : flag) c = c == '_' ? '-' : c;
    EXPECT_EQ(rule.flag, flag);
    EXPECT_EQ(flags[i]->get_name(), flag);
    EXPECT_EQ(flags[i]->get_description(), rule.help);
    // Each rule is a [canonicalize] key of the crawl config, setting the same member.
    const CrawlOptionSpec* spec = Find("canonicalize." + std::string(rule.name));
    ASSERT_NE(spec, nullptr) << rule.name;
    EXPECT_EQ(spec->help, rule.help);
    CrawlConfig config;
    ASSERT_TRUE(StoreOption(*spec, true, &config).ok());
    EXPECT_TRUE(config.canonicalize.*rule.member) << rule.name;
    EXPECT_TRUE(HasOptInRules(config.canonicalize)) << rule.name;
    CanonicalizeOptions one;
    one.*rule.member = true;
    EXPECT_TRUE(HasOptInRules(one)) << rule.name;
  }
  app.parse(std::vector<std::string>{"--collapse-slashes", "--sort-query"});
  EXPECT_TRUE(options.sort_query);
  EXPECT_TRUE(options.collapse_slashes);
  EXPECT_FALSE(options.strip_www);
  EXPECT_TRUE(HasOptInRules(options));
}

// The one option of the rules that is not a switch: the tracking exceptions, a list of
// "HOST:NAME" in the config and a repeatable flag that needs --strip-tracking-params.
TEST(CanonicalizeRulesTest, TrackingExceptionsAreAKeyAndARepeatableFlag) {
  const CrawlOptionSpec* spec = Find("canonicalize.tracking_exceptions");
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(spec->type, OptionType::kStringList);
  CrawlConfig config;
  ASSERT_TRUE(
      StoreOption(*spec, std::vector<std::string>{"a.example:ref", "b.example:utm_id"}, &config)
          .ok());
  EXPECT_EQ(config.canonicalize.tracking_exceptions,
            (std::vector<std::string>{"a.example:ref", "b.example:utm_id"}));
  Status bad = StoreOption(*spec, std::vector<std::string>{"a.example:ref", "nocolon"}, &config);
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("HOST:NAME"), std::string::npos) << bad.message();

  CanonicalizeOptions options;
  CLI::App app("test");
  cli::AddCanonicalizeRuleFlags(&app, &options);
  app.parse(
      "--strip-tracking-params --keep-tracking-param a.example:ref "
      "--keep-tracking-param=b.example:x",
      /*program_name_included=*/false);
  EXPECT_TRUE(options.strip_tracking_params);
  EXPECT_EQ(options.tracking_exceptions,
            (std::vector<std::string>{"a.example:ref", "b.example:x"}));
  CanonicalizeOptions other;
  CLI::App checked("test");
  cli::AddCanonicalizeRuleFlags(&checked, &other);
  EXPECT_THROW(checked.parse("--strip-tracking-params --keep-tracking-param nocolon",
                             /*program_name_included=*/false),
               CLI::ValidationError);
  CanonicalizeOptions alone;
  CLI::App needs("test");
  cli::AddCanonicalizeRuleFlags(&needs, &alone);
  EXPECT_THROW(needs.parse("--keep-tracking-param a.example:ref", /*program_name_included=*/false),
               CLI::RequiresError);
}

}  // namespace
}  // namespace urlsieve
