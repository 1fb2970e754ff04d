// The options of `urlsieve crawl`, declared once (docs/usage/crawl.md, "Options").
//
// Each CrawlOptionSpec says, for one option: its TOML key ([section] name, which is also the
// CrawlConfig member it sets: config.section.name), its command-line flag and help, and the rule
// its value must meet (an integer range, an interval, a list of names). The default is the
// member's initializer in CrawlConfig. Everything else walks this table: the TOML reader and
// CrawlConfig::Validate (crawl_config.cc), the flags and their --help (crawler/cli/option_flags.cc)
// and the test that holds configs/default.toml to it (tests/crawler/crawl_options_test.cc).
// Adding an option: a member in CrawlConfig, one entry in the table (crawl_options.cc), its
// documented line in configs/default.toml.
//
// Thread-safety: the table is built once, on first use (a function-local static), and is
// immutable afterwards; share it freely.
#ifndef URLSIEVE_CRAWLER_CONFIG_CRAWL_OPTIONS_H_
#define URLSIEVE_CRAWLER_CONFIG_CRAWL_OPTIONS_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/status.h"

namespace urlsieve {

struct CrawlConfig;

enum class OptionType : uint8_t {
  kBool,     // a flag without a value; it sets CrawlOptionSpec::flag_sets
  kInteger,  // in [min, max], or 0 when zero_is_off
  kNumber,   // a TOML integer or float in the open interval (above, below)
  kString,
  kStringList,  // a repeatable flag, appended to the file's list
  kChoice,      // one of `choices`, by name
  kDuration,    // a time span spelled as base/duration.h reads it ("7d"), in [min, max] seconds
};

// One option's value: bool (kBool), int64_t (kInteger), double (kNumber), std::string (kString,
// kChoice: the name, kDuration: the spelling), std::vector<std::string> (kStringList).
using OptionValue = std::variant<bool, int64_t, double, std::string, std::vector<std::string>>;

struct CrawlOptionSpec {
  std::string_view section;  // "crawl": the TOML table and the CrawlConfig member
  std::string_view name;     // "threads": the TOML key and the member of that section
  std::string_view flag;     // CLI11 names, "-t,--threads"; "" = a config-file key only
  std::string_view help;     // the flag's --help text (also what a file-only key is for)
  OptionType type = OptionType::kBool;
  bool in_file = true;    // false: a flag only, with no TOML key (crawl.rebuild_bloom)
  bool flag_sets = true;  // kBool: what the flag sets (--ignore-robots sets false)
  int64_t min = 0;        // kInteger; kDuration, in seconds
  int64_t max = 0;
  bool zero_is_off = false;  // kInteger, kNumber: 0 (off) is allowed too, below the range
  double above = 0;          // kNumber: the open interval (above, below)
  double below = 0;
  std::span<const std::string_view> choices;  // kChoice
  // kString: the error when the crawl's final value is empty ("" = may be empty). Checked on
  // the final config only: a flag may fill what the file left empty.
  std::string_view if_empty;
  // kString, kStringList (each item): a further rule on the value ("" when met, else why not),
  // e.g. that it is an encoding label; nullptr = none.
  std::string (*check)(std::string_view value) = nullptr;
  OptionValue (*get)(const CrawlConfig&) = nullptr;
  // Stores a value of the spec's type; fails for a kChoice name that is none of the choices.
  Status (*set)(CrawlConfig*, const OptionValue&) = nullptr;

  std::string key() const;  // "crawl.threads", as error messages name it
};

// Every option, in the order `urlsieve crawl --help` lists the flags; file-only keys follow.
std::span<const CrawlOptionSpec> CrawlOptionSpecs();

// The rule `spec` sets on a value (range, interval, choice): "" when `value` meets it, else why
// not, e.g. "must be in [1, 1024], got 0". The one check of a value, wherever it came from.
std::string CheckOptionValue(const CrawlOptionSpec& spec, const OptionValue& value);

// Stores `value` into *config if it meets the spec's rule; else an error saying why (without the
// key: the caller knows where the value came from). How the TOML reader and the flags set an
// option.
Status StoreOption(const CrawlOptionSpec& spec, const OptionValue& value, CrawlConfig* config);

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CONFIG_CRAWL_OPTIONS_H_
