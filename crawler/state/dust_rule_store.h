// DustRuleStore: a crawl's learned URL rules (url/dust_learner.h) in its state.db, so that they
// survive --resume and --recrawl and `urlsieve rules` can list them (docs/features/dust.md,
// "In the state").
//
// Tables (written in the checkpoint's transaction, under the gate held exclusively, so that a
// suppressed URL is recorded exactly when the rejected.jsonl line that says so is):
//   dust_rules(origin TEXT, form TEXT, state TEXT, pinned INTEGER, forbidden INTEGER,
//              support INTEGER, contradictions INTEGER, validated INTEGER, checks INTEGER,
//              suppressed INTEGER, example TEXT, PRIMARY KEY(origin, form))
//     every rule but plain candidates (DustLearner::Records), rewritten whole each checkpoint;
//   dust_suppressed(rule_id TEXT, url TEXT, depth INTEGER, parent TEXT, queued INTEGER)
//     the URLs live rules kept the crawl from fetching (queued: skipped at their turn, after they
//     had been queued), queued again if their rule is retired
//     (a retired rule's rows are deleted when its URLs are queued);
//   dust_counters(name TEXT PRIMARY KEY, value INTEGER)
//     suppressed, validation_fetches, requeued.
// Plain candidates and each rule's page table are not kept: a resumed crawl learns them again.
//
// Thread-safety: Load and Checkpoint are called with the database the checkpoint protocol lends
// (one at a time); the learner is thread-safe.
#ifndef URLSIEVE_CRAWLER_STATE_DUST_RULE_STORE_H_
#define URLSIEVE_CRAWLER_STATE_DUST_RULE_STORE_H_

#include <string>
#include <vector>

#include "base/sqlite_db.h"
#include "base/status.h"
#include "url/dust_learner.h"

namespace urlsieve {

struct StoredDustRules {
  std::vector<RuleRecord> rules;
  std::vector<SuppressedUrl> suppressed;
  DustCounters counters;
};

class DustRuleStore {
 public:
  // What a state holds (nothing for a state written before rules existed). Corruption names the
  // file and the row when a rule's form or state does not parse.
  static Result<StoredDustRules> Read(SqliteDb& db);
  // Restores `learner` from the state.
  static Status Load(SqliteDb& db, DustLearner* learner);
  // Writes the learner's rules, the URLs suppressed since the last checkpoint and the counters.
  // Until Committed(), what it wrote is kept for the next checkpoint (a checkpoint that does not
  // commit loses nothing).
  Status Checkpoint(SqliteDb& db, DustLearner& learner);
  void Committed();

 private:
  std::vector<SuppressedUrl> unsaved_suppressed_;
  std::vector<std::string> unsaved_retired_;
  size_t written_suppressed_ = 0;  // of those, written by the last Checkpoint
  size_t written_retired_ = 0;
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_STATE_DUST_RULE_STORE_H_
