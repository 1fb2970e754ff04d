// AppendFile: an output file that only grows, with buffered appends and checkpoint offsets.
//
// The crawl's outputs (pages.jsonl, crawl.warc.gz) must agree with its checkpointed state after a
// crash. Sync() makes everything appended so far durable and returns the file's mark: its size and
// the running checksum of its content (OutputChecksum, updated as bytes are written). The crawl
// stores the mark in its checkpoint and, on --resume, checks the file against it
// (VerifyOutputPrefix) and reopens it from the verified prefix, dropping whatever was written
// after the checkpoint (those pages are fetched again), including a torn last record.
// Thread-safety: none; the writers that own one guard it with their mutex.
#ifndef URLSIEVE_CRAWLER_OUTPUT_APPEND_FILE_H_
#define URLSIEVE_CRAWLER_OUTPUT_APPEND_FILE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "crawler/output/output_checksum.h"

namespace urlsieve {

class AppendFile {
 public:
  // Creates the file, or opens it for appending. With truncate_to, an existing file is cut to that
  // size first (an error if it is shorter: the output does not match the checkpoint). Reads what
  // it keeps once, to start the running checksum.
  static Result<std::unique_ptr<AppendFile>> Open(const std::string& path,
                                                  std::optional<uint64_t> truncate_to);
  // Cuts the file to a prefix already read and checked by VerifyOutputPrefix (Corruption if the
  // file is now shorter) and appends after it, continuing its checksum.
  static Result<std::unique_ptr<AppendFile>> Open(const std::string& path, VerifiedPrefix prefix);
  ~AppendFile();
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;

  // Buffers small appends; writes through once the buffer passes its threshold.
  Status Append(std::string_view data);
  // Writes the buffer to the kernel.
  Status Flush();
  // Flush() + fdatasync(); returns the durable size of the file and the checksum of its content.
  Result<OutputMark> Sync();
  // Size including buffered bytes.
  uint64_t size() const { return written_ + buffer_.size(); }
  const std::string& path() const { return path_; }

 private:
  AppendFile(std::string path, int fd, VerifiedPrefix prefix);
  Status WriteAll(std::string_view data);

  std::string path_;
  int fd_;
  uint64_t written_;         // bytes handed to the kernel
  OutputChecksum checksum_;  // of the first written_ bytes
  // written_ at the last successful Sync (none yet: the first one always syncs, also making
  // an open's truncation durable); a checkpoint that appended nothing costs no fdatasync.
  uint64_t synced_ = UINT64_MAX;
  std::string buffer_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_OUTPUT_APPEND_FILE_H_
