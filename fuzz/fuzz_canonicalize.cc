// libFuzzer target for UrlCanonicalizer: every input must either be rejected with
// InvalidArgument or give a key that is a valid RFC 3986 URI and is its own key (idempotence).
// The first byte picks the crawler rules; the rest is the URL, and also a reference resolved
// against a fixed base, as from a UTF-8 page and from a GBK or Shift_JIS one. Any violation aborts,
// which libFuzzer reports as a crash.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "base/encoding/text_encoding.h"
#include "tests/url/uri_validator.h"
#include "url/url_canonicalizer.h"

namespace {

using urlsieve::CanonicalizeOptions;
using urlsieve::Status;
using urlsieve::UrlCanonicalizer;

[[noreturn]] void Fail(const char* what, std::string_view input, std::string_view key) {
  std::fprintf(stderr, "%s\ninput: %.*s\nkey:   %.*s\n", what, static_cast<int>(input.size()),
               input.data(), static_cast<int>(key.size()), key.data());
  std::abort();
}

void Check(const UrlCanonicalizer& canonicalizer, std::string_view url) {
  std::string key;
  const Status status = canonicalizer.CanonicalizeTo(url, &key);
  if (!status.ok()) {
    if (status.code() != urlsieve::StatusCode::kInvalidArgument || status.message().empty()) {
      Fail("unexpected error status", url, status.ToString());
    }
    return;
  }
  if (!urlsieve::testing::IsValidUriKey(key)) Fail("key is not a valid URI", url, key);
  std::string again;
  if (!canonicalizer.CanonicalizeTo(key, &again).ok()) Fail("key is rejected", url, key);
  if (again != key) Fail("not idempotent", url, again);
  // The full form must agree with the hot path.
  const urlsieve::Result<urlsieve::CanonicalUrl> full = canonicalizer.Canonicalize(url);
  if (!full.ok() || full->key() != key) Fail("Canonicalize != CanonicalizeTo", url, key);
  if (full->origin().size() + full->path_and_query().size() != key.size()) {
    Fail("components do not tile the key", url, key);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  CanonicalizeOptions options;
  const uint8_t flags = data[0];
  options.sort_query = flags & 1;
  options.drop_empty_query = flags & 2;
  options.strip_session_ids = flags & 4;
  options.strip_www = flags & 8;
  options.collapse_slashes = flags & 16;
  if (flags & 32) options.max_length = 64;
  // strip_tracking_params rides on the base choice: both only widen what is exercised.
  options.strip_tracking_params = flags & 64;
  if (flags & 64) options.tracking_exceptions = {"a:utm_source", "example.com:gclid"};
  const UrlCanonicalizer canonicalizer(options);
  const std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);

  Check(canonicalizer, input);
  const char* base =
      (flags & 64) ? "https://user@www.Example.com:8443/a/b/c;p?q=1#f" : "http://a/b/c/d;p?q";
  const urlsieve::Result<std::string> resolved = canonicalizer.Resolve(base, input);
  if (resolved.ok()) Check(canonicalizer, resolved.value());
  // The same reference found on a page in a legacy encoding: its query is encoded in it
  // (docs/features/canonicalization.md, "Queries in the document's encoding"); the result keeps the
  // invariants.
  static const urlsieve::TextEncoding* const kDocumentEncodings[] = {
      urlsieve::EncodingForLabel("gbk"), urlsieve::EncodingForLabel("shift_jis")};
  const urlsieve::Result<std::string> in_legacy =
      canonicalizer.Resolve(base, input, kDocumentEncodings[(flags >> 7) & 1]);
  if (in_legacy.ok()) {
    Check(canonicalizer, in_legacy.value());
  } else if (in_legacy.status().code() != urlsieve::StatusCode::kInvalidArgument ||
             (resolved.ok() && in_legacy.status().message().rfind("url too long", 0) != 0)) {
    // Only the length may differ: "&#N;" is longer than UTF-8, GBK shorter.
    Fail("an encoding made Resolve fail", input, in_legacy.status().ToString());
  }
  return 0;
}
