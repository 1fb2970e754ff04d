// OutputChecksum: the running XXH3-64 of an output file's content (pages.jsonl, rejected.jsonl,
// crawl.warc.gz), kept up to date as bytes are appended, so a checkpoint can record how far each
// output had reached — its size and the checksum of those bytes (OutputMark) — without reading it.
//
// On --resume, VerifyOutputPrefix reads the first `size` bytes of a file once and checks them
// against the checkpoint; the VerifiedPrefix it returns lets AppendFile cut the file back to that
// size and continue the running checksum from there. Verification never modifies the file.
// Thread-safety: none (a value type; AppendFile's owner guards it).
#ifndef URLSIEVE_CRAWLER_OUTPUT_OUTPUT_CHECKSUM_H_
#define URLSIEVE_CRAWLER_OUTPUT_OUTPUT_CHECKSUM_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

struct XXH3_state_s;

namespace urlsieve {

class OutputChecksum {
 public:
  OutputChecksum();  // the checksum of no bytes
  ~OutputChecksum();
  OutputChecksum(const OutputChecksum& other);
  OutputChecksum& operator=(const OutputChecksum& other);

  void Update(std::string_view bytes);
  // XXH3-64 (seed 0) of every byte given to Update so far; does not end the stream.
  uint64_t Digest() const;

 private:
  XXH3_state_s* state_;
};

// How far an output had reached at a checkpoint.
struct OutputMark {
  uint64_t size = 0;
  // XXH3-64 of the first `size` bytes; absent in checkpoints written before urlsieve recorded it.
  std::optional<uint64_t> checksum;
};

// The beginning of an existing output that a resumed crawl keeps, with its running checksum.
struct VerifiedPrefix {
  uint64_t size = 0;
  OutputChecksum checksum;
};

// 16 lowercase hex digits, as checksums appear in messages.
std::string FormatChecksum(uint64_t checksum);

// Reads the first mark.size bytes of `path` and checks them against `mark`. A missing file is an
// empty one. Errors (Corruption, naming the file and both values): the file is shorter than
// mark.size (or missing while mark.size > 0), or its checksum differs from mark.checksum when
// that is set. IoError when it cannot be read. Never writes to the file.
Result<VerifiedPrefix> VerifyOutputPrefix(const std::string& path, const OutputMark& mark);
// The whole current content of `path` (empty when it does not exist), with its checksum.
Result<VerifiedPrefix> ReadOutputPrefix(const std::string& path);

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_OUTPUT_OUTPUT_CHECKSUM_H_
