#include "crawler/state/dust_rule_store.h"

#include <utility>

namespace urlsieve {
namespace {

Status CreateTables(SqliteDb& db) {
  return db.Exec(
      "CREATE TABLE IF NOT EXISTS dust_rules(origin TEXT NOT NULL, form TEXT NOT NULL,"
      " state TEXT NOT NULL, pinned INTEGER NOT NULL, forbidden INTEGER NOT NULL,"
      " support INTEGER NOT NULL, contradictions INTEGER NOT NULL, validated INTEGER NOT NULL,"
      " checks INTEGER NOT NULL, suppressed INTEGER NOT NULL, example TEXT NOT NULL,"
      " PRIMARY KEY(origin, form));"
      "CREATE TABLE IF NOT EXISTS dust_suppressed(rule_id TEXT NOT NULL, url TEXT NOT NULL,"
      " depth INTEGER NOT NULL, parent TEXT NOT NULL, queued INTEGER NOT NULL);"
      "CREATE INDEX IF NOT EXISTS dust_suppressed_rule ON dust_suppressed(rule_id);"
      "CREATE TABLE IF NOT EXISTS dust_counters(name TEXT PRIMARY KEY, value INTEGER NOT NULL)",
      "creating the URL rule tables");
}

Result<bool> HasTables(SqliteDb& db) {
  Result<SqliteStatement> exists =
      db.Prepare("SELECT count(*) FROM sqlite_schema WHERE name = 'dust_rules'");
  if (!exists.ok()) return exists.status();
  Result<bool> counted = exists->Step();
  if (!counted.ok()) return counted.status();
  return exists->ColumnInt64(0) > 0;
}

// The counters, by name in dust_counters.
struct CounterColumn {
  std::string_view name;
  uint64_t DustCounters::*member;
};
constexpr CounterColumn kCounters[] = {
    {"suppressed", &DustCounters::suppressed},
    {"validation_fetches", &DustCounters::validation_fetches},
    {"requeued", &DustCounters::requeued},
};

}  // namespace

Result<StoredDustRules> DustRuleStore::Read(SqliteDb& db) {
  StoredDustRules stored;
  Result<bool> has = HasTables(db);
  if (!has.ok()) return has.status();
  if (!*has) return stored;
  Result<SqliteStatement> rules = db.Prepare(
      "SELECT origin, form, state, pinned, forbidden, support, contradictions, validated, checks,"
      " suppressed, example FROM dust_rules ORDER BY origin, form");
  if (!rules.ok()) return rules.status();
  for (;;) {
    Result<bool> row = rules->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    RuleRecord r;
    r.origin = std::string(rules->ColumnText(0));
    Result<UrlRule> rule = UrlRule::Parse(rules->ColumnText(1));
    Result<RuleState> state = ParseRuleState(rules->ColumnText(2));
    if (!rule.ok() || !state.ok()) {
      return Status::Corruption(db.path() + ": dust_rules row for " + r.origin + ": " +
                                (rule.ok() ? state.status() : rule.status()).message());
    }
    r.rule = std::move(*rule);
    r.id = RuleId(r.origin, r.rule);
    r.state = *state;
    r.pinned = rules->ColumnInt64(3) != 0;
    r.forbidden = rules->ColumnInt64(4) != 0;
    r.support = static_cast<uint64_t>(rules->ColumnInt64(5));
    r.contradictions = static_cast<uint64_t>(rules->ColumnInt64(6));
    r.validated = static_cast<uint64_t>(rules->ColumnInt64(7));
    r.checks = static_cast<uint64_t>(rules->ColumnInt64(8));
    r.suppressed = static_cast<uint64_t>(rules->ColumnInt64(9));
    r.example = std::string(rules->ColumnText(10));
    stored.rules.push_back(std::move(r));
  }
  Result<SqliteStatement> urls =
      db.Prepare("SELECT rule_id, url, depth, parent, queued FROM dust_suppressed ORDER BY rowid");
  if (!urls.ok()) return urls.status();
  for (;;) {
    Result<bool> row = urls->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    stored.suppressed.push_back({std::string(urls->ColumnText(0)), std::string(urls->ColumnText(1)),
                                 static_cast<uint32_t>(urls->ColumnInt64(2)),
                                 std::string(urls->ColumnText(3)), urls->ColumnInt64(4) != 0});
  }
  Result<SqliteStatement> counters = db.Prepare("SELECT name, value FROM dust_counters");
  if (!counters.ok()) return counters.status();
  for (;;) {
    Result<bool> row = counters->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    for (const CounterColumn& c : kCounters) {
      if (c.name == counters->ColumnText(0)) {
        stored.counters.*c.member = static_cast<uint64_t>(counters->ColumnInt64(1));
      }
    }
  }
  return stored;
}

Status DustRuleStore::Load(SqliteDb& db, DustLearner* learner) {
  Result<StoredDustRules> stored = Read(db);
  if (!stored.ok()) return stored.status();
  learner->Restore(stored->rules, std::move(stored->suppressed), stored->counters);
  return Status::Ok();
}

Status DustRuleStore::Checkpoint(SqliteDb& db, DustLearner& learner) {
  for (SuppressedUrl& url : learner.TakeNewSuppressed()) {
    unsaved_suppressed_.push_back(std::move(url));
  }
  for (std::string& id : learner.TakeRetiredIds()) unsaved_retired_.push_back(std::move(id));
  written_suppressed_ = written_retired_ = 0;
  const std::vector<RuleRecord> rules = learner.Records();
  if (rules.empty() && unsaved_suppressed_.empty() && unsaved_retired_.empty()) {
    return Status::Ok();
  }
  URLSIEVE_RETURN_IF_ERROR(CreateTables(db));
  URLSIEVE_RETURN_IF_ERROR(db.Exec("DELETE FROM dust_rules", "replacing the URL rules"));
  Result<SqliteStatement> put = db.Prepare(
      "INSERT INTO dust_rules(origin, form, state, pinned, forbidden, support, contradictions,"
      " validated, checks, suppressed, example) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!put.ok()) return put.status();
  for (const RuleRecord& r : rules) {
    put->Reset();
    URLSIEVE_RETURN_IF_ERROR(put->BindText(1, r.origin));
    URLSIEVE_RETURN_IF_ERROR(put->BindText(2, r.rule.Form()));
    URLSIEVE_RETURN_IF_ERROR(put->BindText(3, RuleStateName(r.state)));
    URLSIEVE_RETURN_IF_ERROR(put->BindInt64(4, r.pinned));
    URLSIEVE_RETURN_IF_ERROR(put->BindInt64(5, r.forbidden));
    URLSIEVE_RETURN_IF_ERROR(put->BindInt64(6, static_cast<int64_t>(r.support)));
    URLSIEVE_RETURN_IF_ERROR(put->BindInt64(7, static_cast<int64_t>(r.contradictions)));
    URLSIEVE_RETURN_IF_ERROR(put->BindInt64(8, static_cast<int64_t>(r.validated)));
    URLSIEVE_RETURN_IF_ERROR(put->BindInt64(9, static_cast<int64_t>(r.checks)));
    URLSIEVE_RETURN_IF_ERROR(put->BindInt64(10, static_cast<int64_t>(r.suppressed)));
    URLSIEVE_RETURN_IF_ERROR(put->BindText(11, r.example));
    URLSIEVE_RETURN_IF_ERROR(put->Run());
  }
  Result<SqliteStatement> add = db.Prepare(
      "INSERT INTO dust_suppressed(rule_id, url, depth, parent, queued)"
      " VALUES(?, ?, ?, ?, ?)");
  if (!add.ok()) return add.status();
  for (const SuppressedUrl& url : unsaved_suppressed_) {
    add->Reset();
    URLSIEVE_RETURN_IF_ERROR(add->BindText(1, url.rule_id));
    URLSIEVE_RETURN_IF_ERROR(add->BindText(2, url.url));
    URLSIEVE_RETURN_IF_ERROR(add->BindInt64(3, url.depth));
    URLSIEVE_RETURN_IF_ERROR(add->BindText(4, url.parent));
    URLSIEVE_RETURN_IF_ERROR(add->BindInt64(5, url.queued));
    URLSIEVE_RETURN_IF_ERROR(add->Run());
  }
  // A retired rule's URLs are queued again by now (the frontier's pending set holds them).
  Result<SqliteStatement> drop = db.Prepare("DELETE FROM dust_suppressed WHERE rule_id = ?");
  if (!drop.ok()) return drop.status();
  for (const std::string& id : unsaved_retired_) {
    drop->Reset();
    URLSIEVE_RETURN_IF_ERROR(drop->BindText(1, id));
    URLSIEVE_RETURN_IF_ERROR(drop->Run());
  }
  Result<SqliteStatement> count =
      db.Prepare("INSERT OR REPLACE INTO dust_counters(name, value) VALUES(?, ?)");
  if (!count.ok()) return count.status();
  const DustCounters counters = learner.counters();
  for (const CounterColumn& c : kCounters) {
    count->Reset();
    URLSIEVE_RETURN_IF_ERROR(count->BindText(1, c.name));
    URLSIEVE_RETURN_IF_ERROR(count->BindInt64(2, static_cast<int64_t>(counters.*c.member)));
    URLSIEVE_RETURN_IF_ERROR(count->Run());
  }
  written_suppressed_ = unsaved_suppressed_.size();
  written_retired_ = unsaved_retired_.size();
  return Status::Ok();
}

void DustRuleStore::Committed() {
  unsaved_suppressed_.erase(
      unsaved_suppressed_.begin(),
      unsaved_suppressed_.begin() + static_cast<ptrdiff_t>(written_suppressed_));
  unsaved_retired_.erase(unsaved_retired_.begin(),
                         unsaved_retired_.begin() + static_cast<ptrdiff_t>(written_retired_));
  written_suppressed_ = written_retired_ = 0;
}

}  // namespace urlsieve
