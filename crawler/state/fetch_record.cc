#include "crawler/state/fetch_record.h"

#include <utility>

#include "crawler/sitemap/sitemap_store.h"

namespace urlsieve {
namespace {

// docs/features/recrawl.md, "Re-crawl": one row per URL fetched (fetch form). Times are unix
// seconds.
constexpr std::string_view kCreateTable =
    "CREATE TABLE IF NOT EXISTS crawl_fetch_records("
    "url TEXT PRIMARY KEY NOT NULL, status INTEGER NOT NULL, etag TEXT NOT NULL, "
    "last_modified TEXT NOT NULL, payload_digest TEXT NOT NULL, fetch_time INTEGER NOT NULL, "
    "interval_s INTEGER NOT NULL, depth INTEGER NOT NULL, parent TEXT NOT NULL, "
    "warc_record_id TEXT NOT NULL, warc_target_uri TEXT NOT NULL, warc_date TEXT NOT NULL, "
    "warc_payload_digest TEXT NOT NULL, queued INTEGER NOT NULL) WITHOUT ROWID";

constexpr std::string_view kColumns =
    "url, status, etag, last_modified, payload_digest, fetch_time, interval_s, depth, parent, "
    "warc_record_id, warc_target_uri, warc_date, warc_payload_digest, queued";

FetchRecord ReadRow(const SqliteStatement& row) {
  FetchRecord r;
  r.url = row.ColumnText(0);
  r.status = static_cast<int>(row.ColumnInt64(1));
  r.etag = row.ColumnText(2);
  r.last_modified = row.ColumnText(3);
  r.payload_digest = row.ColumnText(4);
  r.fetch_time = row.ColumnInt64(5);
  r.interval_s = row.ColumnInt64(6);
  r.depth = static_cast<uint32_t>(row.ColumnInt64(7));
  r.parent = row.ColumnText(8);
  r.warc.record_id = row.ColumnText(9);
  r.warc.target_uri = row.ColumnText(10);
  r.warc.date = row.ColumnText(11);
  r.warc.payload_digest = row.ColumnText(12);
  r.queued = row.ColumnInt64(13) != 0;
  return r;
}

Result<std::vector<FetchRecord>> Select(SqliteDb& db, const std::string& where,
                                        const std::vector<int64_t>& args) {
  URLSIEVE_RETURN_IF_ERROR(FetchRecordStore::CreateTable(db));
  std::string sql = "SELECT ";
  sql += kColumns;
  sql += " FROM crawl_fetch_records ";
  sql += where;
  Result<SqliteStatement> select = db.Prepare(sql);
  if (!select.ok()) return select.status();
  for (size_t i = 0; i < args.size(); ++i) {
    URLSIEVE_RETURN_IF_ERROR(select->BindInt64(static_cast<int>(i + 1), args[i]));
  }
  std::vector<FetchRecord> records;
  for (;;) {
    Result<bool> row = select->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    records.push_back(ReadRow(*select));
  }
  return records;
}

}  // namespace

Status FetchRecordStore::CreateTable(SqliteDb& db) {
  return db.Exec(kCreateTable, "creating the fetch records table");
}

Status FetchRecordStore::LoadQueued(SqliteDb& db) {
  Result<std::vector<FetchRecord>> records = Select(db, "WHERE queued != 0", {});
  if (!records.ok()) return records.status();
  std::lock_guard<std::mutex> lock(mu_);
  for (FetchRecord& r : *records) {
    std::string url = r.url;
    queued_.insert_or_assign(std::move(url), std::move(r));
  }
  return Status::Ok();
}

Result<std::vector<FetchRecord>> FetchRecordStore::TakeDue(SqliteDb& db, int64_t now,
                                                           int64_t revisit_after_s) {
  // docs/features/sitemaps.md, "Sitemaps": a URL a sitemap says was modified after its last fetch
  // is due too, whatever its interval.
  URLSIEVE_RETURN_IF_ERROR(SitemapStore::CreateTables(db));
  Result<std::vector<FetchRecord>> records = Select(
      db,
      "WHERE queued = 0 AND (?2 = 0 OR fetch_time + "
      "(CASE WHEN interval_s > 0 THEN interval_s ELSE ?2 END) <= ?1 OR EXISTS (SELECT 1 FROM "
      "crawl_sitemap_lastmod l WHERE l.url = crawl_fetch_records.url AND "
      "l.lastmod > crawl_fetch_records.fetch_time)) ORDER BY fetch_time, url",
      {now, revisit_after_s});
  if (!records.ok()) return records.status();
  std::vector<FetchRecord> taken;
  std::lock_guard<std::mutex> lock(mu_);
  for (FetchRecord& r : *records) {
    // Already queued in memory (taken earlier in this run): not taken twice.
    if (queued_.contains(r.url)) continue;
    r.queued = true;
    queued_.insert_or_assign(r.url, r);
    dirty_.insert_or_assign(r.url, r);
    taken.push_back(std::move(r));
  }
  return taken;
}

void FetchRecordStore::Hold(FetchRecord record) {
  record.queued = true;
  std::lock_guard<std::mutex> lock(mu_);
  std::string url = record.url;
  queued_.insert_or_assign(std::move(url), std::move(record));
}

std::optional<FetchRecord> FetchRecordStore::Find(const std::string& url) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = queued_.find(url);
  if (it == queued_.end()) return std::nullopt;
  return it->second;
}

