#include "crawler/state/crawl_checkpoint.h"

#include <charconv>
#include <cmath>

namespace urlsieve {
namespace {

// The checksum columns were added after the table; a row written by an earlier version (which
// replaces the whole row) has them NULL.
constexpr const char* kCreateOutputs =
    "CREATE TABLE IF NOT EXISTS crawl_outputs("
    " id INTEGER PRIMARY KEY CHECK (id = 1), pages INTEGER NOT NULL, rejected INTEGER NOT NULL,"
    " warc INTEGER NOT NULL, pages_xxh3 INTEGER, rejected_xxh3 INTEGER, warc_xxh3 INTEGER)";
constexpr const char* kChecksumColumns[] = {"pages_xxh3", "rejected_xxh3", "warc_xxh3"};

// family "total": the scalar counters (duration in microseconds); "status": HTTP status -> count;
// "error": error kind -> count; "rejection": reason -> count; "refetch": what a re-fetch found
// (not_modified, unchanged, changed) -> count; "encoding", "sitemap": their counters by name;
// "status_class_bytes": body bytes by status class ("2xx", "none"...).
constexpr const char* kCreateCounters =
    "CREATE TABLE IF NOT EXISTS crawl_counters(family TEXT NOT NULL, name TEXT NOT NULL,"
    " value INTEGER NOT NULL, PRIMARY KEY (family, name))";

// Adds the checksum columns to a crawl_outputs table created by an earlier version.
Status EnsureChecksumColumns(SqliteDb& db) {
  URLSIEVE_RETURN_IF_ERROR(db.Exec(kCreateOutputs));
  for (const char* column : kChecksumColumns) {
    Result<SqliteStatement> has =
        db.Prepare("SELECT 1 FROM pragma_table_info('crawl_outputs') WHERE name = '" +
                   std::string(column) + "'");
    if (!has.ok()) return has.status();
    Result<bool> row = has->Step();
    if (!row.ok()) return row.status();
    if (!*row) {
      URLSIEVE_RETURN_IF_ERROR(
          db.Exec("ALTER TABLE crawl_outputs ADD COLUMN " + std::string(column) + " INTEGER"));
    }
  }
  return Status::Ok();
}

Status BindChecksum(SqliteStatement& statement, int index, const OutputMark& mark) {
  if (!mark.checksum) return statement.BindNull(index);
  return statement.BindInt64(index, static_cast<int64_t>(*mark.checksum));
}

OutputMark ColumnMark(const SqliteStatement& row, int size_column, int checksum_column) {
  OutputMark mark;
  mark.size = static_cast<uint64_t>(row.ColumnInt64(size_column));
  if (!row.ColumnIsNull(checksum_column)) {
    mark.checksum = static_cast<uint64_t>(row.ColumnInt64(checksum_column));
  }
  return mark;
}

// The file name of `path`, for notices.
std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

Status WriteOutputMarks(SqliteDb& db, const OutputMarks& marks) {
  URLSIEVE_RETURN_IF_ERROR(EnsureChecksumColumns(db));
  Result<SqliteStatement> put = db.Prepare(
      "INSERT OR REPLACE INTO crawl_outputs(id, pages, rejected, warc, pages_xxh3, rejected_xxh3,"
      " warc_xxh3) VALUES(1, ?, ?, ?, ?, ?, ?)");
  if (!put.ok()) return put.status();
  URLSIEVE_RETURN_IF_ERROR(put->BindInt64(1, static_cast<int64_t>(marks.pages.size)));
  URLSIEVE_RETURN_IF_ERROR(put->BindInt64(2, static_cast<int64_t>(marks.rejected.size)));
  URLSIEVE_RETURN_IF_ERROR(put->BindInt64(3, static_cast<int64_t>(marks.warc.size)));
  URLSIEVE_RETURN_IF_ERROR(BindChecksum(*put, 4, marks.pages));
  URLSIEVE_RETURN_IF_ERROR(BindChecksum(*put, 5, marks.rejected));
  URLSIEVE_RETURN_IF_ERROR(BindChecksum(*put, 6, marks.warc));
  return put->Run();
}

Result<OutputMarks> ReadOutputMarks(SqliteDb& db) {
  URLSIEVE_RETURN_IF_ERROR(EnsureChecksumColumns(db));
  Result<SqliteStatement> get = db.Prepare(
      "SELECT pages, rejected, warc, pages_xxh3, rejected_xxh3, warc_xxh3 FROM crawl_outputs");
  if (!get.ok()) return get.status();
  Result<bool> row = get->Step();
  if (!row.ok()) return row.status();
  if (!*row) return Status::NotFound("the crawl state has no checkpoint of its outputs");
  OutputMarks marks;
  marks.pages = ColumnMark(*get, 0, 3);
  marks.rejected = ColumnMark(*get, 1, 4);
  marks.warc = ColumnMark(*get, 2, 5);
  return marks;
}

Status WriteCrawlCounters(SqliteDb& db, const CrawlStatsSnapshot& counters) {
  URLSIEVE_RETURN_IF_ERROR(db.Exec(kCreateCounters));
  URLSIEVE_RETURN_IF_ERROR(db.Exec("DELETE FROM crawl_counters"));
  Result<SqliteStatement> put =
      db.Prepare("INSERT INTO crawl_counters(family, name, value) VALUES(?, ?, ?)");
  if (!put.ok()) return put.status();
  auto row = [&](std::string_view family, std::string_view name, uint64_t value) -> Status {
    put->Reset();
    URLSIEVE_RETURN_IF_ERROR(put->BindText(1, family));
    URLSIEVE_RETURN_IF_ERROR(put->BindText(2, name));
    URLSIEVE_RETURN_IF_ERROR(put->BindInt64(3, static_cast<int64_t>(value)));
    return put->Run();
  };
  URLSIEVE_RETURN_IF_ERROR(row("total", "pages", counters.pages));
  URLSIEVE_RETURN_IF_ERROR(row("total", "bytes", counters.bytes));
  URLSIEVE_RETURN_IF_ERROR(row("total", "links_found", counters.links_found));
  URLSIEVE_RETURN_IF_ERROR(row("total", "links_new", counters.links_new));
  URLSIEVE_RETURN_IF_ERROR(row("total", "sessions", counters.sessions));
  URLSIEVE_RETURN_IF_ERROR(row("total", "seen_inserts", counters.seen_inserts));
  URLSIEVE_RETURN_IF_ERROR(row("total", "seen_new", counters.seen_new));
  for (const auto& [name, n] : counters.bytes_by_status_class) {
    URLSIEVE_RETURN_IF_ERROR(row("status_class_bytes", name, n));
  }
  URLSIEVE_RETURN_IF_ERROR(
      row("total", "duration_us", static_cast<uint64_t>(std::llround(counters.duration_s * 1e6))));
  for (const auto& [code, n] : counters.status) {
    URLSIEVE_RETURN_IF_ERROR(row("status", std::to_string(code), n));
  }
  for (const auto& [kind, n] : counters.errors) URLSIEVE_RETURN_IF_ERROR(row("error", kind, n));
  for (const auto& [result, n] : counters.refetches) {
    URLSIEVE_RETURN_IF_ERROR(row("refetch", result, n));
  }
  for (const auto& [name, n] : counters.encodings)
    URLSIEVE_RETURN_IF_ERROR(row("encoding", name, n));
  for (const auto& [name, n] : counters.sitemaps) URLSIEVE_RETURN_IF_ERROR(row("sitemap", name, n));
  for (const auto& [kind, n] : counters.duplicates) {
    URLSIEVE_RETURN_IF_ERROR(row("duplicate", kind, n));
  }
  for (const auto& [reason, n] : counters.rejections) {
    URLSIEVE_RETURN_IF_ERROR(row("rejection", reason, n));
  }
  return Status::Ok();
}

Result<CrawlStatsSnapshot> ReadCrawlCounters(SqliteDb& db) {
  URLSIEVE_RETURN_IF_ERROR(db.Exec(kCreateCounters));
  Result<SqliteStatement> get = db.Prepare("SELECT family, name, value FROM crawl_counters");
  if (!get.ok()) return get.status();
  CrawlStatsSnapshot counters;
  bool any = false;
  for (;;) {
    Result<bool> row = get->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    any = true;
    const std::string family(get->ColumnText(0));
    const std::string name(get->ColumnText(1));
    const uint64_t value = static_cast<uint64_t>(get->ColumnInt64(2));
    if (family == "total") {
      if (name == "pages") counters.pages = value;
      if (name == "bytes") counters.bytes = value;
      if (name == "links_found") counters.links_found = value;
      if (name == "links_new") counters.links_new = value;
      if (name == "sessions") counters.sessions = value;
      if (name == "seen_inserts") counters.seen_inserts = value;
      if (name == "seen_new") counters.seen_new = value;
      if (name == "duration_us") counters.duration_s = static_cast<double>(value) / 1e6;
    } else if (family == "status") {
      int code = 0;
      const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), code);
      if (ec != std::errc() || end != name.data() + name.size()) {
        return Status::Corruption(db.path() + ": crawl_counters holds a bad HTTP status '" + name +
                                  "'");
      }
      counters.status[code] = value;
    } else if (family == "error") {
      counters.errors[name] = value;
    } else if (family == "rejection") {
      counters.rejections[name] = value;
    } else if (family == "refetch") {
      counters.refetches[name] = value;
    } else if (family == "encoding") {
      counters.encodings[name] = value;
    } else if (family == "sitemap") {
      counters.sitemaps[name] = value;
    } else if (family == "duplicate") {
      counters.duplicates[name] = value;
    } else if (family == "status_class_bytes") {
      counters.bytes_by_status_class[name] = value;
    }
  }
  if (!any) return Status::NotFound("the crawl state has no crawl counters");
  return counters;
}

