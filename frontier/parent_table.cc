#include "frontier/parent_table.h"

#include <cassert>

namespace urlsieve {
namespace {

// Heap bytes of a std::string beyond its inline (SSO) buffer.
size_t HeapBytes(const std::string& s) { return s.capacity() > 15 ? s.capacity() + 1 : 0; }

}  // namespace

uint32_t ParentTable::Ref(std::string_view url) {
  if (url.empty()) return 0;
  // The links of one page are pushed one after another: skip the hash for them.
  if (last_ != 0 && *slots_[last_].url == url) {
    ++slots_[last_].refs;
    return last_;
  }
  thread_local std::string lookup;  // no heterogeneous lookup without a transparent hash
  lookup.assign(url);
  auto it = ids_.find(lookup);
  if (it == ids_.end()) {
    uint32_t id;
    if (!free_.empty()) {
      id = free_.back();
      free_.pop_back();
    } else {
      id = static_cast<uint32_t>(slots_.size());
      slots_.emplace_back();
    }
    it = ids_.emplace(lookup, id).first;
    slots_[id].url = &it->first;
    string_bytes_ += HeapBytes(it->first);
  }
  last_ = it->second;
  ++slots_[last_].refs;
  return last_;
}

void ParentTable::Unref(uint32_t id) {
  if (id == 0) return;
  assert(id < slots_.size() && slots_[id].refs > 0);
  Slot& slot = slots_[id];
  if (--slot.refs > 0) return;
  string_bytes_ -= HeapBytes(*slot.url);
  ids_.erase(ids_.find(*slot.url));
  slot.url = nullptr;
  free_.push_back(id);
  if (last_ == id) last_ = 0;
}

std::string_view ParentTable::Get(uint32_t id) const {
  if (id == 0) return {};
  assert(id < slots_.size() && slots_[id].url != nullptr);
  return *slots_[id].url;
}

size_t ParentTable::memory_bytes() const {
  // A map node holds the key, the id, the next pointer and the cached hash (libstdc++), plus
  // malloc's header; a bucket is one pointer.
  constexpr size_t kNodeBytes = sizeof(std::string) + 3 * sizeof(void*) + 8;
  return ids_.size() * kNodeBytes + ids_.bucket_count() * sizeof(void*) + string_bytes_ +
         slots_.capacity() * sizeof(Slot) + free_.capacity() * sizeof(uint32_t);
}

}  // namespace urlsieve
