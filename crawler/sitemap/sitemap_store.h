// SitemapStore: the sitemaps a crawl has queued or fetched — each at most once per crawl — and the
// <lastmod> its urlsets gave for their URLs, kept in the crawl's state.db
// (docs/features/sitemaps.md, "Sitemaps").
//
// Tables (written in the checkpoint's transaction, under the gate held exclusively, so they agree
// with the frontier's pending set and the outputs of the same checkpoint):
//   crawl_sitemaps(url TEXT PRIMARY KEY, nesting INTEGER, parent TEXT, status INTEGER,
//                  kind TEXT, entries INTEGER, fetched_at INTEGER)
//     one row per sitemap claimed; fetched_at 0 while it is pending in the frontier (its lease
//     is in frontier_pending), else the unix time it was done with its status (0: no answer),
//     kind (index, urlset, text, unknown) and entries read.
//   crawl_sitemap_lastmod(url TEXT PRIMARY KEY, lastmod INTEGER, sitemap TEXT)
//     a page URL (fetch form) and the newest <lastmod> (unix seconds) a sitemap gave for it;
//     FetchRecordStore::TakeDue takes a URL whose lastmod is newer than its last fetch as due
//     (a lastmod in the future is stored as the time it was read).
//
// A sitemap is claimed before it is queued (Claim), so a second mention — an index listing itself,
// a cycle of indexes, the same URL in robots.txt and --sitemap — finds it claimed and is not
// fetched again. --resume loads every claim (Load): nothing is fetched twice, and the pending ones
// are in the restored frontier. --recrawl is a new pass: the sitemaps fetched by earlier passes
// are fetched again (their lastmods and new URLs are what a re-crawl wants), starting from their
// roots; pending ones stay.
//
// Thread-safety: Claim, Done, PutLastmods and claimed() may be called concurrently (one mutex);
// Load and Checkpoint are called with the database the checkpoint protocol lends.
#ifndef URLSIEVE_CRAWLER_SITEMAP_SITEMAP_STORE_H_
#define URLSIEVE_CRAWLER_SITEMAP_SITEMAP_STORE_H_

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/sqlite_db.h"
#include "base/status.h"

namespace urlsieve {

struct SitemapRecord {
  std::string url;
  uint32_t nesting = 0;
  std::string parent;  // the robots.txt or index that named it ("" = --sitemap)
  int status = 0;      // HTTP status when done (0: no answer)
  std::string kind;    // SitemapKindName, when done
  uint64_t entries = 0;
  int64_t fetched_at = 0;  // unix seconds; 0 = pending
};

class SitemapStore {
 public:
  SitemapStore() = default;
  SitemapStore(const SitemapStore&) = delete;
  SitemapStore& operator=(const SitemapStore&) = delete;

  // Loads the claims of a crawl being continued. new_pass (--recrawl): those already fetched are
  // forgotten (deleted at the next checkpoint), so that this pass fetches them again; the roots
  // among them (nesting 0: from robots.txt or --sitemap) are appended to *roots, for the crawl to
  // queue again (an index's children are found again by reading it).
  Status Load(SqliteDb& db, bool new_pass, std::vector<SitemapRecord>* roots = nullptr);

  enum class ClaimResult : uint8_t {
    kClaimed,     // the first time in this crawl: queue it
    kRepeated,    // claimed before (fetched, or pending)
    kOverBudget,  // new, but max_total sitemaps are claimed already
  };
  ClaimResult Claim(const std::string& url, uint32_t nesting, const std::string& parent,
                    size_t max_total);
  // Whether `url` has been claimed.
  bool Claimed(const std::string& url) const;
  // A claim another node of a crawl cluster acts on (the sitemap went to the inbox of its host's
  // owner, or was there already): done here as of `at` (kind "handed_over"), so that it is no
  // pending sitemap of this node's checkpoint, and a re-crawl's new pass queues it again. Its
  // reader's Done, when that is this node, records the answer.
  void HandedOver(const std::string& url, int64_t at);
  size_t claimed() const;
  // The claimed sitemap `url` is done (fetched, given up or rejected) at `fetched_at` (unix
  // seconds), with its HTTP status (0: none), kind and entries: its row is updated at the
  // checkpoint.
  void Done(const std::string& url, int status, std::string_view kind, uint64_t entries,
            int64_t fetched_at);
  // The lastmod of page URLs (fetch form) a urlset listed.
  void PutLastmod(const std::string& url, int64_t lastmod, const std::string& sitemap);

  // Writes the changes since the last checkpoint into `db` (the checkpoint's open transaction).
  Status Checkpoint(SqliteDb& db);

  // Tests and tools.
  static Result<std::vector<SitemapRecord>> ReadAll(SqliteDb& db);
  static Result<std::optional<int64_t>> ReadLastmod(SqliteDb& db, const std::string& url);
  static Status CreateTables(SqliteDb& db);

 private:
  struct Lastmod {
    int64_t lastmod;
    std::string sitemap;
  };
  mutable std::mutex mu_;
  std::unordered_map<std::string, SitemapRecord> claimed_;   // guarded by mu_
  std::unordered_map<std::string, SitemapRecord> dirty_;     // guarded by mu_
  std::unordered_map<std::string, Lastmod> dirty_lastmods_;  // guarded by mu_
  std::vector<std::string> forgotten_;                       // guarded by mu_: rows to delete
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_SITEMAP_SITEMAP_STORE_H_
