#include "dedup/seen_filter.h"

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <map>
#include <system_error>

#include "dedup/bloom_delta_log.h"
#include "dedup/key_hash.h"
#include "dedup/scalable_bloom_filter.h"
#include "dedup/sqlite_db.h"

namespace urlsieve {
namespace {

constexpr std::string_view kFormat = "urlsieve-state";
constexpr int64_t kFormatVersion = 1;

std::string FormatDouble(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

// The canonicalizer options as stored in the meta table: keys written under other options would
// never match, so they are part of the state's identity.
std::string EncodeCanonicalize(const CanonicalizeOptions& o) {
  std::string s;
  s += "sort_query=" + std::to_string(o.sort_query);
  s += ",drop_empty_query=" + std::to_string(o.drop_empty_query);
  s += ",strip_session_ids=" + std::to_string(o.strip_session_ids);
  s += ",strip_www=" + std::to_string(o.strip_www);
  s += ",collapse_slashes=" + std::to_string(o.collapse_slashes);
  s += ",max_length=" + std::to_string(o.max_length);
  return s;
}

Result<CanonicalizeOptions> DecodeCanonicalize(const std::string& s) {
  CanonicalizeOptions o;
  unsigned sort_query, drop_empty, strip_sid, strip_www, collapse;
  unsigned long long max_length;
  if (std::sscanf(s.c_str(),
                  "sort_query=%u,drop_empty_query=%u,strip_session_ids=%u,strip_www=%u,"
                  "collapse_slashes=%u,max_length=%llu",
                  &sort_query, &drop_empty, &strip_sid, &strip_www, &collapse, &max_length) != 6) {
    return Status::Corruption("unreadable canonicalizer options in state: '" + s + "'");
  }
  o.sort_query = sort_query != 0;
  o.drop_empty_query = drop_empty != 0;
  o.strip_session_ids = strip_sid != 0;
  o.strip_www = strip_www != 0;
  o.collapse_slashes = collapse != 0;
  o.max_length = static_cast<size_t>(max_length);
  return o;
}

// Per-thread buffers of the batch paths, so that a steady stream of batches allocates nothing.
struct Scratch {
  std::vector<std::string> keys;
  std::vector<std::string_view> views;
  std::vector<KeyHash> hashes;
  std::vector<uint32_t> positions;
  std::unique_ptr<bool[]> is_new;
  size_t is_new_size = 0;
  bool* IsNew(size_t n) {
    if (n > is_new_size) {
      is_new.reset(new bool[n]);
      is_new_size = n;
    }
    return is_new.get();
  }
};

Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

}  // namespace

SeenFilter::SeenFilter(const SeenFilterOptions& options)
    : options_(options), canonicalizer_(options.canonicalize) {}

SeenFilter::~SeenFilter() = default;

Result<std::unique_ptr<SeenFilter>> SeenFilter::Open(const SeenFilterOptions& options) {
  if (options.capacity == 0) return Status::InvalidArgument("capacity must be positive");
  if (!(options.fp_rate > 0 && options.fp_rate < 1)) {
    return Status::InvalidArgument("fp_rate must be in (0, 1)");
  }
  if (options.state_dir.empty() && (options.exact || options.checkpointed)) {
    return Status::InvalidArgument("exact and checkpointed modes need a state directory");
  }
  std::unique_ptr<SeenFilter> filter(new SeenFilter(options));
  if (options.state_dir.empty()) {
    auto bloom = ScalableBloomFilter::Create({options.capacity, options.fp_rate});
    if (!bloom.ok()) return bloom.status();
    filter->bloom_ = std::move(*bloom);
    return filter;
  }
  URLSIEVE_RETURN_IF_ERROR(filter->OpenState(options));
  return filter;
}

Status SeenFilter::WriteMeta(std::string_view key, const std::string& value) {
  auto stmt = db_->Prepare("INSERT OR REPLACE INTO urlsieve_meta(key, value) VALUES(?, ?)");
  if (!stmt.ok()) return stmt.status();
  URLSIEVE_RETURN_IF_ERROR(stmt->BindText(1, key));
  URLSIEVE_RETURN_IF_ERROR(stmt->BindText(2, value));
  return stmt->Run();
}

Status SeenFilter::OpenState(const SeenFilterOptions& requested) {
  std::error_code ec;
  std::filesystem::create_directories(options_.state_dir, ec);
  if (ec) return Status::IoError("create " + options_.state_dir + ": " + ec.message());
  const std::string path = options_.state_dir + "/state.db";

  // Open without WAL first: switching the journal mode writes the file header, and a foreign
  // database must be left exactly as it was.
  SqliteDb::Options db_options;
  db_options.wal = false;
  auto db = SqliteDb::Open(path, db_options);
  if (!db.ok()) return Status(db.status().code(), path + ": " + db.status().message());
  db_ = std::move(*db);

  auto tables = db_->Prepare(
      "SELECT count(*), sum(name = 'urlsieve_meta') FROM sqlite_schema WHERE type = 'table'");
  if (!tables.ok()) return tables.status();
  auto row = tables->Step();
  if (!row.ok()) return row.status();
  const int64_t table_count = tables->ColumnInt64(0);
  const bool has_meta = tables->ColumnInt64(1) > 0;
  tables = SqliteStatement();
  if (table_count > 0 && !has_meta) {
    return Status::Corruption(path + ": not a urlsieve state database (no urlsieve_meta table)");
  }
  URLSIEVE_RETURN_IF_ERROR(db_->Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL"));
  // The exact store's B-tree pages stay hot between batches.
  URLSIEVE_RETURN_IF_ERROR(db_->Exec("PRAGMA cache_size=-65536"));

  if (!has_meta) {
    URLSIEVE_RETURN_IF_ERROR(db_->Begin());
    URLSIEVE_RETURN_IF_ERROR(
        db_->Exec("CREATE TABLE urlsieve_meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID"));
    URLSIEVE_RETURN_IF_ERROR(WriteMeta("format", std::string(kFormat)));
    URLSIEVE_RETURN_IF_ERROR(WriteMeta("version", std::to_string(kFormatVersion)));
    URLSIEVE_RETURN_IF_ERROR(WriteMeta("capacity", std::to_string(options_.capacity)));
    URLSIEVE_RETURN_IF_ERROR(WriteMeta("fp_rate", FormatDouble(options_.fp_rate)));
    URLSIEVE_RETURN_IF_ERROR(WriteMeta("exact", options_.exact ? "1" : "0"));
    URLSIEVE_RETURN_IF_ERROR(WriteMeta("canonicalize", EncodeCanonicalize(options_.canonicalize)));
    URLSIEVE_RETURN_IF_ERROR(WriteMeta("generation", "0"));
    if (options_.exact) {
      auto store = ExactStore::Open(db_.get());
      if (!store.ok()) return store.status();
    }
    URLSIEVE_RETURN_IF_ERROR(db_->Commit());
  }

  // Read back what is stored (also right after creating it: one code path).
  std::map<std::string, std::string, std::less<>> meta;
  {
    auto read = db_->Prepare("SELECT key, CAST(value AS TEXT) FROM urlsieve_meta");
    if (!read.ok()) return read.status();
    for (;;) {
      auto r = read->Step();
      if (!r.ok()) return r.status();
      if (!*r) break;
      meta.emplace(std::string(read->ColumnText(0)), std::string(read->ColumnText(1)));
    }
  }
  auto get = [&](std::string_view key) -> Result<std::string> {
    auto it = meta.find(key);
    if (it == meta.end()) {
      return Status::Corruption(path + ": urlsieve_meta lacks '" + std::string(key) + "'");
    }
    return it->second;
  };
  auto format = get("format");
  if (!format.ok() || *format != kFormat) {
    return Status::Corruption(path + ": not a urlsieve state database (format is not " +
                              std::string(kFormat) + ")");
  }
  auto version = get("version");
  if (!version.ok()) return version.status();
  if (std::strtoll(version->c_str(), nullptr, 10) > kFormatVersion) {
    return Status::Unsupported(path + ": state format version " + *version +
                               " is newer than this build's " + std::to_string(kFormatVersion));
  }
  auto capacity = get("capacity");
  auto fp_rate = get("fp_rate");
  auto exact = get("exact");
  auto canon = get("canonicalize");
  auto generation = get("generation");
  for (const auto* r : {&capacity, &fp_rate, &exact, &canon, &generation}) {
    if (!r->ok()) return r->status();
  }
  auto canon_options = DecodeCanonicalize(*canon);
  if (!canon_options.ok()) return canon_options.status();
  char* end = nullptr;
  options_.capacity = std::strtoull(capacity->c_str(), &end, 10);
  options_.fp_rate = std::strtod(fp_rate->c_str(), &end);
  options_.exact = *exact == "1";
  options_.canonicalize = *canon_options;
  generation_ = std::strtoull(generation->c_str(), &end, 10);
  if (options_.capacity == 0 || !(options_.fp_rate > 0 && options_.fp_rate < 1)) {
    return Status::Corruption(path + ": bad capacity or fp_rate in urlsieve_meta");
  }
  auto counter = [&](std::string_view key) -> uint64_t {
    auto it = meta.find(key);
    return it == meta.end() ? 0 : std::strtoull(it->second.c_str(), &end, 10);
  };
  if (auto it = meta.find("identity"); it != meta.end()) {
    auto identity = StateIdentity::FromHex(it->second);
    if (!identity.ok()) return Status::Corruption(path + ": " + identity.status().message());
    identity_ = *identity;
  }
  if (auto it = meta.find(BloomDeltaLog::kMetaKey); it != meta.end()) delta_meta_ = it->second;
  maybe_lookups_ = counter("maybe_lookups");
  false_positives_ = counter("false_positives");
  canonicalizer_ = UrlCanonicalizer(options_.canonicalize);

  if (options_.capacity != requested.capacity || options_.fp_rate != requested.fp_rate) {
    notices_.push_back({SeenNotice::Kind::kStoredParameters,
                        "using the stored capacity " + std::to_string(options_.capacity) +
                            " and fp-rate " + FormatDouble(options_.fp_rate) + " (requested " +
                            std::to_string(requested.capacity) + ", " +
                            FormatDouble(requested.fp_rate) + ")"});
  }
  if (options_.exact != requested.exact) {
    notices_.push_back({SeenNotice::Kind::kStoredParameters,
                        options_.exact
                            ? "the state is exact (created with exact mode): staying exact"
                            : "the state was created without exact mode, so its store lacks the "
                              "earlier keys: staying Bloom-only"});
  }
  if (EncodeCanonicalize(options_.canonicalize) != EncodeCanonicalize(requested.canonicalize)) {
    notices_.push_back({SeenNotice::Kind::kStoredParameters,
                        "using the stored canonicalizer options (" + *canon + ")"});
  }

  URLSIEVE_RETURN_IF_ERROR(LoadOrRebuildBloom());
  if (delta_log_ == nullptr) {
    delta_log_ = BloomDeltaLog::Detached(DeltaLogPath(), identity_, *bloom_);
  }
  if (options_.checkpointed) URLSIEVE_RETURN_IF_ERROR(db_->Begin());
  return Status::Ok();
}

std::string SeenFilter::SnapshotPath() const { return options_.state_dir + "/bloom.snap"; }
std::string SeenFilter::NextSnapshotPath() const { return options_.state_dir + "/bloom.snap.next"; }
std::string SeenFilter::DeltaLogPath() const { return options_.state_dir + "/bloom.delta"; }

Status SeenFilter::LoadOrRebuildBloom() {
  namespace fs = std::filesystem;
  const std::string snap = SnapshotPath();
  const std::string next = NextSnapshotPath();
  std::error_code ec;
  if (fs::exists(next, ec)) {
    uint64_t next_generation = 0;
    auto loaded = ScalableBloomFilter::Load(next, &next_generation);
    if (loaded.ok() && next_generation == generation_) {
      // The crash hit between a checkpoint's COMMIT and its rename: finish the rename.
      fs::rename(next, snap, ec);
      if (ec) return Status::IoError("rename " + next + ": " + ec.message());
    } else {
      fs::remove(next, ec);  // the snapshot of a checkpoint that never committed
    }
  }

  // Why bloom.snap cannot be used; empty when it can, or when there is none to use yet.
  std::string problem;
  const bool have_snapshot = fs::exists(snap, ec);
  if (have_snapshot) {
    uint64_t snap_generation = 0;
    auto loaded = ScalableBloomFilter::Load(snap, &snap_generation);
    if (!loaded.ok()) {
      if (!options_.exact) return loaded.status();
      problem = loaded.status().ToString();
    } else {
      // The snapshot plus the committed records of the delta log since it.
      auto log = BloomDeltaLog::OpenAndReplay(DeltaLogPath(), identity_, delta_meta_, snap,
                                              snap_generation, loaded->get());
      if (!log.ok()) {
        if (!options_.exact || log.status().code() != StatusCode::kCorruption) return log.status();
        problem = log.status().ToString();
      } else if ((*log)->generation() != generation_) {
        problem = snap + " is stale (generation " + std::to_string((*log)->generation()) +
                  (snap_generation != (*log)->generation() ? " with " + DeltaLogPath() : "") +
                  ", state.db is at " + std::to_string(generation_) + ")";
      } else {
        bloom_ = std::move(*loaded);
        delta_log_ = std::move(*log);
        snapshot_current_ = true;
      }
    }
  } else if (generation_ > 0) {
    problem = snap + " is missing";
  }  // else: a fresh state, or one that never reached its first checkpoint or Save.

  if (!options_.exact) {
    if (!problem.empty()) {
      return Status::Corruption(problem +
                                "; a Bloom-only state cannot be rebuilt (no exact store)");
    }
    if (bloom_ == nullptr) {
      auto bloom = ScalableBloomFilter::Create({options_.capacity, options_.fp_rate});
      if (!bloom.ok()) return bloom.status();
      bloom_ = std::move(*bloom);
      snapshot_current_ = false;
    }
    return Status::Ok();
  }
  // Exact mode: opening the store reads every row to build its index; when the snapshot is not
  // usable the same scan refills the Bloom filter.
  std::function<void(std::string_view)> refill;
  if (bloom_ == nullptr) {
    auto bloom = ScalableBloomFilter::Create({options_.capacity, options_.fp_rate});
    if (!bloom.ok()) return bloom.status();
    bloom_ = std::move(*bloom);
    snapshot_current_ = false;
    refill = [this](std::string_view key) { bloom_->InsertIfNew(HashKey(key)); };
  }
  auto store = ExactStore::Open(db_.get(), refill);
  if (!store.ok()) return store.status();
  store_ = std::move(*store);
  if (!problem.empty()) {
    notices_.push_back({SeenNotice::Kind::kRebuilt, "rebuilt the Bloom filter from " +
                                                        std::to_string(store_->rows()) +
                                                        " keys in the exact store: " + problem});
  }
  return Status::Ok();
}

Result<bool> SeenFilter::InsertIfNew(std::string_view url) {
  Scratch& s = ThreadScratch();
  if (s.keys.empty()) s.keys.emplace_back();
  URLSIEVE_RETURN_IF_ERROR(canonicalizer_.CanonicalizeTo(url, &s.keys[0]));
  const std::string_view key = s.keys[0];
  const KeyHash hash = HashKey(key);
  if (store_ == nullptr) {
    std::shared_lock lock(mu_);
    const bool is_new = bloom_->InsertIfNew(hash);
    if (is_new && delta_log_ != nullptr) delta_log_->Record(hash);
    return is_new;
  }
  bool is_new = false;
  URLSIEVE_RETURN_IF_ERROR(InsertHashed({&key, 1}, {&hash, 1}, &is_new));
  return is_new;
}

Status SeenFilter::InsertIfNewBatch(std::span<const std::string_view> urls,
                                    std::vector<SeenResult>* out) {
  Scratch& s = ThreadScratch();
  if (s.keys.size() < urls.size()) s.keys.resize(urls.size());
  s.views.clear();
  s.hashes.clear();
  s.positions.clear();
  out->resize(urls.size());
  for (size_t i = 0; i < urls.size(); ++i) {
    Status status = canonicalizer_.CanonicalizeTo(urls[i], &s.keys[i]);
    if (!status.ok()) {
      (*out)[i] = SeenResult{Verdict::kInvalid, std::move(status)};
      continue;
    }
    s.views.push_back(s.keys[i]);
    s.hashes.push_back(HashKey(s.keys[i]));
    s.positions.push_back(static_cast<uint32_t>(i));
  }
  bool* is_new = s.IsNew(s.views.size());
  URLSIEVE_RETURN_IF_ERROR(InsertHashed(s.views, s.hashes, is_new));
  for (size_t j = 0; j < s.positions.size(); ++j) {
    SeenResult& r = (*out)[s.positions[j]];
    r.verdict = is_new[j] ? Verdict::kNew : Verdict::kSeen;
    r.error = Status();
  }
  return Status::Ok();
}

Status SeenFilter::InsertKeysIfNew(std::span<const std::string_view> keys,
                                   std::vector<uint8_t>* is_new) {
  Scratch& s = ThreadScratch();
  s.hashes.clear();
  for (std::string_view key : keys) s.hashes.push_back(HashKey(key));
  bool* flags = s.IsNew(keys.size());
  URLSIEVE_RETURN_IF_ERROR(InsertHashed(keys, s.hashes, flags));
  is_new->assign(flags, flags + keys.size());
  return Status::Ok();
}

Status SeenFilter::InsertHashed(std::span<const std::string_view> keys,
                                std::span<const KeyHash> hashes, bool* is_new) {
  if (store_ == nullptr) {
    std::shared_lock lock(mu_);
    bloom_->InsertIfNewBatch(hashes, is_new);
    if (delta_log_ != nullptr) delta_log_->Record(hashes, is_new);
    return Status::Ok();
  }
  std::unique_lock lock(mu_);
  return InsertExactLocked(keys, hashes, is_new);
}

Status SeenFilter::InsertExactLocked(std::span<const std::string_view> keys,
                                     std::span<const KeyHash> hashes, bool* is_new) {
  bloom_->InsertIfNewBatch(hashes, is_new);
  entries_.clear();
  uint64_t maybes = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    entries_.push_back({hashes[i].low, keys[i], /*maybe_present=*/!is_new[i]});
    maybes += is_new[i] ? 0 : 1;
  }
  const bool own_transaction = !options_.checkpointed;
  if (own_transaction) URLSIEVE_RETURN_IF_ERROR(db_->Begin());
  Status status;
  if (own_transaction && snapshot_current_) {
    // Rows are about to be committed that bloom.snap lacks: retire its generation in the same
    // transaction, so that a crash before the next Save rebuilds the filter from the rows.
    status = WriteMeta("generation", std::to_string(generation_ + 1));
  }
  if (status.ok()) status = store_->InsertIfAbsent(entries_, &inserted_);
  if (status.ok() && own_transaction) status = db_->Commit();
  if (!status.ok()) {
    // The Bloom bits already set are harmless: those keys now look "maybe seen" and the store,
    // which lacks them, will call them new.
    if (own_transaction) db_->Rollback();
    return status;
  }
  if (own_transaction && snapshot_current_) {
    ++generation_;
    snapshot_current_ = false;
  }
  uint64_t false_positives = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    false_positives += (!is_new[i] && inserted_[i]) ? 1 : 0;
    is_new[i] = inserted_[i] != 0;
  }
  // Every key the store now holds must stay in the Bloom filter, false positives included.
  delta_log_->Record(hashes, is_new);
  maybe_lookups_ += maybes;
  false_positives_ += false_positives;
  return Status::Ok();
}

Result<bool> SeenFilter::Contains(std::string_view url) const {
  std::string key;
  URLSIEVE_RETURN_IF_ERROR(canonicalizer_.CanonicalizeTo(url, &key));
  const KeyHash hash = HashKey(key);
  if (!bloom_->MayContain(hash)) return false;
  if (store_ == nullptr) return true;
  std::unique_lock lock(mu_);
  return store_->Contains(hash.low, key);
}

SeenStats SeenFilter::Stats() const {
  SeenStats s;
  s.capacity = options_.capacity;
  s.fp_rate = options_.fp_rate;
  s.exact = store_ != nullptr;
  {
    std::shared_lock lock(mu_);
    s.generation = generation_;
    if (store_ != nullptr) s.stored_keys = store_->rows();
  }
  const BloomStats b = bloom_->Stats();
  s.bloom_inserted = b.inserted;
  s.bloom_capacity = b.capacity;
  s.bloom_layers = b.layers;
  s.bloom_bytes = b.bytes;
  s.bloom_fill_ratio = b.fill_ratio;
  s.bloom_expected_fp_rate = b.expected_fp_rate;
  s.maybe_lookups = maybe_lookups_;
  s.false_positives = false_positives_;
  return s;
}

Status SeenFilter::Save() {
  if (db_ == nullptr) return Status::Ok();
  return Checkpoint();
}

Status SeenFilter::Checkpoint(const std::function<Status(SqliteDb&)>& write_more) {
  if (db_ == nullptr) return Status::FailedPrecondition("an in-memory SeenFilter has no state");
  std::unique_lock lock(mu_);
  return CheckpointLocked(write_more);
}

Status SeenFilter::CheckpointLocked(const std::function<Status(SqliteDb&)>& write_more) {
  if (!options_.checkpointed) URLSIEVE_RETURN_IF_ERROR(db_->Begin());
  const uint64_t generation = generation_ + 1;
  Status status = write_more ? write_more(*db_) : Status::Ok();
  if (status.ok()) status = WriteMeta("generation", std::to_string(generation));
  if (status.ok()) status = WriteMeta("maybe_lookups", std::to_string(maybe_lookups_.load()));
  if (status.ok()) status = WriteMeta("false_positives", std::to_string(false_positives_.load()));
  // Usually the keys new since the last checkpoint go to the delta log; now and then (see
  // bloom_delta_log.h) the whole filter to a snapshot. Record or snapshot, then commit, then (a
  // snapshot) rename (see the header): whichever step a crash interrupts, the next open finds a
  // Bloom state that matches the committed generation, or rebuilds/reports it.
  const bool full_snapshot = delta_log_->NeedsSnapshot(generation);
  if (status.ok()) {
    status = WriteMeta(BloomDeltaLog::kMetaKey, full_snapshot
                                                    ? BloomDeltaLog::MetaAfterSnapshot(generation)
                                                    : delta_log_->MetaAfterAppend());
  }
  if (status.ok()) {
    status = full_snapshot ? bloom_->Save(NextSnapshotPath(), generation)
                           : delta_log_->Append(generation);
  }
  if (status.ok()) status = db_->Commit();
  if (!status.ok()) {
    // Standalone: nothing of ours is lost by rolling back (batches committed on their own). In
    // checkpointed mode the transaction stays open, with its rows, for the next attempt.
    if (!options_.checkpointed) db_->Rollback();
    return status;
  }
  generation_ = generation;
  Status renamed;
  if (full_snapshot) {
    std::error_code ec;
    std::filesystem::rename(NextSnapshotPath(), SnapshotPath(), ec);
    // Until the rename is done the log must not extend the new snapshot: its chain still ends
    // before this generation, so the next checkpoint writes (and renames) a full snapshot again.
    // (Committed, bloom.snap.next is promoted by the next open anyway.)
    if (ec) {
      renamed = Status::IoError("rename " + NextSnapshotPath() + ": " + ec.message());
    } else {
      delta_log_->SnapshotCommitted(generation, *bloom_);
    }
  } else {
    delta_log_->AppendCommitted();
  }
  snapshot_current_ = true;
  // The commit happened: the next transaction starts whatever the rename did.
  if (options_.checkpointed) URLSIEVE_RETURN_IF_ERROR(db_->Begin());
  return renamed;
}

}  // namespace urlsieve
