#include "base/encoding/text_decoder.h"

#include <iconv.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>

namespace urlsieve {
namespace {

constexpr std::string_view kReplacementUtf8 = "\xEF\xBF\xBD";  // U+FFFD
constexpr size_t kMaxEncodings = 64;  // room for AllEncodings(), checked at first use

enum class DecoderKind : uint8_t {
  kUtf8,
  kUtf16Be,
  kUtf16Le,
  kReplacement,
  kSingleByte,  // a table built from glibc (plus x-user-defined, built without it)
  kIconv,
};

DecoderKind KindOf(const TextEncoding& encoding) {
  const std::string_view name = encoding.name;
  if (name == "UTF-8") return DecoderKind::kUtf8;
  if (name == "UTF-16BE") return DecoderKind::kUtf16Be;
  if (name == "UTF-16LE") return DecoderKind::kUtf16Le;
  if (name == "replacement") return DecoderKind::kReplacement;
  // The Encoding Standard §9 "Legacy single-byte encodings", and x-user-defined (§14.5).
  if (name == "IBM866" || name.starts_with("ISO-8859-") || name.starts_with("KOI8-") ||
      name == "macintosh" || name.starts_with("windows-") || name == "x-mac-cyrillic" ||
      name == "x-user-defined") {
    return DecoderKind::kSingleByte;
  }
  return DecoderKind::kIconv;
}

// The index of `encoding` in AllEncodings(), or kMaxEncodings for one built elsewhere.
size_t IndexOf(const TextEncoding& encoding) {
  const std::span<const TextEncoding> all = AllEncodings();
  const TextEncoding* first = all.data();
  if (std::less<>()(&encoding, first) || !std::less<>()(&encoding, first + all.size())) {
    return kMaxEncodings;
  }
  const auto index = static_cast<size_t>(&encoding - first);
  return index < kMaxEncodings ? index : kMaxEncodings;
}

// The name glibc decodes `encoding` with: GBK's decoder is gb18030's (Encoding Standard §10.1.1:
// a GBK page may use gb18030's four-byte sequences and 0x80 = U+20AC).
std::string IconvDecoderName(const TextEncoding& encoding) {
  if (encoding.name == "GBK") return "GB18030";
  return std::string(encoding.iconv_name);
}

size_t AppendCodePoint(uint32_t cp, char* out) {
  if (cp < 0x80) {
    out[0] = static_cast<char>(cp);
    return 1;
  }
  if (cp < 0x800) {
    out[0] = static_cast<char>(0xC0 | (cp >> 6));
    out[1] = static_cast<char>(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = static_cast<char>(0xE0 | (cp >> 12));
    out[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out[2] = static_cast<char>(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = static_cast<char>(0xF0 | (cp >> 18));
  out[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
  out[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
  out[3] = static_cast<char>(0x80 | (cp & 0x3F));
  return 4;
}

// UTF-8 output with a byte budget: appends whole characters while they fit.
class BoundedOutput {
 public:
  BoundedOutput(DecodedText* text, size_t max_bytes) : text_(text), max_bytes_(max_bytes) {}

  // Appends `bytes` (valid UTF-8), or as many of its characters as fit; false once full.
  bool Append(std::string_view bytes) {
    if (text_->truncated) return false;
    const size_t room = max_bytes_ - text_->utf8.size();
    if (bytes.size() > room) {
      size_t cut = room;  // back to the start of the character that does not fit
      while (cut > 0 && (static_cast<unsigned char>(bytes[cut]) & 0xC0) == 0x80) --cut;
      text_->utf8.append(bytes.substr(0, cut));
      text_->truncated = true;
      return false;
    }
    text_->utf8.append(bytes);
    return true;
  }
  size_t max_bytes() const { return max_bytes_; }
  bool Replacement() {
    if (!Append(kReplacementUtf8)) return false;
    ++text_->replacements;
    return true;
  }
  bool CodePoint(uint32_t cp) {
    char buf[4];
    return Append(std::string_view(buf, AppendCodePoint(cp, buf)));
  }

 private:
  DecodedText* text_;
  size_t max_bytes_;
};

// The Encoding Standard's UTF-8 decoder (§8.1.1) on the sequence at p: its length when valid
// (*valid = true), else the length of its maximal subpart, which one U+FFFD replaces (at least 1).
size_t Utf8Sequence(const unsigned char* p, size_t left, bool* valid) {
  const unsigned char b = p[0];
  *valid = true;
  if (b < 0x80) return 1;
  size_t needed;
  unsigned char lower = 0x80, upper = 0xBF;
  if (b >= 0xC2 && b <= 0xDF) {
    needed = 1;
  } else if (b >= 0xE0 && b <= 0xEF) {
    needed = 2;
    if (b == 0xE0) lower = 0xA0;
    if (b == 0xED) upper = 0x9F;  // no surrogates
  } else if (b >= 0xF0 && b <= 0xF4) {
    needed = 3;
    if (b == 0xF0) lower = 0x90;
    if (b == 0xF4) upper = 0x8F;  // nothing past U+10FFFF
  } else {
    *valid = false;
    return 1;
  }
  for (size_t seen = 1; seen <= needed; ++seen) {
    if (seen == left || p[seen] < lower || p[seen] > upper) {
      *valid = false;  // cut off by the end, or a byte that does not continue it: not consumed
      return seen;
    }
    lower = 0x80;
    upper = 0xBF;
  }
  return needed + 1;
}

void DecodeUtf8(std::string_view bytes, BoundedOutput* out) {
  while (!bytes.empty()) {
    const size_t valid = ValidUtf8Prefix(bytes);
    if (!out->Append(bytes.substr(0, valid))) return;
    bytes.remove_prefix(valid);
    if (bytes.empty()) return;
    bool ok;
    const size_t bad =
        Utf8Sequence(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), &ok);
    if (!out->Replacement()) return;
    bytes.remove_prefix(bad);
  }
}

// The Encoding Standard's shared UTF-16 decoder (§14.2.1). Written straight into the string when
// the worst case (three bytes per code unit) fits the budget, else through `out`.
void DecodeUtf16(std::string_view bytes, bool big_endian, BoundedOutput* out, DecodedText* text) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t units = bytes.size() / 2;
  auto unit = [&](size_t i) -> uint32_t {
    return big_endian ? (p[2 * i] << 8) | p[2 * i + 1] : (p[2 * i + 1] << 8) | p[2 * i];
  };
  const size_t worst = units * 3 + kReplacementUtf8.size();
  const bool direct = worst <= out->max_bytes();
  std::string& s = text->utf8;
  if (direct) s.resize(worst);
  size_t used = 0;
  auto emit = [&](uint32_t cp) -> bool {
    if (!direct) return cp == 0xFFFD ? out->Replacement() : out->CodePoint(cp);
    if (cp == 0xFFFD) ++text->replacements;
    used += AppendCodePoint(cp, s.data() + used);
    return true;
  };
  bool ok = true;
  for (size_t i = 0; i < units && ok; ++i) {
    const uint32_t u = unit(i);
    if (u >= 0xD800 && u <= 0xDBFF && i + 1 < units && unit(i + 1) >= 0xDC00 &&
        unit(i + 1) <= 0xDFFF) {
      ok = emit(0x10000 + ((u - 0xD800) << 10) + (unit(i + 1) - 0xDC00));
      ++i;
    } else if (u >= 0xD800 && u <= 0xDFFF) {
      ok = emit(0xFFFD);  // a lone surrogate
    } else {
      ok = emit(u);
    }
  }
  if (ok && bytes.size() % 2 != 0) emit(0xFFFD);  // an odd last byte
  if (direct) s.resize(used);
}

// The bytes 0x80-0xFF of a single-byte encoding, each as its UTF-8 ("" = no character: U+FFFD).
struct SingleByteTable {
  struct Entry {
    uint8_t length = 0;
    char utf8[3] = {};
  };
  std::array<Entry, 128> high;
  Status status;  // not OK: glibc could not open the converter
};

constexpr uint32_t kUnmapped = 0xFFFFFFFF;

// What glibc maps one byte of `iconv_name` to, or kUnmapped.
uint32_t GlibcByte(iconv_t cd, unsigned char byte) {
  iconv(cd, nullptr, nullptr, nullptr, nullptr);
  char in = static_cast<char>(byte);
  char* in_ptr = &in;
  size_t in_left = 1;
  unsigned char out[16];
  char* out_ptr = reinterpret_cast<char*>(out);
  size_t out_left = sizeof(out);
  if (iconv(cd, &in_ptr, &in_left, &out_ptr, &out_left) == static_cast<size_t>(-1)) {
    return kUnmapped;
  }
  // Flushes a character held back for composition (glibc's CP1255 and CP1258 do that).
  if (iconv(cd, nullptr, nullptr, &out_ptr, &out_left) == static_cast<size_t>(-1)) {
    return kUnmapped;
  }
  if (sizeof(out) - out_left != 4) return kUnmapped;  // one UTF-32LE code point, no more
  return out[0] | (out[1] << 8) | (out[2] << 16) | (static_cast<uint32_t>(out[3]) << 24);
}

// Where the Encoding Standard's index (encodings.json's index-*.txt) differs from glibc.
uint32_t EncodingStandardByte(std::string_view name, unsigned char byte, uint32_t glibc) {
  // windows-874 and windows-125x map the bytes Microsoft left undefined in 0x80-0x9F to the C1
  // controls (index-windows-1252.txt: 0x81 = U+0081); glibc refuses them.
  if (name.starts_with("windows-") && glibc == kUnmapped && byte <= 0x9F) return byte;
  if (name == "windows-1255" && byte == 0xCA) return 0x05BA;    // HEBREW POINT HOLAM HASER FOR VAV
  if (name == "KOI8-U" && byte == 0xAE) return 0x045E;          // ў (glibc: box drawing)
  if (name == "KOI8-U" && byte == 0xBE) return 0x040E;          // Ў
  if (name == "x-mac-cyrillic" && byte == 0xFF) return 0x20AC;  // € (glibc: ¤, before Mac OS 9)
  if (name == "macintosh" && byte == 0xC6) return 0x2206;       // ∆ INCREMENT (glibc: Δ)
  if (name == "macintosh" && byte == 0xF0) return 0xF8FF;       // the Apple logo (glibc: U+E01E)
  return glibc;
}

void BuildSingleByteTable(const TextEncoding& encoding, SingleByteTable* table) {
  auto set = [&](unsigned char byte, uint32_t cp) {
    SingleByteTable::Entry& entry = table->high[byte - 0x80];
    if (cp == kUnmapped) return;
    entry.length = static_cast<uint8_t>(AppendCodePoint(cp, entry.utf8));
  };
  if (encoding.name == "x-user-defined") {  // §14.5: no glibc converter needed
    for (unsigned b = 0x80; b <= 0xFF; ++b) set(static_cast<unsigned char>(b), 0xF780 + b - 0x80);
    return;
  }
  const std::string name(encoding.iconv_name);
  iconv_t cd = iconv_open("UTF-32LE", name.c_str());
  if (cd == reinterpret_cast<iconv_t>(-1)) {
    table->status = Status::Unavailable("glibc iconv has no converter from " + name + " (for " +
                                        std::string(encoding.name) + "): " + std::strerror(errno));
    return;
  }
  for (unsigned b = 0x80; b <= 0xFF; ++b) {
    const auto byte = static_cast<unsigned char>(b);
    set(byte, EncodingStandardByte(encoding.name, byte, GlibcByte(cd, byte)));
  }
  iconv_close(cd);
}

struct SingleByteTables {
  std::array<std::once_flag, kMaxEncodings> built;
  std::array<SingleByteTable, kMaxEncodings> tables;
};

const SingleByteTable& TableFor(const TextEncoding& encoding, size_t index) {
  static SingleByteTables* const tables = new SingleByteTables();  // never destroyed: threads
                                                                   // may decode during exit
  std::call_once(tables->built[index],
                 [&] { BuildSingleByteTable(encoding, &tables->tables[index]); });
  return tables->tables[index];
}

void DecodeSingleByte(std::string_view bytes, const SingleByteTable& table, BoundedOutput* out,
                      DecodedText* text) {
  // Sized in one pass: the string is allocated once and written straight into when it fits.
  size_t size = 0;
  for (char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    size += b < 0x80 ? 1 : (table.high[b - 0x80].length ? table.high[b - 0x80].length : 3);
  }
  if (size <= out->max_bytes()) {
    std::string& s = text->utf8;
    s.resize(size + 3);  // each entry is copied whole (3 bytes), then the length is counted
    char* w = s.data();
    for (char c : bytes) {
      const auto b = static_cast<unsigned char>(c);
      if (b < 0x80) {
        *w++ = c;
        continue;
      }
      const SingleByteTable::Entry& entry = table.high[b - 0x80];
      if (entry.length != 0) {
        std::memcpy(w, entry.utf8, 3);
        w += entry.length;
      } else {
        std::memcpy(w, kReplacementUtf8.data(), 3);
        w += 3;
        ++text->replacements;
      }
    }
    s.resize(size);
    return;
  }
  text->utf8.reserve(out->max_bytes());
  size_t run = 0;  // ASCII bytes not yet copied, copied in runs
  for (size_t i = 0; i < bytes.size(); ++i) {
    const auto b = static_cast<unsigned char>(bytes[i]);
    if (b < 0x80) {
      ++run;
      continue;
    }
    if (!out->Append(bytes.substr(i - run, run))) return;
    run = 0;
    const SingleByteTable::Entry& entry = table.high[b - 0x80];
    const bool ok =
        entry.length ? out->Append(std::string_view(entry.utf8, entry.length)) : out->Replacement();
    if (!ok) return;
  }
  out->Append(bytes.substr(bytes.size() - run, run));
}

// This thread's glibc converters, by encoding index: an iconv_t holds conversion state and is
// not thread-safe. Opening one per page would cost little (iconv_open + iconv_close: ~0.3 us, under
// 1 % of decoding a 25 KB GBK page; bench_page_decoder); keeping them saves that and the
// allocation.
class ThreadConverters {
 public:
  ThreadConverters() { cds_.fill(Invalid()); }
  ~ThreadConverters() {
    for (iconv_t cd : cds_) {
      if (cd != Invalid()) iconv_close(cd);
    }
  }
  ThreadConverters(const ThreadConverters&) = delete;
  ThreadConverters& operator=(const ThreadConverters&) = delete;

  // The converter for the encoding at `index` (opened now if needed), reset to its initial state.
  iconv_t Get(size_t index, const std::string& name) {
    iconv_t& cd = cds_[index];
    if (cd == Invalid()) cd = iconv_open("UTF-8", name.c_str());
    if (cd != Invalid()) iconv(cd, nullptr, nullptr, nullptr, nullptr);
    return cd;
  }

  static iconv_t Invalid() { return reinterpret_cast<iconv_t>(-1); }

 private:
  std::array<iconv_t, kMaxEncodings> cds_;
};

Status IconvUnavailable(const std::string& name, const TextEncoding& encoding, int error) {
  return Status::Unavailable("glibc iconv has no converter from " + name + " (for " +
                             std::string(encoding.name) + "): " + std::strerror(error));
}

// Runs glibc's converter over `bytes`, replacing what it refuses (see the header).
// What the Encoding Standard makes of a lone 0x80 that glibc refuses: U+20AC in gb18030 (and GBK,
// which decodes as gb18030; §10.2.1 step 5) and U+0080 in Shift_JIS (§12.3.1 step 4); else
// nothing (U+FFFD). (Big5 and EUC-JP go the other way: glibc passes 0x80 as U+0080 where the
// standard has an error; left as it is, a C1 control either way.)
uint32_t LoneByte80(const TextEncoding& encoding) {
  if (encoding.name == "GBK" || encoding.name == "gb18030") return 0x20AC;
  if (encoding.name == "Shift_JIS") return 0x80;
  return 0;
}

constexpr size_t kIconvWindow = 64 << 10;

void DecodeWithIconv(iconv_t cd, std::string_view bytes, uint32_t byte80, size_t max_bytes,
                     DecodedText* text) {
  std::string& out = text->utf8;
  // Most legacy text grows by at most half in UTF-8 (two bytes -> three); grown on demand.
  size_t capacity = std::min(max_bytes, bytes.size() + bytes.size() / 2 + 16);
  out.resize(capacity);
  auto grow = [&]() -> bool {
    if (capacity == max_bytes) return false;
    capacity = capacity > max_bytes / 2 ? max_bytes : std::max<size_t>(capacity * 2, 64);
    out.resize(capacity);
    return true;
  };
  size_t used = 0;
  char* in = const_cast<char*>(bytes.data());  // iconv's signature; it does not write
  size_t in_left = bytes.size();
  bool input_done = in_left == 0;
  for (;;) {
    char* out_ptr = out.data() + used;
    size_t out_left = capacity - used;
    // At most kIconvWindow bytes of input per call: a sanitizer's iconv interceptor checks the
    // whole input range at every call, and invalid text takes a call per bad byte (quadratic).
    const size_t window = std::min(in_left, kIconvWindow);
    size_t window_left = window;
    // Once all input is converted, one more call flushes the state (a character held back).
    const size_t rc = input_done ? iconv(cd, nullptr, nullptr, &out_ptr, &out_left)
                                 : iconv(cd, &in, &window_left, &out_ptr, &out_left);
    const int error = errno;
    in_left -= window - window_left;
    used = capacity - out_left;
    if (rc != static_cast<size_t>(-1)) {
      if (input_done) break;
      input_done = in_left == 0;  // iconv succeeds only when it has converted all of the window
      continue;
    }
    if (error == E2BIG) {
      if (grow()) continue;
      text->truncated = true;
      break;
    }
    // A sequence cut off by the end of the window, not of the input: the next window starts with
    // it (a sequence is a few bytes, a window thousands: each round moves on).
    if (error == EINVAL && !input_done && in_left > window_left) continue;
    // EILSEQ (an invalid sequence at `in`), EINVAL (one cut off by the end of the input), or
    // anything else glibc might say: one U+FFFD, and on past the sequence's first byte (EILSEQ)
    // or to the end. Each round consumes input or grows the output: no endless loop.
    while (capacity - used < kReplacementUtf8.size()) {
      if (!grow()) break;
    }
    if (capacity - used < kReplacementUtf8.size()) {
      text->truncated = true;
      break;
    }
    if (error == EILSEQ && byte80 != 0 && static_cast<unsigned char>(*in) == 0x80) {
      used += AppendCodePoint(byte80, out.data() + used);  // at most 3 bytes: it fits
    } else {
      std::memcpy(out.data() + used, kReplacementUtf8.data(), kReplacementUtf8.size());
      used += kReplacementUtf8.size();
      ++text->replacements;
    }
    if (input_done) break;  // the flush failed: nothing more will come
    if (error == EILSEQ) {
      ++in;
      --in_left;
    } else {
      in_left = 0;
    }
    input_done = in_left == 0;
  }
  out.resize(used);
}

// The length of the longest prefix of `bytes` that is ASCII, eight bytes at a time.
size_t AsciiPrefix(std::string_view bytes) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t word;
    std::memcpy(&word, p + i, 8);
    if (word & 0x8080808080808080ULL) break;
  }
  while (i < n && p[i] < 0x80) ++i;
  return i;
}

}  // namespace

size_t ValidUtf8Prefix(std::string_view bytes) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  size_t i = 0;
  while (i < n) {
    i += AsciiPrefix(bytes.substr(i));  // most of a page is markup
    if (i == n) break;
    bool valid;
    const size_t length = Utf8Sequence(p + i, n - i, &valid);
    if (!valid) return i;
    i += length;
  }
  return n;
}

bool DecodesToItself(std::string_view bytes, const TextEncoding& encoding) {
  switch (KindOf(encoding)) {
    case DecoderKind::kUtf8:
      return ValidUtf8Prefix(bytes) == bytes.size();
    case DecoderKind::kUtf16Be:
    case DecoderKind::kUtf16Le:
      return false;
    case DecoderKind::kReplacement:
      return bytes.empty();
    case DecoderKind::kSingleByte:
    case DecoderKind::kIconv:
      if (encoding.name == "ISO-2022-JP") return bytes.empty();
      return AsciiPrefix(bytes) == bytes.size();
  }
  return false;
}

Result<DecodedText> DecodeToUtf8(std::string_view bytes, const TextEncoding& encoding,
                                 const DecodeLimits& limits) {
  DecodedText text;
  BoundedOutput out(&text, limits.max_output_bytes);
  switch (KindOf(encoding)) {
    case DecoderKind::kUtf8:
      if (ValidUtf8Prefix(bytes) == bytes.size()) {
        out.Append(bytes);
      } else {
        text.utf8.reserve(std::min(limits.max_output_bytes, bytes.size() + 16));
        DecodeUtf8(bytes, &out);
      }
      return text;
    case DecoderKind::kUtf16Be:
    case DecoderKind::kUtf16Le:
      DecodeUtf16(bytes, KindOf(encoding) == DecoderKind::kUtf16Be, &out, &text);
      return text;
    case DecoderKind::kReplacement:
      // §14.1: the replacement decoder gives one error for any input, then ends.
      if (!bytes.empty()) out.Replacement();
      return text;
    case DecoderKind::kSingleByte: {
      const size_t index = IndexOf(encoding);
      SingleByteTable own;  // an encoding from outside AllEncodings(): built for this call
      if (index == kMaxEncodings) BuildSingleByteTable(encoding, &own);
      const SingleByteTable& table = index == kMaxEncodings ? own : TableFor(encoding, index);
      if (!table.status.ok()) return table.status;
      DecodeSingleByte(bytes, table, &out, &text);
      return text;
    }
    case DecoderKind::kIconv:
      break;
  }
  const std::string name = IconvDecoderName(encoding);
  const size_t index = IndexOf(encoding);
  if (index == kMaxEncodings) {
    iconv_t cd = iconv_open("UTF-8", name.c_str());
    if (cd == ThreadConverters::Invalid()) return IconvUnavailable(name, encoding, errno);
    DecodeWithIconv(cd, bytes, LoneByte80(encoding), limits.max_output_bytes, &text);
    iconv_close(cd);
    return text;
  }
  static thread_local ThreadConverters converters;
  iconv_t cd = converters.Get(index, name);
  if (cd == ThreadConverters::Invalid()) return IconvUnavailable(name, encoding, errno);
  DecodeWithIconv(cd, bytes, LoneByte80(encoding), limits.max_output_bytes, &text);
  return text;
}

}  // namespace urlsieve
