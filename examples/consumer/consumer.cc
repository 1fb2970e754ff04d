// Embeds the installed seen stage: reads URLs (one per line) from stdin and prints the new ones.
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
  while (std::getline(std::cin, url)) {
    auto is_new = (*seen)->InsertIfNew(url);
    if (!is_new.ok()) {
      std::cerr << "invalid: " << url << ": " << is_new.status().message() << "\n";
      ++invalid;
    } else if (*is_new) {
      std::cout << url << "\n";
    }
  }
  return invalid == 0 ? 0 : 3;
}
