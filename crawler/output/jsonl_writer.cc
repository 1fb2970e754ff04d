#include "crawler/output/jsonl_writer.h"

#include "frontier/frontier.h"

namespace urlsieve {

nlohmann::json ToJson(const Rejection& rejection) {
  nlohmann::json line = {{"url", rejection.url},
                         {"depth", rejection.depth},
                         {"reason", RejectReasonName(rejection.reason)}};
  if (rejection.sitemap) line["kind"] = "sitemap";  // "depth" is then its nesting level
  if (!rejection.rule.empty()) line["rule"] = rejection.rule;
  return line;
}

Result<std::unique_ptr<JsonlWriter>> JsonlWriter::Open(const std::string& path,
                                                       std::optional<uint64_t> truncate_to) {
  Result<std::unique_ptr<AppendFile>> file = AppendFile::Open(path, truncate_to);
  if (!file.ok()) return file.status();
  return std::unique_ptr<JsonlWriter>(new JsonlWriter(std::move(*file)));
}

Result<std::unique_ptr<JsonlWriter>> JsonlWriter::Open(const std::string& path,
                                                       VerifiedPrefix prefix) {
  Result<std::unique_ptr<AppendFile>> file = AppendFile::Open(path, std::move(prefix));
  if (!file.ok()) return file.status();
  return std::unique_ptr<JsonlWriter>(new JsonlWriter(std::move(*file)));
}

Status JsonlWriter::Append(const PageRecord& record) { return AppendJson(ToJson(record)); }

Status JsonlWriter::Append(const Rejection& rejection) { return AppendJson(ToJson(rejection)); }

Status JsonlWriter::AppendJson(const nlohmann::json& object) {
  std::string line = object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  line.push_back('\n');
  std::lock_guard<std::mutex> lock(mu_);
  return file_->Append(line);
}

Result<OutputMark> JsonlWriter::Sync() {
  std::lock_guard<std::mutex> lock(mu_);
  return file_->Sync();
}

}  // namespace urlsieve
