#include "dedup/bloom/bloom_delta_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "base/file_io.h"
#include "dedup/bloom/counting_bloom_filter.h"
#include "dedup/bloom/scalable_bloom_filter.h"

namespace urlsieve {
namespace {

constexpr char kMagic[8] = {'U', 'R', 'L', 'S', 'V', 'B', 'D', 'L'};
constexpr uint32_t kVersion = 2;  // the newest this build reads; 1 for a plain filter's log
constexpr size_t kHeaderChecksumOffset = 56;
constexpr size_t kRecordHeaderBytes = 32;
constexpr size_t kKeyBytes = 16;
constexpr size_t kReplayChunkKeys = 4096;  // keys decoded and inserted per InsertIfNewBatch
// ReadAll's Corruption text when the log ends early (its size was checked: it shrank under us).
constexpr std::string_view kTruncated = "Bloom delta log truncated while reading";

uint64_t RecordBytes(size_t keys) { return BloomDeltaLog::kRecordOverheadBytes + kKeyBytes * keys; }

// "<base generation> <committed bytes>".
bool ParseMeta(std::string_view text, uint64_t* base, uint64_t* bytes) {
  const char* p = text.data();
  const char* end = text.data() + text.size();
  auto r = std::from_chars(p, end, *base);
  if (r.ec != std::errc() || r.ptr == end || *r.ptr != ' ') return false;
  r = std::from_chars(r.ptr + 1, end, *bytes);
  return r.ec == std::errc() && r.ptr == end;
}

using KeysFn = std::function<void(std::span<const KeyHash>)>;

// A record read and checked by ReadRecord: its keys are `added` adds, then `removed` removes.
struct DeltaRecord {
  uint64_t generation = 0;
  uint64_t added = 0;
  uint64_t removed = 0;
  const char* keys = nullptr;  // (added + removed) keys of kKeyBytes, in the read buffer
};

// The committed part of an open log file, as state.db records it.
struct CommittedLog {
  int fd;
  const std::string& path;
  uint64_t bytes;                 // committed bytes (≥ the header's)
  const StateIdentity& identity;  // the state's
};

// The stored kMetaKey value `committed`, checked against the snapshot it must extend.
Status ParseCommitted(std::string_view committed, const std::string& path,
                      const std::string& snapshot_path, uint64_t snapshot_generation,
                      uint64_t* base, uint64_t* bytes) {
  if (!ParseMeta(committed, base, bytes)) {
    return Status::Corruption("state.db: unreadable urlsieve_meta " +
                              std::string(BloomDeltaLog::kMetaKey) + " '" + std::string(committed) +
                              "' (the committed part of " + path + ")");
  }
  if (*base != snapshot_generation) {
    return Status::Corruption(
        snapshot_path + " is " +
        (snapshot_generation < *base ? "stale" : "not the one state.db expects") + " (generation " +
        std::to_string(snapshot_generation) +
        ", but state.db's Bloom state is the snapshot of generation " + std::to_string(*base) +
        " plus " + path + ")");
  }
  return Status::Ok();
}

// Whether the open() of log.path (log.fd, errno as open left it) gave a regular file holding at
// least the committed bytes.
Status CheckOpened(const CommittedLog& log) {
  if (log.fd < 0) {
    if (errno == ENOENT) {
      return Status::Corruption(log.path + " is missing, but state.db records " +
                                std::to_string(log.bytes) + " committed bytes of it");
    }
    return Status::IoError(ErrnoMessage("cannot open", log.path));
  }
  struct stat st;
  if (::fstat(log.fd, &st) != 0) return Status::IoError(ErrnoMessage("cannot stat", log.path));
  if (!S_ISREG(st.st_mode)) return Status::IoError(log.path + ": not a regular file");
  if (static_cast<uint64_t>(st.st_size) < log.bytes) {
    return Status::Corruption(log.path + " is truncated: " + std::to_string(st.st_size) +
                              " bytes, but state.db records " + std::to_string(log.bytes) +
                              " committed bytes");
  }
  return Status::Ok();
}

// Reads and checks the file header: magic, *version (≤ kVersion; > 1 only for a counting
// filter), checksum, the state's identity and the snapshot generation `base` it extends.
Status ReadHeader(const CommittedLog& log, bool counting, uint64_t base, uint32_t* version) {
  char header[BloomDeltaLog::kHeaderBytes];
  URLSIEVE_RETURN_IF_ERROR(
      ReadAll(log.fd, header, BloomDeltaLog::kHeaderBytes, 0, log.path, kTruncated));
  if (std::memcmp(header, kMagic, sizeof(kMagic)) != 0) {
    return Status::Corruption(log.path + ": not a urlsieve Bloom delta log (bad magic)");
  }
  *version = Get32(header + 8);
  if (*version > kVersion) {
    return Status::Unsupported(log.path + ": Bloom delta log format version " +
                               std::to_string(*version) + " is newer than this program's " +
                               std::to_string(kVersion));
  }
  if (*version > 1 && !counting) {
    return Status::Corruption(log.path + ": a counting filter's Bloom delta log (version " +
                              std::to_string(*version) + "), but the state's filter is plain");
  }
  if (*version == 0 || Get32(header + 12) != BloomDeltaLog::kHeaderBytes ||
      Get64(header + kHeaderChecksumOffset) != XXH3_64bits(header, kHeaderChecksumOffset)) {
    return Status::Corruption(log.path + ": Bloom delta log header is damaged (checksum mismatch)");
  }
  StateIdentity file_identity;
  std::memcpy(file_identity.bytes.data(), header + 16, file_identity.bytes.size());
  if (file_identity != log.identity) {
    return Status::Corruption(log.path + " belongs to state " + file_identity.ToHex() +
                              ", not to this state (" + log.identity.ToHex() + ")");
  }
  if (Get64(header + 32) != base) {
    return Status::Corruption(log.path + " extends the snapshot of generation " +
                              std::to_string(Get64(header + 32)) + ", but state.db says " +
                              std::to_string(base));
  }
  return Status::Ok();
}

// Reads the record at `offset` into *buffer and checks it: within the committed length, removals
// only where `may_remove`, its checksum, the state's identity and generation `expected`.
Status ReadRecord(const CommittedLog& log, uint64_t offset, bool may_remove, uint64_t expected,
                  std::vector<char>* buffer, DeltaRecord* record) {
  const std::string where = log.path + ": record at offset " + std::to_string(offset);
  if (log.bytes - offset < RecordBytes(0)) {
    return Status::Corruption(where + " is cut off before the committed length " +
                              std::to_string(log.bytes));
  }
  char head[kRecordHeaderBytes];
  URLSIEVE_RETURN_IF_ERROR(ReadAll(log.fd, head, kRecordHeaderBytes, offset, log.path, kTruncated));
  record->added = Get32(head + 24);
  record->removed = Get32(head + 28);
  const uint64_t count = record->added + record->removed;
  if (record->removed != 0 && !may_remove) {
    return Status::Corruption(where +
                              " removes keys, which only a counting filter's log "
                              "(version 2) may (damaged or foreign)");
  }
  if (count > (log.bytes - offset - RecordBytes(0)) / kKeyBytes) {
    return Status::Corruption(where + " (" + std::to_string(count) +
                              " keys) runs past the committed length " + std::to_string(log.bytes) +
                              " (torn or damaged)");
  }
  const size_t body = static_cast<size_t>(count * kKeyBytes + 8);
  buffer->resize(kRecordHeaderBytes + body);
  std::memcpy(buffer->data(), head, kRecordHeaderBytes);
  URLSIEVE_RETURN_IF_ERROR(ReadAll(log.fd, buffer->data() + kRecordHeaderBytes, body,
                                   offset + kRecordHeaderBytes, log.path, kTruncated));
  const size_t checked = kRecordHeaderBytes + count * kKeyBytes;
  if (Get64(buffer->data() + checked) != XXH3_64bits(buffer->data(), checked)) {
    return Status::Corruption(where + ": checksum mismatch (torn or damaged)");
  }
  record->generation = Get64(head);
  StateIdentity file_identity;
  std::memcpy(file_identity.bytes.data(), head + 8, file_identity.bytes.size());
  if (file_identity != log.identity) {
    return Status::Corruption(where + " belongs to state " + file_identity.ToHex() +
                              ", not to this state (" + log.identity.ToHex() + ")");
  }
  if (record->generation != expected) {
    return Status::Corruption(where + " is of generation " + std::to_string(record->generation) +
                              " where " + std::to_string(expected) +
                              " was expected (a gap or a foreign record)");
  }
  record->keys = buffer->data() + kRecordHeaderBytes;
  return Status::Ok();
}

// The adds, then the removes (see "Removals" in the header), in chunks of kReplayChunkKeys.
void ApplyRecord(const DeltaRecord& record, const KeysFn& add, const KeysFn& remove,
                 std::vector<KeyHash>* keys) {
  const uint64_t count = record.added + record.removed;
  for (uint64_t done = 0; done < count;) {
    const uint64_t end = done < record.added ? record.added : count;
    const size_t n = static_cast<size_t>(std::min<uint64_t>(end - done, kReplayChunkKeys));
    keys->resize(n);
    const char* p = record.keys + done * kKeyBytes;
    for (size_t i = 0; i < n; ++i) {
      (*keys)[i] = {Get64(p + i * kKeyBytes), Get64(p + i * kKeyBytes + 8)};
    }
    if (done < record.added) {
      add(*keys);
    } else {
      remove(*keys);
    }
    done += n;
  }
}

}  // namespace

BloomDeltaLog::BloomDeltaLog(std::string path, const StateIdentity& identity, bool counting)
    : path_(std::move(path)), identity_(identity), counting_(counting) {}

BloomDeltaLog::~BloomDeltaLog() {
  if (fd_ >= 0) ::close(fd_);
}

void BloomDeltaLog::SetThreshold(uint64_t filter_bytes) {
  max_log_bytes_ = std::max<uint64_t>(filter_bytes / kCompactionDivisor, kHeaderBytes);
}

std::unique_ptr<BloomDeltaLog> BloomDeltaLog::Detached(std::string path,
                                                       const StateIdentity& identity,
                                                       const ScalableBloomFilter& bloom) {
  std::unique_ptr<BloomDeltaLog> log(new BloomDeltaLog(std::move(path), identity, false));
  log->SetThreshold(bloom.bytes());
  return log;
}

std::unique_ptr<BloomDeltaLog> BloomDeltaLog::Detached(std::string path,
                                                       const StateIdentity& identity,
                                                       const CountingBloomFilter& bloom) {
  std::unique_ptr<BloomDeltaLog> log(new BloomDeltaLog(std::move(path), identity, true));
  log->SetThreshold(bloom.bytes());
  return log;
}

Result<std::unique_ptr<BloomDeltaLog>> BloomDeltaLog::OpenAndReplay(
    std::string path, const StateIdentity& identity, std::string_view committed,
    const std::string& snapshot_path, uint64_t snapshot_generation, ScalableBloomFilter* bloom) {
  std::unique_ptr<BloomDeltaLog> log(new BloomDeltaLog(std::move(path), identity, false));
  log->SetThreshold(bloom->bytes());
  std::unique_ptr<bool[]> is_new(new bool[kReplayChunkKeys]);
  ReplayTarget target;
  target.add = [&](std::span<const KeyHash> keys) { bloom->InsertIfNewBatch(keys, is_new.get()); };
  URLSIEVE_RETURN_IF_ERROR(log->Replay(committed, snapshot_path, snapshot_generation, target));
  return log;
}

Result<std::unique_ptr<BloomDeltaLog>> BloomDeltaLog::OpenAndReplay(
    std::string path, const StateIdentity& identity, std::string_view committed,
    const std::string& snapshot_path, uint64_t snapshot_generation, CountingBloomFilter* bloom) {
  std::unique_ptr<BloomDeltaLog> log(new BloomDeltaLog(std::move(path), identity, true));
  log->SetThreshold(bloom->bytes());
  std::unique_ptr<bool[]> removed(new bool[kReplayChunkKeys]);
  ReplayTarget target;
  target.add = [&](std::span<const KeyHash> keys) { bloom->AddBatch(keys); };
  target.remove = [&](std::span<const KeyHash> keys) { bloom->RemoveBatch(keys, removed.get()); };
  URLSIEVE_RETURN_IF_ERROR(log->Replay(committed, snapshot_path, snapshot_generation, target));
  return log;
}

Status BloomDeltaLog::Replay(std::string_view committed, const std::string& snapshot_path,
                             uint64_t snapshot_generation, const ReplayTarget& target) {
  base_generation_ = generation_ = snapshot_generation;
  attached_ = true;
  if (committed.empty()) return Status::Ok();  // a state written before delta logs existed
  uint64_t base = 0, bytes = 0;
  URLSIEVE_RETURN_IF_ERROR(
      ParseCommitted(committed, path_, snapshot_path, snapshot_generation, &base, &bytes));
  committed_bytes_ = bytes;
  if (bytes == 0) return Status::Ok();  // compacted: the snapshot alone is the filter
  if (bytes < kHeaderBytes) {
    return Status::Corruption("state.db: " + std::string(kMetaKey) + " '" + std::string(committed) +
                              "' is shorter than the header of " + path_);
  }

  ScopedFd fd(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
  const CommittedLog log{fd.get(), path_, bytes, identity_};
  URLSIEVE_RETURN_IF_ERROR(CheckOpened(log));
  uint32_t version = 0;
  URLSIEVE_RETURN_IF_ERROR(ReadHeader(log, counting_, base, &version));
  const bool may_remove = version >= 2 && target.remove;
  std::vector<char> buffer;
  std::vector<KeyHash> keys;
  for (uint64_t offset = kHeaderBytes; offset < bytes;) {
    DeltaRecord record;
    URLSIEVE_RETURN_IF_ERROR(
        ReadRecord(log, offset, may_remove, generation_ + 1, &buffer, &record));
    ApplyRecord(record, target.add, target.remove, &keys);
    generation_ = record.generation;
    offset += RecordBytes(record.added + record.removed);
  }
  return Status::Ok();
}

void BloomDeltaLog::Record(std::span<const KeyHash> keys, const bool* is_new) {
  if (!attached_) return;  // the next checkpoint writes a full snapshot anyway
  std::lock_guard<std::mutex> lock(mu_);
  if (overflowed_) return;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (is_new[i]) pending_.push_back(keys[i]);
  }
  if (RecordBytes(pending_.size() + pending_removed_.size()) > max_log_bytes_) {
    // This checkpoint will compact: stop holding keys the snapshot will carry.
    overflowed_ = true;
    std::vector<KeyHash>().swap(pending_);
    std::vector<KeyHash>().swap(pending_removed_);
  }
}

void BloomDeltaLog::Record(const KeyHash& key) {
  const bool is_new = true;
  Record({&key, 1}, &is_new);
}

void BloomDeltaLog::RecordRemoved(std::span<const KeyHash> keys, const bool* removed) {
  if (!attached_) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (overflowed_) return;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (removed[i]) pending_removed_.push_back(keys[i]);
  }
  if (RecordBytes(pending_.size() + pending_removed_.size()) > max_log_bytes_) {
    overflowed_ = true;
    std::vector<KeyHash>().swap(pending_);
    std::vector<KeyHash>().swap(pending_removed_);
  }
}