void FetchRecordStore::Put(FetchRecord record) {
  record.queued = false;
  std::lock_guard<std::mutex> lock(mu_);
  queued_.erase(record.url);
  std::string url = record.url;
  dirty_.insert_or_assign(std::move(url), std::move(record));
}

void FetchRecordStore::Unqueue(const std::string& url) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = queued_.find(url);
  if (it == queued_.end()) return;
  FetchRecord record = std::move(it->second);
  queued_.erase(it);
  record.queued = false;
  dirty_.insert_or_assign(url, std::move(record));
}

size_t FetchRecordStore::queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queued_.size();
}

Status FetchRecordStore::Checkpoint(SqliteDb& db) {
  std::unordered_map<std::string, FetchRecord> dirty;
  {
    std::lock_guard<std::mutex> lock(mu_);
    dirty.swap(dirty_);
  }
  if (dirty.empty()) return Status::Ok();
  Status written = [&]() -> Status {
    URLSIEVE_RETURN_IF_ERROR(CreateTable(db));
    std::string sql = "INSERT OR REPLACE INTO crawl_fetch_records(";
    sql += kColumns;
    sql += ") VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    Result<SqliteStatement> put = db.Prepare(sql);
    if (!put.ok()) return put.status();
    for (const auto& [url, r] : dirty) {
      put->Reset();
      URLSIEVE_RETURN_IF_ERROR(put->BindText(1, r.url));
      URLSIEVE_RETURN_IF_ERROR(put->BindInt64(2, r.status));
      URLSIEVE_RETURN_IF_ERROR(put->BindText(3, r.etag));
      URLSIEVE_RETURN_IF_ERROR(put->BindText(4, r.last_modified));
      URLSIEVE_RETURN_IF_ERROR(put->BindText(5, r.payload_digest));
      URLSIEVE_RETURN_IF_ERROR(put->BindInt64(6, r.fetch_time));
      URLSIEVE_RETURN_IF_ERROR(put->BindInt64(7, r.interval_s));
      URLSIEVE_RETURN_IF_ERROR(put->BindInt64(8, r.depth));
      URLSIEVE_RETURN_IF_ERROR(put->BindText(9, r.parent));
      URLSIEVE_RETURN_IF_ERROR(put->BindText(10, r.warc.record_id));
      URLSIEVE_RETURN_IF_ERROR(put->BindText(11, r.warc.target_uri));
      URLSIEVE_RETURN_IF_ERROR(put->BindText(12, r.warc.date));
      URLSIEVE_RETURN_IF_ERROR(put->BindText(13, r.warc.payload_digest));
      URLSIEVE_RETURN_IF_ERROR(put->BindInt64(14, r.queued ? 1 : 0));
      URLSIEVE_RETURN_IF_ERROR(put->Run());
    }
    return Status::Ok();
  }();
  if (!written.ok()) {
    // The transaction will not commit: keep the changes for the next checkpoint (a newer one
    // of the same URL, recorded meanwhile, wins).
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [url, r] : dirty) dirty_.try_emplace(url, std::move(r));
  }
  return written;
}

Result<std::vector<FetchRecord>> FetchRecordStore::ReadAll(SqliteDb& db) {
  return Select(db, "ORDER BY url", {});
}

}  // namespace urlsieve
