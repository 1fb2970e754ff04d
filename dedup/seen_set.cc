#include "dedup/seen_set.h"

#include <memory>

#include "dedup/bloom/key_hash.h"

namespace urlsieve {
namespace {

// Per-thread buffers of InsertKeysIfNew, so that a steady stream of batches allocates nothing.
struct KeyScratch {
  std::vector<KeyHash> hashes;
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

KeyScratch& ThreadKeyScratch() {
  thread_local KeyScratch scratch;
  return scratch;
}

}  // namespace

KeyHash SeenSet::Hash(std::string_view key) { return HashKey(key); }

Result<bool> SeenSet::InsertHashedKeyIfNew(std::string_view key, const KeyHash& hash) {
  bool is_new = false;
  URLSIEVE_RETURN_IF_ERROR(InsertHashedIfNew({&key, 1}, {&hash, 1}, {&is_new, 1}));
  return is_new;
}

Status SeenSet::InsertKeysIfNew(std::span<const std::string_view> keys,
                                std::vector<uint8_t>* is_new) {
  KeyScratch& s = ThreadKeyScratch();
  s.hashes.clear();
  for (std::string_view key : keys) s.hashes.push_back(HashKey(key));
  bool* flags = s.IsNew(keys.size());
  URLSIEVE_RETURN_IF_ERROR(InsertHashedIfNew(keys, s.hashes, {flags, keys.size()}));
  is_new->assign(flags, flags + keys.size());
  return Status::Ok();
}

Status SeenSet::ForgetHashed(std::span<const std::string_view> keys,
                             std::span<const KeyHash> hashes, std::span<bool> forgotten) {
  (void)keys;
  (void)hashes;
  (void)forgotten;
  return Status::Unsupported(
      "this seen set cannot forget a key: a plain Bloom filter cannot delete one; open the set "
      "in exact mode (--exact) or with a counting filter (--deletable)");
}

}  // namespace urlsieve