bool BloomDeltaLog::NeedsSnapshot(uint64_t generation) const {
  if (!attached_ || overflowed_ || generation != generation_ + 1) return true;
  const uint64_t start = committed_bytes_ == 0 ? kHeaderBytes : committed_bytes_;
  return start + RecordBytes(pending_keys()) > max_log_bytes_;
}

std::string BloomDeltaLog::MetaAfterAppend() const {
  const uint64_t start = committed_bytes_ == 0 ? kHeaderBytes : committed_bytes_;
  return std::to_string(base_generation_) + " " +
         std::to_string(start + RecordBytes(pending_keys()));
}

std::string BloomDeltaLog::MetaAfterSnapshot(uint64_t generation) {
  return std::to_string(generation) + " 0";
}

Status BloomDeltaLog::StartFile() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  // Nothing committed refers to the file (the log is empty in state.db), so truncating the
  // previous log in place is safe; a crash before the COMMIT leaves a log state.db ignores.
  ScopedFd fd(::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (fd.get() < 0) return Status::IoError(ErrnoMessage("cannot create", path_));
  char header[kHeaderBytes] = {};
  std::memcpy(header, kMagic, sizeof(kMagic));
  Put32(header + 8, counting_ ? 2 : 1);
  Put32(header + 12, kHeaderBytes);
  std::memcpy(header + 16, identity_.bytes.data(), identity_.bytes.size());
  Put64(header + 32, base_generation_);
  Put64(header + kHeaderChecksumOffset, XXH3_64bits(header, kHeaderChecksumOffset));
  URLSIEVE_RETURN_IF_ERROR(WriteAll(fd.get(), header, kHeaderBytes, 0, path_));
  // The file's directory entry must be durable before state.db refers to it.
  URLSIEVE_RETURN_IF_ERROR(SyncDirectoryOf(path_));
  fd_ = fd.release();
  return Status::Ok();
}

