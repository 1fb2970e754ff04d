// libFuzzer target for link extraction: any bytes, as a page body, give links that keep the
// invariants of tests/crawler/link_invariants.h. Any violation aborts, which libFuzzer reports as
// a crash; its -timeout catches parses that go super-linear, which the HTML guard exists to
// prevent.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "tests/crawler/link_invariants.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string wrong = urlsieve::testing::LinkInvariantViolation(
      std::string_view(reinterpret_cast<const char*>(data), size));
  if (!wrong.empty()) {
    std::fprintf(stderr, "%s\n", wrong.c_str());
    std::abort();
  }
  return 0;
}
