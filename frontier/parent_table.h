// ParentTable: the frontier's interned parent URLs (the page that linked to a pending URL), each
// with a reference count.
//
// Why: a frontier holds up to ~1e7 pending URLs and a page typically has 10–100 children, so
// storing the parent string with every URL would roughly double the frontier's RAM. Instead each
// queued or spilled URL carries a small id (one to three varint bytes); the string is stored once
// and freed when the last URL referring to it is handed out or rejected. Freed ids are reused so
// they stay small.
//
// Thread-safety: none; the owning Frontier guards it.
#ifndef URLSIEVE_FRONTIER_PARENT_TABLE_H_
#define URLSIEVE_FRONTIER_PARENT_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace urlsieve {

class ParentTable {
 public:
  // Takes a reference to `url` and returns its id; "" → 0 (no parent, not counted).
  uint32_t Ref(std::string_view url);
  // Drops a reference taken by Ref; the entry is freed at zero. Id 0 is ignored.
  void Unref(uint32_t id);
  // The URL of a live id; "" for 0.
  std::string_view Get(uint32_t id) const;
  // Interned parents (live ids).
  size_t size() const { return ids_.size(); }
  // Approximate heap bytes held.
  size_t memory_bytes() const;

 private:
  struct Slot {
    const std::string* url = nullptr;  // the key in ids_ (node-based: stable); null when free
    uint32_t refs = 0;
  };

  std::unordered_map<std::string, uint32_t> ids_;
  std::vector<Slot> slots_{1};  // slots_[id]; slot 0 is "no parent"
  std::vector<uint32_t> free_;
  uint32_t last_ = 0;        // the last id Ref returned: siblings are usually pushed together
  size_t string_bytes_ = 0;  // heap bytes of the interned strings
};

}  // namespace urlsieve

#endif  // URLSIEVE_FRONTIER_PARENT_TABLE_H_
