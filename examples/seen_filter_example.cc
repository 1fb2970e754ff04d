// A crawler-style loop around SeenFilter: every discovered link is canonicalized and checked in one
// batch call; only new URLs reach the queue, so each page is visited once however often it is
// linked. Here "fetching" page N of a site links to pages 2N and 2N+1 and back to page 1, spelled
// in different ways. Usage: example_seen_filter_example [state_dir] (empty: in memory).
#include <cstdio>
#include <deque>
#include <string>
#include <vector>

#include "dedup/seen_filter.h"

int main(int argc, char** argv) {
  urlsieve::SeenFilterOptions options;
  options.capacity = 1'000'000;
  if (argc > 1) options.state_dir = argv[1];  // persists between runs
  auto filter = urlsieve::SeenFilter::Open(options);
  if (!filter.ok()) {
    fprintf(stderr, "%s\n", filter.status().ToString().c_str());
    return 1;
  }

  std::deque<std::string> queue = {"http://example.com/page/1"};
  (*filter)->InsertIfNew(queue.front());
  int fetched = 0;
  std::vector<urlsieve::SeenResult> verdicts;
  while (!queue.empty()) {
    const std::string url = queue.front();
    queue.pop_front();
    ++fetched;
    const long n = std::stol(url.substr(url.rfind('/') + 1));
    std::vector<std::string> links = {"HTTP://Example.com:80/page/1#top"};
    if (n < 500) {
      links.push_back("http://example.com/page/" + std::to_string(2 * n));
      links.push_back("http://example.com/./page/" + std::to_string(2 * n + 1));
    }
    std::vector<std::string_view> views(links.begin(), links.end());
    if (!(*filter)->InsertIfNewBatch(views, &verdicts).ok()) return 1;
    for (size_t i = 0; i < links.size(); ++i) {
      if (verdicts[i].verdict == urlsieve::Verdict::kNew) queue.push_back(links[i]);
    }
  }
  printf("fetched %d pages, %llu distinct URLs seen\n", fetched,
         static_cast<unsigned long long>((*filter)->Stats().bloom_inserted));
  if (!(*filter)->Save().ok()) return 1;
  return fetched == 999 ? 0 : 1;
}
