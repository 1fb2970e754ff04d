// libFuzzer target for robots.txt (RFC 9309): any body parses, and matching obeys the rules it
// reports (tests/frontier/robots_invariants.h). Any violation aborts, which libFuzzer reports as a
// crash; its -timeout catches matching that goes super-linear on wildcard-heavy patterns.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "tests/frontier/robots_invariants.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string wrong = urlsieve::testing::RobotsInvariantViolation(
      std::string_view(reinterpret_cast<const char*>(data), size));
  if (!wrong.empty()) {
    std::fprintf(stderr, "%s\n", wrong.c_str());
    std::abort();
  }
  return 0;
}
