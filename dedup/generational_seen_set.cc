#include "dedup/generational_seen_set.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "base/clock.h"
#include "base/sqlite_db.h"
#include "dedup/bloom/scalable_bloom_filter.h"
#include "dedup/state_dir.h"

namespace urlsieve {
namespace {

constexpr std::string_view kFilePrefix = "bloom-gen-";
constexpr std::string_view kFileSuffix = ".snap";
constexpr std::string_view kNoRebuild =
    "; restore the files of one checkpoint (a Bloom-only state cannot be rebuilt)";

// floor(a / b) for b > 0.
int64_t FloorDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

// Parses "<index>.<checkpoint>" (the middle of a generation file's name).
bool ParseIndexAndCheckpoint(std::string_view s, int64_t* index, uint64_t* checkpoint) {
  const size_t dot = s.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == s.size()) return false;
  const std::string index_text(s.substr(0, dot));
  const std::string checkpoint_text(s.substr(dot + 1));
  if (checkpoint_text[0] < '0' || checkpoint_text[0] > '9') return false;
  char* end = nullptr;
  errno = 0;
  *index = std::strtoll(index_text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *checkpoint = std::strtoull(checkpoint_text.c_str(), &end, 10);
  return errno == 0 && *end == '\0';
}

// The `bloom_generations` row: "<index>:<checkpoint>" separated by spaces.
std::string EncodeFiles(const std::map<int64_t, uint64_t>& files) {
  std::string out;
  for (const auto& [index, checkpoint] : files) {
    if (!out.empty()) out.push_back(' ');
    out.append(std::to_string(index)).append(":").append(std::to_string(checkpoint));
  }
  return out;
}

bool DecodeFiles(std::string_view row, std::map<int64_t, uint64_t>* files) {
  while (!row.empty()) {
    const size_t space = row.find(' ');
    std::string entry(row.substr(0, space));
    row = space == std::string_view::npos ? std::string_view() : row.substr(space + 1);
    const size_t colon = entry.find(':');
    if (colon == std::string::npos) return false;
    entry[colon] = '.';
    int64_t index = 0;
    uint64_t checkpoint = 0;
    if (!ParseIndexAndCheckpoint(entry, &index, &checkpoint)) return false;
    if (!files->emplace(index, checkpoint).second) return false;
  }
  return true;
}

// Per-thread buffers of the batch path.
struct BatchScratch {
  std::unique_ptr<bool[]> seen, maybe, fresh;
  size_t size = 0;
  std::vector<KeyHash> hashes;
  std::vector<uint32_t> positions;
  void Reserve(size_t n) {
    if (n <= size) return;
    seen.reset(new bool[n]);
    maybe.reset(new bool[n]);
    fresh.reset(new bool[n]);
    size = n;
  }
};

}  // namespace

struct GenerationalSeenSet::Generation {
  int64_t index = 0;
  std::unique_ptr<ScalableBloomFilter> bloom;
  // Got keys since its file (if any) was last written; cleared when a checkpoint that wrote it
  // commits. Set with a relaxed store under mu_ shared, read under mu_ exclusive.
  std::atomic<bool> dirty{false};

