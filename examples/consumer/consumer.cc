// Embeds the installed seen stage: reads URLs (one per line) from stdin and prints the new ones.
#include <cstdint>
#include <iostream>
#include <string>

#include "dedup/seen_filter.h"

int main() {
  urlsieve::SeenFilterOptions options;
  options.capacity = 1'000'000;
  options.fp_rate = 1e-6;
  auto seen = urlsieve::SeenFilter::Open(options);
  if (!seen.ok()) {
    std::cerr << seen.status().ToString() << "\n";
    return 1;
  }
  std::string url;
  int invalid = 0;
  uint64_t printed = 0;
  while (std::getline(std::cin, url)) {
    auto is_new = (*seen)->InsertIfNew(url);
    if (!is_new.ok()) {
      std::cerr << "invalid: " << url << ": " << is_new.status().message() << "\n";
      ++invalid;
    } else if (*is_new) {
      std::cout << url << "\n";
      ++printed;
    }
  }
  // The seen set under the filter (dedup/seen_set.h) holds one canonical key per URL printed.
  const urlsieve::SeenSet& keys = (*seen)->seen_set();
  if (keys.Stats().bloom_inserted != printed) {
    std::cerr << "the seen set holds " << keys.Stats().bloom_inserted << " keys\n";
    return 4;
  }
  return invalid == 0 ? 0 : 3;
}
