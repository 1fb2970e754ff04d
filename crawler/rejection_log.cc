#include "crawler/rejection_log.h"

#include <nlohmann/json.hpp>

namespace urlsieve {

Result<std::unique_ptr<RejectionLog>> RejectionLog::Open(const std::string& path,
                                                         std::optional<uint64_t> truncate_to) {
  Result<std::unique_ptr<AppendFile>> file = AppendFile::Open(path, truncate_to);
  if (!file.ok()) return file.status();
  return std::unique_ptr<RejectionLog>(new RejectionLog(std::move(*file)));
}

Result<std::unique_ptr<RejectionLog>> RejectionLog::Open(const std::string& path,
                                                         VerifiedPrefix prefix) {
  Result<std::unique_ptr<AppendFile>> file = AppendFile::Open(path, std::move(prefix));
  if (!file.ok()) return file.status();
  return std::unique_ptr<RejectionLog>(new RejectionLog(std::move(*file)));
}

Status RejectionLog::Append(std::string_view url, uint32_t depth, std::string_view reason) {
  nlohmann::json line = {{"url", url}, {"depth", depth}, {"reason", reason}};
  std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::lock_guard<std::mutex> lock(mu_);
  return file_->Append(text);
}

Result<OutputMark> RejectionLog::Sync() {
  std::lock_guard<std::mutex> lock(mu_);
  return file_->Sync();
}

}  // namespace urlsieve