  void MarkDirty() {
    if (!dirty.load(std::memory_order_relaxed)) dirty.store(true, std::memory_order_relaxed);
  }
};

Status GenerationalSeenSet::CheckOptions(std::chrono::seconds revisit_after, uint32_t generations) {
  if (revisit_after.count() <= 0) {
    return Status::InvalidArgument("revisit_after must be positive for a generational seen set");
  }
  if (generations < 1 || generations > kMaxGenerations) {
    return Status::InvalidArgument("generations must be in [1, " + std::to_string(kMaxGenerations) +
                                   "], not " + std::to_string(generations));
  }
  return Status::Ok();
}

GenerationalSeenSet::GenerationalSeenSet(StateDir* dir, const GenerationalOptions& options,
                                         bool saves)
    : dir_(dir),
      options_(options),
      saves_(saves),
      read_only_(dir != nullptr && dir->read_only()),
      length_ms_(std::max<int64_t>(1, options.revisit_after.count() * 1000 / options.generations)),
      generation_capacity_(std::max<uint64_t>(
          1, (options.capacity + options.generations - 1) / options.generations)),
      generation_fp_rate_(options.fp_rate / (options.generations + 1)),
      clock_(options.clock) {}

GenerationalSeenSet::~GenerationalSeenSet() = default;

int64_t GenerationalSeenSet::ClockGeneration() const {
  const Clock::WallTime now =
      clock_ != nullptr ? clock_->WallNow() : std::chrono::system_clock::now();
  const int64_t ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  return FloorDiv(ms, length_ms_);
}

std::string GenerationalSeenSet::FileName(int64_t index, uint64_t checkpoint) {
  std::string name(kFilePrefix);
  name.append(std::to_string(index)).append(".").append(std::to_string(checkpoint));
  name.append(kFileSuffix);
  return name;
}

std::string GenerationalSeenSet::FilePath(int64_t index, uint64_t checkpoint) const {
  return dir_->FilePath(FileName(index, checkpoint));
}

Result<std::unique_ptr<ScalableBloomFilter>> GenerationalSeenSet::NewFilter() const {
  BloomOptions options;
  options.capacity = generation_capacity_;
  options.fp_rate = generation_fp_rate_;
  options.first_layer_share = kFirstLayerShare;
  return ScalableBloomFilter::Create(options);
}

Result<std::unique_ptr<GenerationalSeenSet>> GenerationalSeenSet::InMemory(
    const GenerationalOptions& options) {
  URLSIEVE_RETURN_IF_ERROR(CheckOptions(options.revisit_after, options.generations));
  if (options.capacity == 0) return Status::InvalidArgument("capacity must be positive");
  std::unique_ptr<GenerationalSeenSet> set(new GenerationalSeenSet(nullptr, options, true));
  std::unique_lock lock(set->mu_);
  URLSIEVE_RETURN_IF_ERROR(set->TurnLocked(set->ClockGeneration()));
  lock.unlock();
  return set;
}

Result<std::unique_ptr<GenerationalSeenSet>> GenerationalSeenSet::Open(
    StateDir* dir, const StateSeenSetOptions& set_options) {
  const StateParameters& p = dir->parameters();
  if (set_options.rebuild_bloom) {
    return Status::FailedPrecondition(dir->DbPath() +
                                      ": cannot rebuild the Bloom filter of a Bloom-only state "
                                      "(it has no exact store to rebuild it from)");
  }
  GenerationalOptions options;
  options.capacity = p.capacity;
  options.fp_rate = p.fp_rate;
  options.revisit_after = std::chrono::seconds(p.revisit_after_s);
  options.generations = p.generations;
  options.clock = set_options.clock;
  Status valid = CheckOptions(options.revisit_after, options.generations);
  if (!valid.ok()) return Status::Corruption(dir->DbPath() + ": " + valid.message());
  std::unique_ptr<GenerationalSeenSet> set(
      new GenerationalSeenSet(dir, options, set_options.saves));
  URLSIEVE_RETURN_IF_ERROR(set->Load());
  return set;
}

Status GenerationalSeenSet::Load() {
  const std::string db_path = dir_->DbPath();
  const uint64_t committed = dir_->generation();
  const std::optional<std::string> row = dir_->StoredMeta(kMetaKey);
  if (!row.has_value()) {
    if (committed > 0) {
      return Status::Corruption(db_path + " is at generation " + std::to_string(committed) +
                                " but lacks its '" + std::string(kMetaKey) +
                                "' row (the list of generation files)" + std::string(kNoRebuild));
    }
  } else if (!DecodeFiles(*row, &committed_files_)) {
    return Status::Corruption(db_path + ": unreadable '" + std::string(kMetaKey) + "' row \"" +
                              *row + "\"");
  }
  current_ = ClockGeneration();
  for (const auto& [index, checkpoint] : committed_files_) {
    if (checkpoint > committed) {
      return Status::Corruption(db_path + ": '" + std::string(kMetaKey) + "' names checkpoint " +
                                std::to_string(checkpoint) + " but the state is at generation " +
                                std::to_string(committed));
    }
    // A clock behind the newest generation (another machine's, or moved back): time stands still
    // at that generation until the clock catches up.
    current_ = std::max(current_, index);
  }
  const int64_t generations = options_.generations;
  for (const auto& [index, checkpoint] : committed_files_) {
    if (index < current_ - generations) continue;  // aged out: deleted after the next checkpoint
    const std::string path = FilePath(index, checkpoint);
    uint64_t file_checkpoint = 0;
    StateIdentity file_identity;
    auto loaded = ScalableBloomFilter::Load(path, &file_checkpoint, &file_identity);
    if (!loaded.ok()) {
      if (loaded.status().code() == StatusCode::kNotFound) {
        return Status::Corruption(path + " is missing but " + db_path + " lists it (generation " +
                                  std::to_string(index) + " as of checkpoint " +
                                  std::to_string(checkpoint) + ")" + std::string(kNoRebuild));
      }
      return Status(loaded.status().code(), loaded.status().message() + std::string(kNoRebuild));
    }
    URLSIEVE_RETURN_IF_ERROR(dir_->CheckIdentity(path, file_identity, file_checkpoint));
    if (file_checkpoint != checkpoint) {
      return Status::Corruption(path + " was written by checkpoint " +
                                std::to_string(file_checkpoint) + " but its name and " + db_path +
                                " say checkpoint " + std::to_string(checkpoint) +
                                ": they are not from one checkpoint" + std::string(kNoRebuild));
    }
    const BloomOptions& o = (*loaded)->options();
    if (o.capacity != generation_capacity_ || o.fp_rate != generation_fp_rate_ ||
        o.first_layer_share != kFirstLayerShare) {
      return Status::Corruption(path + " holds a filter for " + std::to_string(o.capacity) +
                                " keys at " + std::to_string(o.fp_rate) + ", but " + db_path +
                                "'s generations are sized for " +
                                std::to_string(generation_capacity_) + " keys at " +
                                std::to_string(generation_fp_rate_) + std::string(kNoRebuild));
    }
    auto generation = std::make_unique<Generation>();
    generation->index = index;
    generation->bloom = std::move(*loaded);
    generations_.push_back(std::move(generation));
  }
  if (generations_.empty() || generations_.back()->index != current_) {
    auto bloom = NewFilter();
    if (!bloom.ok()) return bloom.status();
    auto generation = std::make_unique<Generation>();
    generation->index = current_;
    generation->bloom = std::move(*bloom);
    generations_.push_back(std::move(generation));
  }
  return read_only_ ? Status::Ok() : RemoveStrayFiles();
}

// Files of the generation pattern that the committed list does not name: written by a checkpoint
// that never committed, or superseded by one whose clean-up did not run.
Status GenerationalSeenSet::RemoveStrayFiles() const {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> stray;
  for (fs::directory_iterator it(dir_->path(), ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= kFilePrefix.size() + kFileSuffix.size() || !name.starts_with(kFilePrefix) ||
        !name.ends_with(kFileSuffix)) {
      continue;
    }
    int64_t index = 0;
    uint64_t checkpoint = 0;
    const std::string_view middle = std::string_view(name).substr(
        kFilePrefix.size(), name.size() - kFilePrefix.size() - kFileSuffix.size());
    if (!ParseIndexAndCheckpoint(middle, &index, &checkpoint)) continue;
    auto listed = committed_files_.find(index);
    if (listed == committed_files_.end() || listed->second != checkpoint)
      stray.push_back(it->path());
  }
  if (ec) return Status::IoError("listing " + dir_->path() + ": " + ec.message());
  for (const fs::path& path : stray) {
    fs::remove(path, ec);
    if (ec) return Status::IoError("removing " + path.string() + ": " + ec.message());
  }
  return Status::Ok();
}

Status GenerationalSeenSet::TurnLocked(int64_t now) {
  if (!generations_.empty() && now <= current_) return Status::Ok();
  auto bloom = NewFilter();
  if (!bloom.ok()) return bloom.status();
  current_ = now;
  const int64_t oldest_live = now - static_cast<int64_t>(options_.generations);
  std::erase_if(generations_,
                [&](const std::unique_ptr<Generation>& g) { return g->index < oldest_live; });
  auto generation = std::make_unique<Generation>();
  generation->index = now;
  generation->bloom = std::move(*bloom);
  generations_.push_back(std::move(generation));
  return Status::Ok();
}

bool GenerationalSeenSet::LiveLocked(int64_t index, int64_t now) const {
  return index >= std::max(now, current_) - static_cast<int64_t>(options_.generations);
}

Result<bool> GenerationalSeenSet::InsertHashedKeyIfNew(std::string_view, const KeyHash& hash) {
  if (read_only_) return dir_->ReadOnlyError();
  const int64_t now = ClockGeneration();
  std::shared_lock lock(mu_);
  if (now > current_) {
    lock.unlock();
    {
      std::unique_lock exclusive(mu_);
      URLSIEVE_RETURN_IF_ERROR(TurnLocked(now));
    }
    lock.lock();
  }
  // Newest first: a key seen recently is found sooner.
  for (size_t i = generations_.size() - 1; i-- > 0;) {
    if (generations_[i]->bloom->MayContain(hash)) return false;
  }
  Generation& current = *generations_.back();
  const bool is_new = current.bloom->InsertIfNew(hash);
  if (is_new) current.MarkDirty();
  return is_new;
}

Status GenerationalSeenSet::InsertHashedIfNew(std::span<const std::string_view>,
                                              std::span<const KeyHash> hashes,
                                              std::span<bool> is_new) {
  if (read_only_) return dir_->ReadOnlyError();
  const size_t n = hashes.size();
  if (n == 0) return Status::Ok();
  thread_local BatchScratch s;
  s.Reserve(n);
  const int64_t now = ClockGeneration();
  std::shared_lock lock(mu_);
  if (now > current_) {
    lock.unlock();
    {
      std::unique_lock exclusive(mu_);
      URLSIEVE_RETURN_IF_ERROR(TurnLocked(now));
    }
    lock.lock();
  }
  std::fill_n(s.seen.get(), n, false);
  for (size_t g = 0; g + 1 < generations_.size(); ++g) {
    generations_[g]->bloom->MayContainBatch(hashes, s.maybe.get());
    for (size_t i = 0; i < n; ++i) s.seen[i] |= s.maybe[i];
  }
  s.hashes.clear();
  s.positions.clear();
  for (size_t i = 0; i < n; ++i) {
    is_new[i] = false;
    if (!s.seen[i]) {
      s.hashes.push_back(hashes[i]);
      s.positions.push_back(static_cast<uint32_t>(i));
    }
  }
  if (s.hashes.empty()) return Status::Ok();
  Generation& current = *generations_.back();
  current.bloom->InsertIfNewBatch(s.hashes, s.fresh.get());
  bool any = false;
  for (size_t j = 0; j < s.hashes.size(); ++j) {
    is_new[s.positions[j]] = s.fresh[j];
    any |= s.fresh[j];
  }
  if (any) current.MarkDirty();
  return Status::Ok();
}

Result<bool> GenerationalSeenSet::ContainsHashed(std::string_view, const KeyHash& hash) const {
  const int64_t now = ClockGeneration();
  std::shared_lock lock(mu_);
  for (const auto& generation : generations_) {
    if (LiveLocked(generation->index, now) && generation->bloom->MayContain(hash)) return true;
  }
  return false;
}

StateIdentity GenerationalSeenSet::identity() const {
  return dir_ == nullptr ? StateIdentity() : dir_->identity();
}

SeenStats GenerationalSeenSet::Stats() const {
  SeenStats s;
  s.capacity = options_.capacity;
  s.fp_rate = options_.fp_rate;
  s.revisit_after_s = static_cast<uint64_t>(options_.revisit_after.count());
  s.generations = options_.generations;
  const int64_t now = ClockGeneration();
  std::shared_lock lock(mu_);
  if (dir_ != nullptr) {
    s.generation = dir_->generation();
    s.identity = dir_->identity();
  }
  double set_bits = 0;
  for (const auto& generation : generations_) {
    if (!LiveLocked(generation->index, now)) continue;
    const BloomStats b = generation->bloom->Stats();
    ++s.live_generations;
    s.bloom_inserted += b.inserted;
    s.bloom_capacity += b.capacity;
    s.bloom_layers += b.layers;
    s.bloom_bytes += b.bytes;
    set_bits += b.fill_ratio * static_cast<double>(b.bytes);
    // The union bound over the live generations (see the header).
    s.bloom_expected_fp_rate += b.expected_fp_rate;
  }
  if (s.bloom_bytes > 0) s.bloom_fill_ratio = set_bits / static_cast<double>(s.bloom_bytes);
  return s;
}

Status GenerationalSeenSet::Save() {
  if (dir_ == nullptr) return Status::Ok();
  if (read_only_) return dir_->ReadOnlyError();
  if (!saves_) {
    return Status::FailedPrecondition(dir_->path() +
                                      ": this seen set is checkpointed by the state's owner");
  }
  std::unique_lock lock(mu_);
  return dir_->Checkpoint([this](SqliteDb&, uint64_t g) { return PrepareLocked(g); },
                          [this](uint64_t g) { return CommittedLocked(g); });
}

Status GenerationalSeenSet::PrepareCheckpoint(SqliteDb& db, uint64_t generation) {
  if (dir_ == nullptr) return Status::FailedPrecondition("an in-memory SeenFilter has no state");
  if (read_only_) return dir_->ReadOnlyError();
  if (&db != &dir_->db()) {
    return Status::InvalidArgument("a checkpoint of " + dir_->path() +
                                   " must be in its own state database");
  }
  std::unique_lock lock(mu_);
  return PrepareLocked(generation);
}

Status GenerationalSeenSet::CheckpointCommitted(uint64_t generation) {
  if (dir_ == nullptr) return Status::FailedPrecondition("an in-memory SeenFilter has no state");
  std::unique_lock lock(mu_);
  return CommittedLocked(generation);
}

Status GenerationalSeenSet::PrepareLocked(uint64_t checkpoint) {
  // Generations that aged out since the last turn are left out of the list (and deleted once it
  // commits).
  URLSIEVE_RETURN_IF_ERROR(TurnLocked(ClockGeneration()));
  prepared_files_.clear();
  for (const auto& generation : generations_) {
    auto committed = committed_files_.find(generation->index);
    if (generation->dirty.load(std::memory_order_relaxed)) {
      // A new file under this checkpoint's number: no committed file is overwritten.
      URLSIEVE_RETURN_IF_ERROR(generation->bloom->Save(FilePath(generation->index, checkpoint),
                                                       checkpoint, dir_->identity()));
      prepared_files_[generation->index] = checkpoint;
    } else if (committed != committed_files_.end()) {
      prepared_files_[generation->index] = committed->second;
    }
    // else: a generation that never held a key has no file.
  }
  return dir_->WriteMeta(kMetaKey, EncodeFiles(prepared_files_));
}

Status GenerationalSeenSet::CommittedLocked(uint64_t checkpoint) {
  Status result;
  for (const auto& [index, written] : committed_files_) {
    auto kept = prepared_files_.find(index);
    if (kept != prepared_files_.end() && kept->second == written) continue;
    std::error_code ec;
    std::filesystem::remove(FilePath(index, written), ec);
    // Left behind, it is a stray file the next open deletes.
    if (ec && result.ok()) {
      result = Status::IoError("removing " + FilePath(index, written) + ": " + ec.message());
    }
  }
  committed_files_ = prepared_files_;
  for (const auto& generation : generations_) {
    auto written = prepared_files_.find(generation->index);
    if (written != prepared_files_.end() && written->second == checkpoint) {
      generation->dirty.store(false, std::memory_order_relaxed);
    }
  }
  return result;
}

}  // namespace urlsieve
