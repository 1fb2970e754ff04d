#include "crawler/sitemap/sitemap_store.h"

#include <utility>

namespace urlsieve {

Status SitemapStore::CreateTables(SqliteDb& db) {
  return db.Exec(
      "CREATE TABLE IF NOT EXISTS crawl_sitemaps(url TEXT PRIMARY KEY, nesting INTEGER NOT NULL,"
      " parent TEXT NOT NULL, status INTEGER NOT NULL, kind TEXT NOT NULL,"
      " entries INTEGER NOT NULL, fetched_at INTEGER NOT NULL);"
      "CREATE TABLE IF NOT EXISTS crawl_sitemap_lastmod(url TEXT PRIMARY KEY,"
      " lastmod INTEGER NOT NULL, sitemap TEXT NOT NULL)",
      "creating the sitemap tables");
}

Status SitemapStore::Load(SqliteDb& db, bool new_pass, std::vector<SitemapRecord>* roots) {
  Result<std::vector<SitemapRecord>> rows = ReadAll(db);
  if (!rows.ok()) return rows.status();
  std::lock_guard<std::mutex> lock(mu_);
  for (SitemapRecord& row : *rows) {
    if (new_pass && row.fetched_at != 0) {
      forgotten_.push_back(row.url);
      if (roots != nullptr && row.nesting == 0) roots->push_back(std::move(row));
      continue;
    }
    std::string url = row.url;
    claimed_.insert_or_assign(std::move(url), std::move(row));
  }
  return Status::Ok();
}

SitemapStore::ClaimResult SitemapStore::Claim(const std::string& url, uint32_t nesting,
                                              const std::string& parent, size_t max_total) {
  std::lock_guard<std::mutex> lock(mu_);
  if (claimed_.contains(url)) return ClaimResult::kRepeated;
  if (claimed_.size() >= max_total) return ClaimResult::kOverBudget;
  SitemapRecord record;
  record.url = url;
  record.nesting = nesting;
  record.parent = parent;
  claimed_.emplace(url, record);
  dirty_.insert_or_assign(url, std::move(record));
  return ClaimResult::kClaimed;
}

bool SitemapStore::Claimed(const std::string& url) const {
  std::lock_guard<std::mutex> lock(mu_);
  return claimed_.contains(url);
}

void SitemapStore::HandedOver(const std::string& url, int64_t at) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = claimed_.find(url);
  if (it == claimed_.end() || it->second.fetched_at != 0) return;
  it->second.kind = "handed_over";
  it->second.fetched_at = at;
  dirty_.insert_or_assign(url, it->second);
}

size_t SitemapStore::claimed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return claimed_.size();
}

void SitemapStore::Done(const std::string& url, int status, std::string_view kind, uint64_t entries,
                        int64_t fetched_at) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = claimed_.find(url);
  if (it == claimed_.end()) return;  // never claimed: nothing to record
  SitemapRecord& record = it->second;
  record.status = status;
  record.kind = std::string(kind);
  record.entries = entries;
  record.fetched_at = fetched_at;
  dirty_.insert_or_assign(url, record);
}

void SitemapStore::PutLastmod(const std::string& url, int64_t lastmod, const std::string& sitemap) {
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, added] = dirty_lastmods_.try_emplace(url, Lastmod{lastmod, sitemap});
  if (!added && it->second.lastmod < lastmod) it->second = Lastmod{lastmod, sitemap};
}

