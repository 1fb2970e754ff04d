#include "crawler/config/crawl_config_file.h"

#include <toml++/toml.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <variant>

namespace urlsieve {
namespace {

bool NamesAFile(const CrawlOptionSpec& spec) {
  return (spec.section == "crawl" &&
          (spec.name == "seeds" || spec.name == "redis_password_file")) ||
         (spec.section == "fetch" && spec.name == "ca_file") ||
         (spec.section == "dust" && spec.name == "rules_file");
}

// What one run asks for itself, not what the crawl is: a repair, how this run reports (its
// metrics endpoint, progress line, log level).
bool OfThisRunOnly(const CrawlOptionSpec& spec) {
  if (spec.section == "crawl") return spec.name == "resume" || spec.name == "accept_loss";
  return spec.section == "output" && spec.name != "jsonl" && spec.name != "warc" &&
         spec.name != "warc_non_html";
}

const OptionValue* GivenValue(const CrawlFlags& flags, std::string_view section,
                              std::string_view name) {
  for (const auto& [spec, value] : flags.given) {
    if (spec->section == section && spec->name == name) return &value;
  }
  return nullptr;
}

}  // namespace

std::string SavedCrawlConfigText(const CrawlConfig& config) {
  toml::table root;
  for (const CrawlOptionSpec& spec : CrawlOptionSpecs()) {
    if (!spec.in_file || OfThisRunOnly(spec)) continue;
    if (!root.contains(spec.section)) root.insert(spec.section, toml::table{});
    toml::table& section = *root[spec.section].as_table();
    std::visit(
        [&](const auto& value) {
          using T = std::decay_t<decltype(value)>;
          if constexpr (std::is_same_v<T, std::vector<std::string>>) {
            toml::array list;
            for (const std::string& item : value) list.push_back(item);
            section.insert(spec.name, std::move(list));
          } else if constexpr (std::is_same_v<T, std::string>) {
            // A file's path is kept absolute: a continuation may run from another directory.
            section.insert(spec.name, NamesAFile(spec) && !value.empty()
                                          ? std::filesystem::absolute(value).string()
                                          : value);
          } else {
            section.insert(spec.name, value);
          }
        },
        spec.get(config));
  }
  std::ostringstream text;
  text << "# The options of the crawl in this directory (urlsieve crawl --out DIR --resume or\n"
          "# --recrawl reads them; flags given then override them). Written by urlsieve.\n"
       << root << "\n";
  return text.str();
}

Status SaveCrawlConfig(const CrawlConfig& config) {
  const std::filesystem::path path = std::filesystem::path(config.crawl.out_dir) / kSavedConfigName;
  const std::filesystem::path temporary = path.string() + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << SavedCrawlConfigText(config);
    out.flush();
    if (!out) return Status::IoError("writing the crawl's options to " + temporary.string());
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    return Status::IoError("renaming " + temporary.string() + " to " + path.string() + ": " +
                           error.message());
  }
  return Status::Ok();
}

std::optional<std::string> SavedConfigToContinue(const CrawlFlags& flags) {
  if (flags.config) return std::nullopt;
  const OptionValue* resume = GivenValue(flags, "crawl", "resume");
  const OptionValue* recrawl = GivenValue(flags, "crawl", "recrawl");
  const bool continues = (resume != nullptr && std::get<bool>(*resume)) ||
                         (recrawl != nullptr && std::get<bool>(*recrawl));
  const OptionValue* out = GivenValue(flags, "crawl", "out_dir");
  if (!continues || out == nullptr) return std::nullopt;
  const std::filesystem::path path =
      std::filesystem::path(std::get<std::string>(*out)) / kSavedConfigName;
  if (!std::filesystem::exists(path)) return std::nullopt;
  return path.string();
}

}  // namespace urlsieve
