#include "frontier/url_queue.h"

#include <cassert>

namespace urlsieve {
namespace {

void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

uint64_t GetVarint(const char*& p) {
  uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    const auto byte = static_cast<unsigned char>(*p++);
    v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (byte < 0x80) return v;
  }
}

}  // namespace

void UrlQueue::Push(const QueuedUrl& url) {
  PutVarint(&buf_, url.id);
  PutVarint(&buf_, url.origin);
  PutVarint(&buf_, uint64_t{url.depth} << 1 | (url.sitemap ? 1 : 0));
  PutVarint(&buf_, url.retries);
  PutVarint(&buf_, url.parent);
  PutVarint(&buf_, url.rest.size());
  buf_.append(url.rest);
  ++count_;
}

QueuedUrl UrlQueue::Front() const {
  assert(count_ > 0);
  const char* p = buf_.data() + head_;
  QueuedUrl url;
  url.id = GetVarint(p);
  url.origin = static_cast<uint32_t>(GetVarint(p));
  const uint64_t depth_and_kind = GetVarint(p);
  url.depth = static_cast<uint32_t>(depth_and_kind >> 1);
  url.sitemap = (depth_and_kind & 1) != 0;
  url.retries = static_cast<uint32_t>(GetVarint(p));
  url.parent = static_cast<uint32_t>(GetVarint(p));
  const size_t length = GetVarint(p);
  url.rest = std::string_view(p, length);
  return url;
}

void UrlQueue::Pop() {
  const QueuedUrl front = Front();
  head_ = static_cast<uint32_t>(front.rest.data() + front.rest.size() - buf_.data());
  if (--count_ == 0) {
    Clear();
  } else if (head_ > buf_.size() / 2 && head_ >= 64) {
    buf_.erase(0, head_);
    head_ = 0;
  }
}

void UrlQueue::Clear() {
  // Give back big buffers: a drained key may stay idle for the rest of the crawl.
  if (buf_.capacity() > 256) {
    std::string().swap(buf_);
  } else {
    buf_.clear();
  }
  head_ = 0;
  count_ = 0;
}

}  // namespace urlsieve
