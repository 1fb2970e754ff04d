// Gzip: `data` as one gzip member (zlib, level 9), for tests that serve or parse gzip'd bodies.
// Thread-safety: a pure function.
#ifndef URLSIEVE_TESTS_SUPPORT_GZIP_H_
#define URLSIEVE_TESTS_SUPPORT_GZIP_H_

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <string>
#include <string_view>

namespace urlsieve::testing {

// zlib's deflate of `data` with `window_bits` (16 + MAX_WBITS: gzip; MAX_WBITS: zlib; negative:
// raw deflate).
inline std::string Deflate(std::string_view data, int window_bits) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  EXPECT_EQ(deflateInit2(&zs, 9, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, data.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

inline std::string Gzip(std::string_view data) { return Deflate(data, 16 + MAX_WBITS); }

}  // namespace urlsieve::testing

#endif  // URLSIEVE_TESTS_SUPPORT_GZIP_H_