Status BloomDeltaLog::Append(uint64_t generation) {
  if (NeedsSnapshot(generation)) {
    return Status::FailedPrecondition(path_ + ": checkpoint " + std::to_string(generation) +
                                      " needs a full snapshot, not a delta record");
  }
  if (committed_bytes_ == 0) {
    URLSIEVE_RETURN_IF_ERROR(StartFile());
  } else if (fd_ < 0) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) return Status::IoError(ErrnoMessage("cannot open for appending", path_));
  }
  const uint64_t start = committed_bytes_ == 0 ? kHeaderBytes : committed_bytes_;
  std::vector<char> record(RecordBytes(pending_keys()));
  char* r = record.data();
  Put64(r, generation);
  std::memcpy(r + 8, identity_.bytes.data(), identity_.bytes.size());
  Put32(r + 24, static_cast<uint32_t>(pending_.size()));
  Put32(r + 28, static_cast<uint32_t>(pending_removed_.size()));
  size_t i = 0;
  for (const std::vector<KeyHash>* keys : {&pending_, &pending_removed_}) {
    for (const KeyHash& key : *keys) {
      Put64(r + kRecordHeaderBytes + i * kKeyBytes, key.low);
      Put64(r + kRecordHeaderBytes + i * kKeyBytes + 8, key.high);
      ++i;
    }
  }
  const size_t checked = record.size() - 8;
  Put64(r + checked, XXH3_64bits(r, checked));
  // Written over whatever a checkpoint that never committed left past the committed bytes.
  URLSIEVE_RETURN_IF_ERROR(WriteAll(fd_, r, record.size(), start, path_));
  const uint64_t end = start + record.size();
  struct stat st;
  if (::fstat(fd_, &st) == 0 && static_cast<uint64_t>(st.st_size) > end &&
      ::ftruncate(fd_, static_cast<off_t>(end)) != 0) {
    return Status::IoError(ErrnoMessage("cannot truncate", path_));
  }
  if (::fdatasync(fd_) != 0) return Status::IoError(ErrnoMessage("cannot fdatasync", path_));
  appended_bytes_ = end;
  appended_generation_ = generation;
  return Status::Ok();
}

void BloomDeltaLog::AppendCommitted() {
  committed_bytes_ = appended_bytes_;
  generation_ = appended_generation_;
  pending_.clear();
  pending_removed_.clear();
}

void BloomDeltaLog::SnapshotCommitted(uint64_t generation, const ScalableBloomFilter& bloom) {
  SnapshotCommitted(generation, bloom.bytes());
}

void BloomDeltaLog::SnapshotCommitted(uint64_t generation, uint64_t filter_bytes) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;  // the next Append starts a new file
  attached_ = true;
  overflowed_ = false;
  base_generation_ = generation_ = generation;
  committed_bytes_ = 0;
  std::vector<KeyHash>().swap(pending_);
  std::vector<KeyHash>().swap(pending_removed_);
  SetThreshold(filter_bytes);
}

}  // namespace urlsieve
