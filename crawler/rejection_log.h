// RejectionLog: rejected.jsonl — one JSON object per URL that the seen stage accepted as new but
// the frontier then rejected ({"url", "depth", "reason"}), so that no new URL ever disappears
// without a trace (DESIGN invariant 2). Synced and truncated with the checkpoint, like pages.jsonl.
// Thread-safety: all methods are safe to call concurrently (one mutex).
#ifndef URLSIEVE_CRAWLER_REJECTION_LOG_H_
#define URLSIEVE_CRAWLER_REJECTION_LOG_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "crawler/append_file.h"

namespace urlsieve {

class RejectionLog {
 public:
  static Result<std::unique_ptr<RejectionLog>> Open(const std::string& path,
                                                    std::optional<uint64_t> truncate_to);
  // Continues after a prefix checked against the checkpoint (see AppendFile).
  static Result<std::unique_ptr<RejectionLog>> Open(const std::string& path, VerifiedPrefix prefix);
  Status Append(std::string_view url, uint32_t depth, std::string_view reason);
  // Makes every appended line durable; returns the mark to store in the checkpoint.
  Result<OutputMark> Sync();

 private:
  explicit RejectionLog(std::unique_ptr<AppendFile> file) : file_(std::move(file)) {}

  std::mutex mu_;
  std::unique_ptr<AppendFile> file_;  // guarded by mu_
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_REJECTION_LOG_H_