Result<CrawlCheckpointRecord> ReadCrawlCheckpoint(SqliteDb& db, std::vector<std::string>* notices) {
  CrawlCheckpointRecord record;
  Result<OutputMarks> marks = ReadOutputMarks(db);
  if (!marks.ok() && marks.status().code() != StatusCode::kNotFound) return marks.status();
  if (!marks.ok()) return record;  // no checkpoint yet: nothing was recorded
  record.marks = *marks;
  Result<CrawlStatsSnapshot> counters = ReadCrawlCounters(db);
  if (counters.ok()) {
    record.counters = std::move(*counters);
  } else if (counters.status().code() != StatusCode::kNotFound) {
    return counters.status();
  } else if (notices != nullptr) {
    notices->push_back("the checkpoint in " + db.path() +
                       " has no crawl counters (written by an earlier urlsieve): stats.json "
                       "counts the fetches of this run and later ones only");
  }
  return record;
}

Result<VerifiedOutputs> VerifyOutputs(const OutputFiles& files, const OutputMarks& marks,
                                      std::vector<std::string>* notices) {
  VerifiedOutputs verified;
  std::string errors;
  std::string unchecked;
  auto verify = [&](const std::string& path, const OutputMark& mark,
                    std::optional<VerifiedPrefix>* out) {
    if (path.empty()) return;
    Result<VerifiedPrefix> prefix = VerifyOutputPrefix(path, mark);
    if (!prefix.ok()) {
      errors += (errors.empty() ? "" : "; ") + prefix.status().message();
      return;
    }
    if (!mark.checksum && mark.size > 0) {
      unchecked += (unchecked.empty() ? "" : ", ") + BaseName(path);
    }
    *out = std::move(*prefix);
  };
  verify(files.pages, marks.pages, &verified.pages);
  verify(files.rejected, marks.rejected, &verified.rejected);
  verify(files.warc, marks.warc, &verified.warc);
  if (!errors.empty()) {
    return Status::Corruption(
        "--resume: the outputs do not match the crawl's checkpoint, nothing was modified: " +
        errors);
  }
  if (!unchecked.empty() && notices != nullptr) {
    notices->push_back("the checkpoint has no checksums of " + unchecked +
                       " (written by an earlier urlsieve): their sizes were checked, not their "
                       "content; checksums are recorded from now on");
  }
  return verified;
}

}  // namespace urlsieve
