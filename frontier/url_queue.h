// UrlQueue: the compact FIFO of pending URLs of one politeness key.
//
// A frontier may hold millions of pending URLs, so each is packed into one byte buffer as
// varint(id) varint(origin) varint(depth << 1 | sitemap) varint(retries) varint(parent)
// varint(length) bytes —
// typically the URL's path and query plus 6–10 bytes — instead of a node with a std::string. The
// parent (the page that linked to the URL) is an id into the frontier's ParentTable, not a string:
// siblings share one copy, so it costs a byte or three per URL. Popping advances a
// head offset; the consumed prefix is dropped once it is more than half of the buffer, so pushes
// and pops are amortized O(1) and the buffer never holds more than twice the live bytes.
//
// Thread-safety: none; the owning Frontier guards it.
#ifndef URLSIEVE_FRONTIER_URL_QUEUE_H_
#define URLSIEVE_FRONTIER_URL_QUEUE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace urlsieve {

struct QueuedUrl {
  uint64_t id = 0;      // the frontier's durable id of the URL
  uint32_t origin = 0;  // interned origin ("scheme://host[:port]")
  uint32_t depth = 0;
  uint32_t retries = 0;   // failed fetches so far
  std::string_view rest;  // the URL after its origin; valid until the queue is modified
  uint32_t parent = 0;    // interned parent URL (ParentTable id), 0 = none
  bool sitemap = false;   // a sitemap to fetch (Lease::Kind::kSitemap), not a page
};

class UrlQueue {
 public:
  void Push(const QueuedUrl& url);
  bool empty() const { return count_ == 0; }
  size_t size() const { return count_; }
  // The oldest URL; the queue must not be empty.
  QueuedUrl Front() const;
  void Pop();
  void Clear();
  // Heap bytes held by this queue.
  size_t allocated_bytes() const { return buf_.capacity(); }

 private:
  std::string buf_;
  uint32_t head_ = 0;  // offset of the oldest entry
  uint32_t count_ = 0;
};

}  // namespace urlsieve

#endif  // URLSIEVE_FRONTIER_URL_QUEUE_H_
