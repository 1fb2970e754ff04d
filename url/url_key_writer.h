// KeyWriter: writes a canonical key into a std::string through a raw pointer, for the
// canonicalizer (url_canonicalizer.cc) and its opt-in rules (url_canonicalize_rules.cc). The
// caller reserves room for the worst case (every input byte becoming "%XX") so the inner loops
// carry no capacity checks. Inline: it is the canonicalizer's inner loop.
//
// Thread-safety: a KeyWriter is used by one thread at a time.
#ifndef URLSIEVE_URL_URL_KEY_WRITER_H_
#define URLSIEVE_URL_URL_KEY_WRITER_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "url/url_chars.h"

namespace urlsieve {

class KeyWriter {
 public:
  explicit KeyWriter(std::string* key) : key_(key) {}
  void Reserve(size_t extra) {
    if (pos_ + extra > key_->size()) key_->resize(std::max(pos_ + extra, 2 * key_->size()));
    d_ = key_->data();
  }
  void Put(char c) { d_[pos_++] = c; }
  void Put(std::string_view s) {
    std::memcpy(d_ + pos_, s.data(), s.size());
    pos_ += s.size();
  }

  // The inner loop of the path and the query: copies s[i..] up to the first byte flagged `end`,
  // keeping bytes flagged `literal`, normalizing percent-encoding (RFC 3986 §6.2.2.1-2: a triplet
  // naming an unreserved character is decoded, any other gets uppercase hex, a '%' starting no
  // triplet becomes "%25") and encoding every other byte, UTF-8 included (§2.1, §2.5).
  // Returns the index of the end byte, or s.size(). Works on locals: stores through a char*
  // could alias the members, which would force a reload per byte.
  size_t PutComponent(std::string_view s, size_t i, uint16_t literal, uint16_t end) {
    const char* p = s.data();
    const size_t n = s.size();
    char* d = d_;
    size_t o = pos_;
    while (i < n) {
      const char c = p[i];
      const uint16_t f = url_chars::kTable[static_cast<uint8_t>(c)];
      if (f & literal) {
        d[o++] = c;
        ++i;
        continue;
      }
      if (f & end) break;
      uint8_t byte = static_cast<uint8_t>(c);
      ++i;
      if (c == '%') {
        if (i + 1 < n && url_chars::Is(p[i], url_chars::kHexDigit) &&
            url_chars::Is(p[i + 1], url_chars::kHexDigit)) {
          byte =
              static_cast<uint8_t>(url_chars::HexValue(p[i]) * 16 + url_chars::HexValue(p[i + 1]));
          i += 2;
          if (url_chars::Is(static_cast<char>(byte), url_chars::kUnreserved)) {
            d[o++] = static_cast<char>(byte);
            continue;
          }
        }
      }
      d[o] = '%';
      d[o + 1] = url_chars::kUpperHex[byte >> 4];
      d[o + 2] = url_chars::kUpperHex[byte & 15];
      o += 3;
    }
    pos_ = o;
    return i;
  }

  size_t pos() const { return pos_; }
  void set_pos(size_t p) { pos_ = p; }
  char* data() { return d_; }
  std::string_view View(size_t b, size_t e) const { return std::string_view(d_ + b, e - b); }

 private:
  std::string* key_;
  char* d_ = nullptr;
  size_t pos_ = 0;
};

}  // namespace urlsieve

#endif  // URLSIEVE_URL_URL_KEY_WRITER_H_
