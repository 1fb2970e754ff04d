#include "dedup/content/local_content_seen_set.h"

#include <algorithm>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/sqlite_db.h"
#include "dedup/content/exact_content_index.h"
#include "dedup/content/near_duplicate_index.h"

namespace urlsieve {
namespace {

constexpr size_t kMaxIdBytes = 4096;
constexpr size_t kMaxDataBytes = 4096;

// docs/formats/state-directory.md, "content_seen".
constexpr std::string_view kCreateTable =
    "CREATE TABLE IF NOT EXISTS content_seen(value INTEGER PRIMARY KEY, digest INTEGER NOT NULL, "
    "simhash INTEGER, id TEXT, data BLOB)";

Status ValidateId(std::string_view id) {
  if (id.empty() || id.size() > kMaxIdBytes) {
    return Status::InvalidArgument("content-seen set: a page's id must be 1 .. 4096 bytes, not " +
                                   std::to_string(id.size()));
  }
  if (id.find('\0') != std::string_view::npos) {
    return Status::InvalidArgument("content-seen set: a page's id must not contain NUL");
  }
  return Status::Ok();
}

Status ValidateCopy(const ContentCopy& page) {
  URLSIEVE_RETURN_IF_ERROR(ValidateId(page.id));
  if (page.data.size() > kMaxDataBytes) {
    return Status::InvalidArgument(
        "content-seen set: a page's data must be at most 4096 bytes, not " +
        std::to_string(page.data.size()));
  }
  return Status::Ok();
}

// What is stored for one value: the row of content_seen.
struct StoredCopy {
  uint64_t digest = 0;
  std::optional<uint64_t> simhash;  // stored in the near index under the same value
  ContentCopy copy;
};

uint64_t CopyBytes(const StoredCopy& stored) {
  // The hash map's node (key, value, next pointer, cached hash) and the strings' heap.
  return sizeof(StoredCopy) + 3 * sizeof(void*) +
         (stored.copy.id.size() > 15 ? stored.copy.id.capacity() : 0) +
         (stored.copy.data.size() > 15 ? stored.copy.data.capacity() : 0);
}

}  // namespace

struct LocalContentSeenSet::Impl {
  SqliteDb* db = nullptr;
  ContentSeenOptions options;

  mutable std::mutex mu;
  ExactContentIndex exact;
  std::optional<NearDuplicateIndex> near;  // when options.near
  uint64_t next_value = 1;
  // With a database: the copies stored since the last Checkpoint; without: every copy.
  std::unordered_map<uint64_t, StoredCopy> copies;
  uint64_t copy_bytes = 0;
  std::vector<uint64_t> forgotten;  // values whose rows the next Checkpoint deletes
  SqliteStatement select;           // a row by value (with a database)

  Status TableError(std::string_view what) const {
    return Status::Corruption(db->path() + ": the table content_seen " + std::string(what) +
                              " (docs/formats/state-directory.md, \"content_seen\")");
  }

  Result<StoredCopy> Load(uint64_t value) {
    auto it = copies.find(value);
    if (it != copies.end()) return it->second;
    if (db == nullptr) {
      return Status::Corruption("content-seen set: no copy for value " + std::to_string(value));
    }
    select.Reset();
    URLSIEVE_RETURN_IF_ERROR(select.BindInt64(1, static_cast<int64_t>(value)));
    Result<bool> row = select.Step();
    if (!row.ok()) return row.status();
    if (!*row) {
      return TableError("has no row " + std::to_string(value) + ", which the index holds");
    }
    StoredCopy stored;
    stored.digest = static_cast<uint64_t>(select.ColumnInt64(0));
    if (!select.ColumnIsNull(1)) stored.simhash = static_cast<uint64_t>(select.ColumnInt64(1));
    stored.copy.id = std::string(select.ColumnText(2));
    stored.copy.data = std::string(select.ColumnBlob(3));
    select.Reset();
    return stored;
  }

  Result<uint64_t> Store(uint64_t digest, std::optional<uint64_t> simhash,
                         const ContentCopy& page) {
    if (next_value > ExactContentIndex::kMaxValue) {
      return Status::FailedPrecondition("content-seen set: 2^48 - 1 pages stored, no more");
    }
    const uint64_t value = next_value++;
    exact.FindOrInsert(digest, value);
    if (simhash) near->Insert(*simhash, value);
    StoredCopy& stored = copies[value];
    stored = StoredCopy{digest, simhash, page};
    copy_bytes += CopyBytes(stored);
    return value;
  }

