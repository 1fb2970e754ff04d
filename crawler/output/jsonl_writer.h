// JsonlWriter: an append-only JSON-lines output — one JSON object per line — that the crawl syncs
// and marks at each checkpoint. The crawl writes two: pages.jsonl (a PageRecord per fetch) and
// rejected.jsonl (a Rejection per URL that the seen stage accepted as new but the frontier then
// rejected, so that no new URL ever disappears without a trace: invariant 2, docs/architecture.md,
// "Invariants").
//
// Objects are serialized outside the lock and appended under one mutex, so lines never
// interleave. Appends are buffered; the crawl calls Sync() at each checkpoint and stores the
// returned mark (size and checksum). What a resumed crawl may duplicate: nothing, when it reopens
// the file from that mark (truncate_to, or the VerifiedPrefix checked against it): lines written
// after the checkpoint are cut, and their pages are fetched again and written again. Without
// truncation, pages fetched after the last checkpoint appear twice.
// Invalid UTF-8 in strings (URLs from hostile pages) is replaced by U+FFFD so each line stays JSON.
// Thread-safety: all methods are safe to call concurrently.
#ifndef URLSIEVE_CRAWLER_OUTPUT_JSONL_WRITER_H_
#define URLSIEVE_CRAWLER_OUTPUT_JSONL_WRITER_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/status.h"
#include "crawler/output/append_file.h"
#include "crawler/output/page_record.h"

namespace urlsieve {

struct Rejection;

// One line of rejected.jsonl: {"url", "depth", "reason"}, the reason as RejectReasonName.
nlohmann::json ToJson(const Rejection& rejection);

class JsonlWriter {
 public:
  static Result<std::unique_ptr<JsonlWriter>> Open(const std::string& path,
                                                   std::optional<uint64_t> truncate_to = {});
  // Continues after a prefix checked against the checkpoint (see AppendFile).
  static Result<std::unique_ptr<JsonlWriter>> Open(const std::string& path, VerifiedPrefix prefix);

  // The two kinds of line the crawl writes: pages.jsonl, rejected.jsonl.
  Status Append(const PageRecord& record);
  Status Append(const Rejection& rejection);
  // Appends `object` as one line.
  Status AppendJson(const nlohmann::json& object);
  // Makes every appended line durable; returns the mark to store in the checkpoint.
  Result<OutputMark> Sync();

 private:
  explicit JsonlWriter(std::unique_ptr<AppendFile> file) : file_(std::move(file)) {}

  std::mutex mu_;
  std::unique_ptr<AppendFile> file_;  // guarded by mu_
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_OUTPUT_JSONL_WRITER_H_
