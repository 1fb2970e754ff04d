#include "dedup/bloom/bloom_snapshot.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <vector>

#include "base/file_io.h"

namespace urlsieve {
namespace {

constexpr char kMagic[8] = {'U', 'R', 'L', 'S', 'V', 'B', 'L', 'M'};
constexpr std::string_view kHashId = "xxh3-128";
constexpr size_t kFixedHeaderBytes = 128;
constexpr size_t kLayerRecordBytes = 64;
constexpr size_t kHeaderChecksumOffset = 120;
constexpr uint32_t kMaxSnapshotLayers = 64;
constexpr size_t kBlockBytes = kBloomBlockBits / 8;
constexpr size_t kWordsPerBlock = BlockedBloomFilter::kWordsPerBlock;
constexpr size_t kChunkWords = size_t{1} << 16;  // 512 KiB of bits per write
// ReadAll's Corruption text when the snapshot ends early (its size was checked: it shrank).
constexpr std::string_view kTruncated = "truncated bloom snapshot";

uint64_t ToLittle(uint64_t v) {
  return std::endian::native == std::endian::little ? v : __builtin_bswap64(v);
}

void PutDouble(char* p, double v) { Put64(p, std::bit_cast<uint64_t>(v)); }
double GetDouble(const char* p) { return std::bit_cast<double>(Get64(p)); }

uint64_t HeaderChecksum(std::string header) {
  std::memset(header.data() + kHeaderChecksumOffset, 0, 8);
  return XXH3_64bits(header.data(), header.size());
}

// Streams one layer's words (read atomically: inserts may be running) to `fd` at `offset`, with
// the blocks' lock bits cleared, and returns the XXH3-64 of what was written.
Result<uint64_t> WriteLayerWords(int fd, std::span<const uint64_t> words, size_t words_per_block,
                                 uint64_t offset, const std::string& path) {
  std::vector<uint64_t> buffer(std::min(words.size(), kChunkWords));
  XXH3_state_t* state = XXH3_createState();
  if (state == nullptr) return Status::IoError("cannot allocate a hash state");
  XXH3_64bits_reset(state);
  Status status;
  for (size_t start = 0; start < words.size() && status.ok(); start += buffer.size()) {
    const size_t count = std::min(buffer.size(), words.size() - start);
    for (size_t i = 0; i < count; ++i) {
      uint64_t w = std::atomic_ref<uint64_t>(const_cast<uint64_t&>(words[start + i]))
                       .load(std::memory_order_relaxed);
      if ((start + i) % words_per_block == 0) w &= ~uint64_t{1};  // the block's lock
      buffer[i] = ToLittle(w);
    }
    const size_t bytes = count * sizeof(uint64_t);
    XXH3_64bits_update(state, buffer.data(), bytes);
    status = WriteAll(fd, reinterpret_cast<const char*>(buffer.data()), bytes,
                      offset + start * sizeof(uint64_t), path);
  }
  const uint64_t checksum = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  if (!status.ok()) return status;
  return checksum;
}

Status WriteToTemp(int fd, const std::string& tmp, const BloomSnapshotMeta& meta,
                   std::span<const BloomSnapshotLayerView> layers) {
  const size_t header_bytes = kFixedHeaderBytes + kLayerRecordBytes * layers.size();
  std::string header(header_bytes, '\0');
  uint64_t offset = header_bytes;
  uint64_t total_inserted = 0;
  for (size_t i = 0; i < layers.size(); ++i) {
    const BloomSnapshotLayerView& layer = layers[i];
    const bool counting = layer.counting != nullptr;
    if (counting != (meta.counter_bits != 0)) {
      return Status::InvalidArgument("a bloom snapshot's layers must all be plain or all counting");
    }
    const BloomLayout& layout = counting ? layer.counting->layout() : layer.filter->layout();
    auto checksum = counting
                        ? WriteLayerWords(fd, layer.counting->words(),
                                          CountingBlockedBloomFilter::kWordsPerBlock, offset, tmp)
                        : WriteLayerWords(fd, layer.filter->words(), kWordsPerBlock, offset, tmp);
    if (!checksum.ok()) return checksum.status();
    char* rec = header.data() + kFixedHeaderBytes + kLayerRecordBytes * i;
    Put64(rec, layer.capacity);
    PutDouble(rec + 8, layer.fp_rate);
    Put64(rec + 16, layer.inserted);
    Put64(rec + 24, layout.num_blocks);
    Put32(rec + 32, layout.bits_per_line);
    Put32(rec + 36, layout.lines_per_key);
    Put64(rec + 40, offset);
    Put64(rec + 48, *checksum);
    offset += counting ? CountingBlockedBloomFilter::BytesOf(layout) : layout.bytes();
    total_inserted += layer.inserted;
  }
  char* h = header.data();
  std::memcpy(h, kMagic, sizeof(kMagic));
  Put32(h + 8, meta.counter_bits != 0 ? 3 : 2);
  Put32(h + 12, static_cast<uint32_t>(header_bytes));
  std::memcpy(h + 16, kHashId.data(), kHashId.size());
  Put32(h + 32, kBloomBlockBits);
  Put32(h + 36, static_cast<uint32_t>(layers.size()));
  Put64(h + 40, meta.generation);
  Put64(h + 48, meta.base_capacity);
  PutDouble(h + 56, meta.fp_rate);
  PutDouble(h + 64, meta.first_layer_share);
  PutDouble(h + 72, meta.tightening);
  Put64(h + 80, total_inserted);
  std::memcpy(h + 88, meta.identity.bytes.data(), meta.identity.bytes.size());
  Put32(h + 104, meta.counter_bits);
  Put64(h + kHeaderChecksumOffset, HeaderChecksum(header));
  URLSIEVE_RETURN_IF_ERROR(WriteAll(fd, header.data(), header.size(), 0, tmp));
  if (::fsync(fd) != 0) return Status::IoError(ErrnoMessage("cannot fsync", tmp));
  return Status::Ok();
}

// The snapshot being read: its descriptor, its path for messages and its size (checked once).
struct SnapshotFile {
  int fd;
  const std::string& path;
  uint64_t size;
};

// Magic and version first: a foreign or newer file gets that diagnosis, not "bad checksum".
// `head` bytes of `fixed` were read.
Status CheckMagicAndVersion(const std::string& fixed, size_t head, const std::string& path) {
  if (head < 12 || std::memcmp(fixed.data(), kMagic, sizeof(kMagic)) != 0) {
    return Status::Corruption(path + ": not a urlsieve bloom snapshot (bad magic)");
  }
  const uint32_t version = Get32(fixed.data() + 8);
  if (version > kBloomSnapshotVersion) {
    return Status::Unsupported(path + ": bloom snapshot format version " + std::to_string(version) +
                               " is newer than this program's " +
                               std::to_string(kBloomSnapshotVersion));
  }
  if (version == 0) return Status::Corruption(path + ": bloom snapshot version 0");
  if (head < kFixedHeaderBytes) return Status::Corruption(path + ": truncated bloom snapshot");
  return Status::Ok();
}

// The checks of a whole header (fixed part and layer records) once its size is known good.
Status CheckHeaderContents(const std::string& header, const std::string& path) {
  const char* h = header.data();
  if (Get64(h + kHeaderChecksumOffset) != HeaderChecksum(header)) {
    return Status::Corruption(path + ": bloom snapshot header checksum mismatch");
  }
  const std::string_view hash_id(h + 16, ::strnlen(h + 16, 16));
  if (hash_id != kHashId) {
    return Status::Unsupported(path + ": bloom snapshot uses hash '" + std::string(hash_id) + "'");
  }
  if (Get32(h + 32) != kBloomBlockBits) {
    return Status::Unsupported(path + ": bloom snapshot block size is not 512 bits");
  }
  return Status::Ok();
}

// The fixed header and the layer records, checked: their size is 128 + 64 · layer count.
Result<std::string> ReadHeader(const SnapshotFile& file) {
  const std::string& path = file.path;
  std::string fixed(kFixedHeaderBytes, '\0');
  const size_t head = static_cast<size_t>(std::min<uint64_t>(file.size, kFixedHeaderBytes));
  URLSIEVE_RETURN_IF_ERROR(ReadAll(file.fd, fixed.data(), head, 0, path, kTruncated));
  URLSIEVE_RETURN_IF_ERROR(CheckMagicAndVersion(fixed, head, path));
  const uint32_t header_bytes = Get32(fixed.data() + 12);
  const uint32_t layer_count = Get32(fixed.data() + 36);
  if (layer_count == 0 || layer_count > kMaxSnapshotLayers ||
      header_bytes != kFixedHeaderBytes + kLayerRecordBytes * layer_count) {
    return Status::Corruption(path + ": bad bloom snapshot header size");
  }
  if (file.size < header_bytes) return Status::Corruption(path + ": truncated bloom snapshot");
  std::string header = fixed;
  header.resize(header_bytes);
  URLSIEVE_RETURN_IF_ERROR(ReadAll(file.fd, header.data() + kFixedHeaderBytes,
                                   header_bytes - kFixedHeaderBytes, kFixedHeaderBytes, path,
                                   kTruncated));
  URLSIEVE_RETURN_IF_ERROR(CheckHeaderContents(header, path));
  return header;
}

// The filter's parameters from a checked header; the fields a version lacks stay zero.
Result<BloomSnapshotMeta> DecodeMeta(const std::string& header, const std::string& path) {
  const char* h = header.data();
  const uint32_t version = Get32(h + 8);
  BloomSnapshotMeta meta{Get64(h + 48),     GetDouble(h + 56), GetDouble(h + 64),
                         GetDouble(h + 72), Get64(h + 40),     StateIdentity()};
  if (version >= 2) std::memcpy(meta.identity.bytes.data(), h + 88, 16);
  if (version >= 3) {
    meta.counter_bits = Get32(h + 104);
    if (meta.counter_bits != kBloomSnapshotCounterBits) {
      return Status::Unsupported(path + ": bloom snapshot with " +
                                 std::to_string(meta.counter_bits) +
                                 "-bit counters (this build counts in 4 bits)");
    }
  }
  return meta;
}

// The layout a layer record gives.
BloomLayout LayoutOf(const char* rec) {
  return BloomLayout{Get64(rec + 24), Get32(rec + 32), Get32(rec + 36)};
}

// The byte size of layer `i`'s array, once its record `rec` places it at `offset` and inside
// the file.
Result<uint64_t> LayerBytes(const SnapshotFile& file, const char* rec, uint32_t i, bool counting,
                            uint64_t offset) {
  const std::string& path = file.path;
  const BloomLayout layout = LayoutOf(rec);
  if (Get64(rec + 40) != offset || layout.num_blocks == 0 ||
      layout.num_blocks > (file.size - offset) / kBlockBytes) {
    return Status::Corruption(path + ": bloom snapshot layer " + std::to_string(i) +
                              " lies outside the file (truncated?)");
  }
  const uint64_t layer_bytes =
      counting ? CountingBlockedBloomFilter::BytesOf(layout) : layout.bytes();
  if (counting && layout.num_blocks > (file.size - offset) / (layer_bytes / layout.num_blocks)) {
    return Status::Corruption(path + ": bloom snapshot layer " + std::to_string(i) +
                              " lies outside the file (truncated?)");
  }
  return layer_bytes;
}

// An empty layer (plain or counting) of the layout record `rec` gives; a layout Create refuses
// is the file's fault: Corruption.
Result<BloomSnapshotLayer> CreateLayer(const SnapshotFile& file, const char* rec, uint32_t i,
                                       bool counting) {
  const BloomLayout layout = LayoutOf(rec);
  BloomSnapshotLayer layer;
  Status created;
  if (counting) {
    auto c = CountingBlockedBloomFilter::Create(layout);
    if (c.ok()) {
      layer.counting = std::move(c).value();
    } else {
      created = c.status();
    }
  } else {
    auto f = BlockedBloomFilter::Create(layout);
    if (f.ok()) {
      layer.filter = std::move(f).value();
    } else {
      created = f.status();
    }
  }
  if (!created.ok()) {
    if (created.code() == StatusCode::kInvalidArgument) {
      return Status::Corruption(file.path + ": bloom snapshot layer " + std::to_string(i) + ": " +
                                created.message());
    }
    return created;
  }
  return layer;
}

// Fills `words` from the file at `offset`, checks them against the record's checksum, and puts
// them in host order with the blocks' lock bits cleared.
Status ReadLayerWords(const SnapshotFile& file, const char* rec, uint32_t i,
                      std::span<uint64_t> words, size_t words_per_block, uint64_t layer_bytes,
                      uint64_t offset) {
  URLSIEVE_RETURN_IF_ERROR(ReadAll(file.fd, reinterpret_cast<char*>(words.data()), layer_bytes,
                                   offset, file.path, kTruncated));
  if (XXH3_64bits(words.data(), layer_bytes) != Get64(rec + 48)) {
    return Status::Corruption(file.path + ": bloom snapshot layer " + std::to_string(i) +
                              " checksum mismatch");
  }
  for (size_t w = 0; w < words.size(); ++w) {
    words[w] = ToLittle(words[w]);
    if (w % words_per_block == 0) words[w] &= ~uint64_t{1};  // a lock bit is never data
  }
  return Status::Ok();
}

// Layer `i`, described by record `rec`, whose array is `layer_bytes` at `offset`.
Result<BloomSnapshotLayer> ReadLayer(const SnapshotFile& file, const char* rec, uint32_t i,
                                     bool counting, uint64_t layer_bytes, uint64_t offset) {
  auto layer = CreateLayer(file, rec, i, counting);
  if (!layer.ok()) return layer.status();
  const std::span<uint64_t> words = counting ? layer->counting->words() : layer->filter->words();
  const size_t words_per_block =
      counting ? CountingBlockedBloomFilter::kWordsPerBlock : kWordsPerBlock;
  URLSIEVE_RETURN_IF_ERROR(
      ReadLayerWords(file, rec, i, words, words_per_block, layer_bytes, offset));
  layer->capacity = Get64(rec);
  layer->fp_rate = GetDouble(rec + 8);
  layer->inserted = Get64(rec + 16);
  return layer;
}

// Every layer the checked `header` describes, back to back after it; the file must end with the
// last, and the layers' counts add up to the header's total.
Status ReadLayers(const SnapshotFile& file, const std::string& header, BloomSnapshot* snap) {
  const char* h = header.data();
  const uint32_t layer_count = Get32(h + 36);
  const bool counting = snap->meta.counter_bits != 0;
  uint64_t offset = header.size();
  uint64_t total_inserted = 0;
  for (uint32_t i = 0; i < layer_count; ++i) {
    const char* rec = h + kFixedHeaderBytes + kLayerRecordBytes * i;
    auto layer_bytes = LayerBytes(file, rec, i, counting, offset);
    if (!layer_bytes.ok()) return layer_bytes.status();
    auto layer = ReadLayer(file, rec, i, counting, *layer_bytes, offset);
    if (!layer.ok()) return layer.status();
    total_inserted += layer->inserted;
    snap->layers.push_back(std::move(layer).value());
    offset += *layer_bytes;
  }
  if (offset != file.size) {
    return Status::Corruption(file.path + ": bloom snapshot has trailing bytes");
  }
  if (total_inserted != Get64(h + 80)) {
    return Status::Corruption(file.path + ": bloom snapshot counts disagree");
  }
  return Status::Ok();
}

}  // namespace

Status WriteBloomSnapshot(const std::string& path, const BloomSnapshotMeta& meta,
                          std::span<const BloomSnapshotLayerView> layers) {
  if (layers.empty() || layers.size() > kMaxSnapshotLayers) {
    return Status::InvalidArgument("a bloom snapshot needs 1 to 64 layers");
  }
  // The temp file lives in the target's directory so that rename() is atomic (same file system).
  // Not mkstemp: its mode is 0600, and the snapshot must be readable like state.db (0666 less the
  // umask), e.g. by `urlsieve stats` run by another user.
  std::string tmp;
  int raw_fd = -1;
  for (int attempt = 0; attempt < 100 && raw_fd < 0; ++attempt) {
    auto random = StateIdentity::Random();
    if (!random.ok()) return random.status();
    tmp = path + ".tmp-" + random->ToHex().substr(0, 12);
    raw_fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (raw_fd < 0 && errno != EEXIST) break;
  }
  ScopedFd fd(raw_fd);
  if (fd.get() < 0) return Status::IoError(ErrnoMessage("cannot create", tmp));
  Status status = WriteToTemp(fd.get(), tmp, meta, layers);
  if (status.ok() && !fd.Close()) status = Status::IoError(ErrnoMessage("cannot close", tmp));
  if (status.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    status = Status::IoError(ErrnoMessage("cannot rename to", path));
  }
  if (!status.ok()) {
    ::unlink(tmp.c_str());
    return status;
  }
  // The rename is durable only once the directory entry is.
  return SyncDirectoryOf(path);
}

Result<BloomSnapshot> ReadBloomSnapshot(const std::string& path) {
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENOENT) return Status::NotFound(ErrnoMessage("cannot open", path));
    return Status::IoError(ErrnoMessage("cannot open", path));
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Status::IoError(ErrnoMessage("cannot stat", path));
  if (!S_ISREG(st.st_mode)) return Status::IoError(path + ": not a regular file");
  const SnapshotFile file{fd.get(), path, static_cast<uint64_t>(st.st_size)};

  auto header = ReadHeader(file);
  if (!header.ok()) return header.status();
  auto meta = DecodeMeta(*header, path);
  if (!meta.ok()) return meta.status();
  BloomSnapshot snap;
  snap.meta = std::move(meta).value();
  URLSIEVE_RETURN_IF_ERROR(ReadLayers(file, *header, &snap));
  return snap;
}

}  // namespace urlsieve