  Status Scan() {
    // typeof() checks each row's columns: a table of the right shape holding garbage (text where a
    // digest belongs) is Corruption here, not wrong verdicts later.
    Result<SqliteStatement> scan = db->Prepare(
        "SELECT value, digest, simhash, typeof(digest) = 'integer' AND typeof(simhash) IN "
        "('integer', 'null') AND typeof(id) = 'text' AND typeof(data) IN ('blob', 'null') "
        "FROM content_seen");
    if (!scan.ok()) return TableError("cannot be read: " + scan.status().message());
    for (;;) {
      Result<bool> row = scan->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      const int64_t value = scan->ColumnInt64(0);
      if (scan->ColumnInt64(3) == 0) {
        return TableError("has a row (value " + std::to_string(value) +
                          ") whose columns have the wrong types");
      }
      if (value < 1 || static_cast<uint64_t>(value) > ExactContentIndex::kMaxValue) {
        return TableError("has a row whose value " + std::to_string(value) +
                          " is out of range (1 .. 2^48 - 1)");
      }
      const uint64_t digest = static_cast<uint64_t>(scan->ColumnInt64(1));
      if (exact.FindOrInsert(digest, static_cast<uint64_t>(value))) {
        return TableError("holds a digest twice (value " + std::to_string(value) + ")");
      }
      if (near && !scan->ColumnIsNull(2)) {
        near->Insert(static_cast<uint64_t>(scan->ColumnInt64(2)), static_cast<uint64_t>(value));
      }
      next_value = std::max(next_value, static_cast<uint64_t>(value) + 1);
    }
    return Status::Ok();
  }
};

LocalContentSeenSet::LocalContentSeenSet(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LocalContentSeenSet::~LocalContentSeenSet() = default;

Result<std::unique_ptr<LocalContentSeenSet>> LocalContentSeenSet::Open(
    SqliteDb* db, const ContentSeenOptions& options) {
  if (options.max_distance < 0 || options.max_distance > 7) {
    return Status::InvalidArgument("content-seen set: max_distance must be 0 .. 7, not " +
                                   std::to_string(options.max_distance));
  }
  auto impl = std::make_unique<Impl>();
  impl->db = db;
  impl->options = options;
  if (options.near) impl->near.emplace(options.max_distance);
  if (db != nullptr) {
    URLSIEVE_RETURN_IF_ERROR(db->Exec(kCreateTable, "creating the table content_seen"));
    URLSIEVE_RETURN_IF_ERROR(impl->Scan());
    Result<SqliteStatement> select =
        db->Prepare("SELECT digest, simhash, id, data FROM content_seen WHERE value = ?");
    if (!select.ok()) return impl->TableError("cannot be read: " + select.status().message());
    impl->select = std::move(*select);
  }
  return std::unique_ptr<LocalContentSeenSet>(new LocalContentSeenSet(std::move(impl)));
}

Result<ContentVerdict> LocalContentSeenSet::Test(const ContentFingerprint& fingerprint,
                                                 const ContentCopy& page) {
  URLSIEVE_RETURN_IF_ERROR(ValidateCopy(page));
  Impl& s = *impl_;
  std::lock_guard lock(s.mu);
  ContentVerdict verdict;
  if (std::optional<uint64_t> value = s.exact.Find(fingerprint.digest)) {
    Result<StoredCopy> stored = s.Load(*value);
    if (!stored.ok()) return stored.status();
    if (stored->copy.id == page.id) {
      verdict.refetch = true;
      return verdict;
    }
    verdict.kind = ContentVerdict::Kind::kExact;
    verdict.first = std::move(stored->copy);
    return verdict;
  }
  const std::optional<uint64_t> simhash = s.near ? fingerprint.simhash : std::nullopt;
  if (simhash) {
    if (std::optional<NearMatch> match = s.near->Find(*simhash)) {
      Result<StoredCopy> stored = s.Load(match->value);
      if (!stored.ok()) return stored.status();
      if (stored->copy.id == page.id) {
        verdict.refetch = true;  // the same page, changed a little since: nothing changes
        return verdict;
      }
      // Later exact copies of this payload are copies of this page; its simhash is not stored
      // (the near index keeps the first of each neighbourhood).
      Result<uint64_t> stored_value = s.Store(fingerprint.digest, std::nullopt, page);
      if (!stored_value.ok()) return stored_value.status();
      verdict.kind = ContentVerdict::Kind::kNear;
      verdict.first = std::move(stored->copy);
      verdict.distance = match->distance;
      return verdict;
    }
  }
  Result<uint64_t> stored_value = s.Store(fingerprint.digest, simhash, page);
  if (!stored_value.ok()) return stored_value.status();
  return verdict;
}

Result<bool> LocalContentSeenSet::Forget(const ContentFingerprint& fingerprint,
                                         std::string_view id) {
  URLSIEVE_RETURN_IF_ERROR(ValidateId(id));
  Impl& s = *impl_;
  std::lock_guard lock(s.mu);
  std::optional<uint64_t> value = s.exact.Find(fingerprint.digest);
  if (!value) return false;
  Result<StoredCopy> stored = s.Load(*value);
  if (!stored.ok()) return stored.status();
  if (stored->copy.id != id) return false;
  s.exact.Erase(fingerprint.digest);
  if (s.near && stored->simhash) s.near->Erase(*stored->simhash, *value);
  auto it = s.copies.find(*value);
  if (it != s.copies.end()) {
    s.copy_bytes -= CopyBytes(it->second);
    s.copies.erase(it);  // never written (or, without a database, nowhere else)
  } else {
    s.forgotten.push_back(*value);
  }
  return true;
}

int LocalContentSeenSet::max_distance() const { return impl_->options.max_distance; }

uint64_t LocalContentSeenSet::size() const {
  std::lock_guard lock(impl_->mu);
  return impl_->exact.size();
}

Status LocalContentSeenSet::Checkpoint(SqliteDb& db) {
  Impl& s = *impl_;
  if (s.db != &db) {
    return Status::InvalidArgument(
        "content-seen set: Checkpoint takes the database the set was opened with");
  }
  std::lock_guard lock(s.mu);
  // INSERT OR REPLACE: a checkpoint whose transaction the caller rolled back leaves the copies in
  // memory, and the next one writes them again.
  Result<SqliteStatement> insert = db.Prepare(
      "INSERT OR REPLACE INTO content_seen(value, digest, simhash, id, data) VALUES (?, ?, ?, ?, "
      "?)");
  if (!insert.ok()) return insert.status();
  std::vector<uint64_t> values;
  values.reserve(s.copies.size());
  for (const auto& [value, stored] : s.copies) values.push_back(value);
  std::sort(values.begin(), values.end());
  for (uint64_t value : values) {
    const StoredCopy& stored = s.copies.at(value);
    URLSIEVE_RETURN_IF_ERROR(insert->BindInt64(1, static_cast<int64_t>(value)));
    URLSIEVE_RETURN_IF_ERROR(insert->BindInt64(2, static_cast<int64_t>(stored.digest)));
    URLSIEVE_RETURN_IF_ERROR(stored.simhash
                                 ? insert->BindInt64(3, static_cast<int64_t>(*stored.simhash))
                                 : insert->BindNull(3));
    URLSIEVE_RETURN_IF_ERROR(insert->BindText(4, stored.copy.id, /*static_until_reset=*/true));
    URLSIEVE_RETURN_IF_ERROR(insert->BindBlob(5, stored.copy.data.data(), stored.copy.data.size(),
                                              /*static_until_reset=*/true));
    URLSIEVE_RETURN_IF_ERROR(insert->Run());
    insert->Reset();
  }
  if (!s.forgotten.empty()) {
    Result<SqliteStatement> erase = db.Prepare("DELETE FROM content_seen WHERE value = ?");
    if (!erase.ok()) return erase.status();
    for (uint64_t value : s.forgotten) {
      URLSIEVE_RETURN_IF_ERROR(erase->BindInt64(1, static_cast<int64_t>(value)));
      URLSIEVE_RETURN_IF_ERROR(erase->Run());
      erase->Reset();
    }
  }
  s.copies.clear();
  s.copy_bytes = 0;
  s.forgotten.clear();
  return Status::Ok();
}

uint64_t LocalContentSeenSet::memory_bytes() const {
  const Impl& s = *impl_;
  std::lock_guard lock(s.mu);
  return s.exact.memory_bytes() + (s.near ? s.near->memory_bytes() : 0) + s.copy_bytes +
         s.copies.bucket_count() * sizeof(void*) + s.forgotten.capacity() * sizeof(uint64_t);
}

}  // namespace urlsieve
