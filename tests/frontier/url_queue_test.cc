#include "frontier/url_queue.h"

#include <gtest/gtest.h>

#include <string>

namespace urlsieve {
namespace {

TEST(UrlQueueTest, FifoRoundTripOfEveryField) {
  UrlQueue queue;
  EXPECT_TRUE(queue.empty());
  const std::string big(100000, 'x');
  queue.Push({1, 2, 3, 0, "/a?b=c", 7});
  queue.Push({UINT64_MAX, UINT32_MAX, 70000, 5, big, UINT32_MAX});
  queue.Push({300, 0, 0, 1, ""});
  EXPECT_EQ(queue.size(), 3u);
  QueuedUrl url = queue.Front();
  EXPECT_EQ(url.id, 1u);
  EXPECT_EQ(url.origin, 2u);
  EXPECT_EQ(url.depth, 3u);
  EXPECT_EQ(url.rest, "/a?b=c");
  EXPECT_EQ(url.parent, 7u);
  queue.Pop();
  url = queue.Front();
  EXPECT_EQ(url.id, UINT64_MAX);
  EXPECT_EQ(url.origin, UINT32_MAX);
  EXPECT_EQ(url.depth, 70000u);
  EXPECT_EQ(url.retries, 5u);
  EXPECT_EQ(url.rest, big);
  EXPECT_EQ(url.parent, UINT32_MAX);
  queue.Pop();
  url = queue.Front();
  EXPECT_EQ(url.id, 300u);
  EXPECT_EQ(url.rest, "");
  EXPECT_EQ(url.parent, 0u);
  queue.Pop();
  EXPECT_TRUE(queue.empty());
}

TEST(UrlQueueTest, ConsumedSpaceIsReclaimed) {
  UrlQueue queue;
  const std::string rest(50, 'p');
  for (uint64_t i = 0; i < 100000; ++i) {
    queue.Push({i, 0, 0, 0, rest});
    if (i % 2 == 1) {  // the queue grows by one entry every two pushes
      EXPECT_EQ(queue.Front().id, i / 2);
      queue.Pop();
    }
  }
  EXPECT_EQ(queue.size(), 50000u);
  // Live bytes are ~56 per entry; the buffer stays within a small factor of that.
  EXPECT_LT(queue.allocated_bytes(), 50000u * 56 * 4);
  while (!queue.empty()) queue.Pop();
  EXPECT_LE(queue.allocated_bytes(), 256u);
}

}  // namespace
}  // namespace urlsieve
