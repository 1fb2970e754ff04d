// DuplicateFinder on records as WarcReader yields them: which records are fingerprinted, the
// exact and near groups, --min-words, revisits whose original is elsewhere.
#include "crawler/page/duplicate_finder.h"

#include <gtest/gtest.h>

#include <string>

#include "crawler/output/warc_writer.h"

namespace urlsieve {
namespace {

WarcReadRecord Page(const std::string& uri, const std::string& type, const std::string& body,
                    int status = 200) {
  WarcReadRecord r;
  r.type = "response";
  r.target_uri = uri;
  r.record_id = "<urn:uuid:" + uri + ">";
  r.http = true;
  r.status = status;
  r.http_content_type = type;
  r.payload_digest = WarcSha1Digest(body);
  r.payload = body;
  r.payload_kept = true;
  r.payload_complete = true;
  return r;
}

std::string Text(int words, const std::string& extra = "") {
  std::string s = "<html><body><p>";
  for (int i = 0; i < words; ++i) {
    s.push_back('w');
    s.append(std::to_string(i));
    s.push_back(' ');
  }
  return s + extra + "</p></body></html>";
}

TEST(DuplicateFinderTest, GroupsExactAndNearCopiesUnderTheirFirst) {
  DuplicateFinder finder({});
  finder.Add(0, Page("a", "text/html", Text(100)));
  finder.Add(0, Page("a2", "text/html", Text(100)));  // exact
  // The same text in other markup: near (distance 0), sniffed as HTML without a Content-Type.
  finder.Add(0, Page("b", "", Text(100) + "<!-- build 2 -->"));
  finder.Add(0, Page("e", "text/html", Text(100), 500));        // not a 2xx
  finder.Add(0, Page("j", "application/json", "{\"w0\": 1}"));  // not HTML: no SimHash
  ASSERT_EQ(finder.Groups().size(), 2u);
  const DuplicateGroup& exact = *finder.Groups()[0];
  EXPECT_EQ(exact.kind, DuplicateGroup::Kind::kExact);
  EXPECT_EQ(finder.member(exact.first).uri, "a");
  ASSERT_EQ(exact.copies.size(), 1u);
  EXPECT_EQ(finder.member(exact.copies[0].member).uri, "a2");
  const DuplicateGroup& near = *finder.Groups()[1];
  EXPECT_EQ(near.kind, DuplicateGroup::Kind::kNear);
  EXPECT_EQ(finder.member(near.first).uri, "a");
  EXPECT_EQ(finder.member(near.copies[0].member).uri, "b");
  EXPECT_EQ(finder.counts().responses, 5u);
  EXPECT_EQ(finder.counts().fingerprinted, 4u);
  EXPECT_EQ(finder.counts().html_pages, 2u);  // a and b (a2 is an exact copy)
}

TEST(DuplicateFinderTest, PagesWithoutEnoughWordsGetNoSimHash) {
  DuplicateFinderOptions options;
  options.min_words = 5;
  DuplicateFinder finder(options);
  finder.Add(0, Page("x", "text/html", "<p><img src=a.png></p>"));
  finder.Add(0, Page("y", "text/html", "<p><img src=b.png></p>"));  // both without a word
  finder.Add(0, Page("z", "text/html", Text(4)));
  EXPECT_TRUE(finder.Groups().empty());
  EXPECT_EQ(finder.counts().simhashed, 0u);
}

TEST(DuplicateFinderTest, ARevisitJoinsItsDigestsGroupOrStandsForItsOriginal) {
  DuplicateFinder finder({});
  // A revisit has the response's fields but no payload (its digest is the original's).
  WarcReadRecord revisit = Page("r1", "text/plain", "payload");
  revisit.type = std::string("revisit");
  revisit.payload = std::string();
  finder.Add(0, revisit);  // its original is in another file
  finder.Add(1, Page("p", "text/plain", "payload"));
  ASSERT_EQ(finder.Groups().size(), 1u);
  const DuplicateGroup& g = *finder.Groups()[0];
  EXPECT_TRUE(finder.member(g.first).revisit);
  EXPECT_EQ(finder.member(g.copies[0].member).uri, "p");
  EXPECT_EQ(finder.member(g.copies[0].member).file, 1u);
  EXPECT_EQ(finder.counts().revisits, 1u);
}

}  // namespace
}  // namespace urlsieve