Status SitemapStore::Checkpoint(SqliteDb& db) {
  std::unordered_map<std::string, SitemapRecord> dirty;
  std::unordered_map<std::string, Lastmod> lastmods;
  std::vector<std::string> forgotten;
  {
    std::lock_guard<std::mutex> lock(mu_);
    dirty.swap(dirty_);
    lastmods.swap(dirty_lastmods_);
    forgotten.swap(forgotten_);
  }
  if (dirty.empty() && lastmods.empty() && forgotten.empty()) return Status::Ok();
  Status written = [&]() -> Status {
    URLSIEVE_RETURN_IF_ERROR(CreateTables(db));
    Result<SqliteStatement> erase = db.Prepare("DELETE FROM crawl_sitemaps WHERE url = ?");
    if (!erase.ok()) return erase.status();
    for (const std::string& url : forgotten) {
      erase->Reset();
      URLSIEVE_RETURN_IF_ERROR(erase->BindText(1, url));
      URLSIEVE_RETURN_IF_ERROR(erase->Run());
    }
    Result<SqliteStatement> put = db.Prepare(
        "INSERT OR REPLACE INTO crawl_sitemaps(url, nesting, parent, status, kind, entries,"
        " fetched_at) VALUES(?, ?, ?, ?, ?, ?, ?)");
    if (!put.ok()) return put.status();
    for (const auto& [url, r] : dirty) {
      put->Reset();
      URLSIEVE_RETURN_IF_ERROR(put->BindText(1, r.url));
      URLSIEVE_RETURN_IF_ERROR(put->BindInt64(2, r.nesting));
      URLSIEVE_RETURN_IF_ERROR(put->BindText(3, r.parent));
      URLSIEVE_RETURN_IF_ERROR(put->BindInt64(4, r.status));
      URLSIEVE_RETURN_IF_ERROR(put->BindText(5, r.kind));
      URLSIEVE_RETURN_IF_ERROR(put->BindInt64(6, static_cast<int64_t>(r.entries)));
      URLSIEVE_RETURN_IF_ERROR(put->BindInt64(7, r.fetched_at));
      URLSIEVE_RETURN_IF_ERROR(put->Run());
    }
    // The newest lastmod wins, whichever sitemap gave it.
    Result<SqliteStatement> put_lastmod = db.Prepare(
        "INSERT INTO crawl_sitemap_lastmod(url, lastmod, sitemap) VALUES(?, ?, ?)"
        " ON CONFLICT(url) DO UPDATE SET lastmod = excluded.lastmod, sitemap = excluded.sitemap"
        " WHERE excluded.lastmod > crawl_sitemap_lastmod.lastmod");
    if (!put_lastmod.ok()) return put_lastmod.status();
    for (const auto& [url, l] : lastmods) {
      put_lastmod->Reset();
      URLSIEVE_RETURN_IF_ERROR(put_lastmod->BindText(1, url));
      URLSIEVE_RETURN_IF_ERROR(put_lastmod->BindInt64(2, l.lastmod));
      URLSIEVE_RETURN_IF_ERROR(put_lastmod->BindText(3, l.sitemap));
      URLSIEVE_RETURN_IF_ERROR(put_lastmod->Run());
    }
    return Status::Ok();
  }();
  if (!written.ok()) {
    // The transaction will not commit: keep the changes for the next checkpoint (a newer change
    // of the same row, recorded meanwhile, wins).
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [url, r] : dirty) dirty_.try_emplace(url, std::move(r));
    for (auto& [url, l] : lastmods) dirty_lastmods_.try_emplace(url, std::move(l));
    for (std::string& url : forgotten) forgotten_.push_back(std::move(url));
  }
  return written;
}

Result<std::vector<SitemapRecord>> SitemapStore::ReadAll(SqliteDb& db) {
  std::vector<SitemapRecord> records;
  Result<SqliteStatement> exists =
      db.Prepare("SELECT count(*) FROM sqlite_schema WHERE name = 'crawl_sitemaps'");
  if (!exists.ok()) return exists.status();
  Result<bool> counted = exists->Step();
  if (!counted.ok()) return counted.status();
  if (exists->ColumnInt64(0) == 0) return records;
  Result<SqliteStatement> select = db.Prepare(
      "SELECT url, nesting, parent, status, kind, entries, fetched_at FROM crawl_sitemaps"
      " ORDER BY url");
  if (!select.ok()) return select.status();
  for (;;) {
    Result<bool> row = select->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    SitemapRecord r;
    r.url = std::string(select->ColumnText(0));
    r.nesting = static_cast<uint32_t>(select->ColumnInt64(1));
    r.parent = std::string(select->ColumnText(2));
    r.status = static_cast<int>(select->ColumnInt64(3));
    r.kind = std::string(select->ColumnText(4));
    r.entries = static_cast<uint64_t>(select->ColumnInt64(5));
    r.fetched_at = select->ColumnInt64(6);
    records.push_back(std::move(r));
  }
  return records;
}

Result<std::optional<int64_t>> SitemapStore::ReadLastmod(SqliteDb& db, const std::string& url) {
  URLSIEVE_RETURN_IF_ERROR(CreateTables(db));
  Result<SqliteStatement> select =
      db.Prepare("SELECT lastmod FROM crawl_sitemap_lastmod WHERE url = ?");
  if (!select.ok()) return select.status();
  URLSIEVE_RETURN_IF_ERROR(select->BindText(1, url));
  Result<bool> row = select->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<int64_t>();
  return std::optional<int64_t>(select->ColumnInt64(0));
}

}  // namespace urlsieve
