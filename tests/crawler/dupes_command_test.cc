// Runs the real `urlsieve dupes` (docs/usage/dupes.md) on WARCs written by the crawler's own
// WarcWriter and on the same records re-packed as one gzip stream and as a plain .warc: the
// expected exact and near groups, the same in every form, revisits marked, and a truncated file
// reported (exit 3) after the groups of the records before the damage.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "crawler/output/warc_writer.h"
#include "tests/support/child_process.h"
#include "tests/support/file_contents.h"
#include "tests/support/gzip.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

using testing::ProgramRun;
using testing::RunUrlsieve;

std::string Article(const std::string& extra) {
  std::string body =
      "<html><head><title>Release notes</title></head><body><h1>Release notes</h1><p>";
  for (int i = 0; i < 120; ++i) body += "word" + std::to_string(i) + " ";
  return body + extra + "</p><script>var t = " + std::to_string(extra.size()) +
         ";</script></body></html>";
}

std::vector<nlohmann::json> Lines(const std::string& out) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

// The groups without where the records are (file, offsets): what every form of one WARC shares.
std::string Shape(const std::vector<nlohmann::json>& lines) {
  auto strip = [](nlohmann::json& member) {
    member.erase("file");
    member.erase("offset");
    member.erase("offset_in_member");
  };
  std::string s;
  for (nlohmann::json j : lines) {
    strip(j["first"]);
    for (nlohmann::json& copy : j["copies"]) strip(copy);
    s += j.dump() + "\n";
  }
  return s;
}

class DupesCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto writer = WarcWriter::Open(Path("crawl.warc.gz"), {});
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    auto write = [&](const std::string& uri, const std::string& type, const std::string& body,
                     int status = 200) {
      WarcExchange ex;
      ex.target_uri = uri;
      ex.date = std::chrono::system_clock::now();
      const std::string request = "GET " + uri + " HTTP/1.1\r\n\r\n";
      const std::string head =
          "HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Type: " + type + "\r\n\r\n";
      ex.request = request;
      ex.response_head = head;
      ex.payload = body;
      WarcRecordRef ref;
      EXPECT_TRUE((*writer)->WriteExchange(ex, &ref).ok());
      return ref;
    };
    WarcRecordRef a = write("http://127.0.0.1/a", "text/html", Article(""));
    write("http://127.0.0.1/a?session=1", "text/html", Article(""));  // exact copy of a
    write("http://127.0.0.1/b", "text/html; charset=utf-8", Article("2026-11-28"));  // near a
    write("http://127.0.0.1/c", "text/html", "<p>something else entirely, short</p>");
    write("http://127.0.0.1/style.css", "text/css", "body{color:red}");
    write("http://127.0.0.1/copy.css", "text/css", "body{color:red}");  // exact, not HTML
    write("http://127.0.0.1/missing", "text/html", Article(""), 404);   // not a 2xx: ignored
    WarcRevisit rv;
    rv.profile = WarcRevisit::Profile::kIdenticalPayloadDigest;
    rv.target_uri = "http://127.0.0.1/a#again";
    rv.date = std::chrono::system_clock::now();
    rv.request = "GET /a HTTP/1.1\r\n\r\n";
    rv.response_head = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n";
    rv.refers_to = &a;
    ASSERT_TRUE((*writer)->WriteRevisit(rv).ok());
    ASSERT_TRUE((*writer)->Sync().ok());
    a_id_ = a.record_id;
  }
  std::string Path(const std::string& name) { return (dir_.path() / name).string(); }

  testing::ScratchDir dir_{"dupes_command"};
  std::string a_id_;
};

TEST_F(DupesCommandTest, PrintsTheExactAndNearGroups) {
  ProgramRun run = RunUrlsieve({"dupes", Path("crawl.warc.gz")}, dir_.path());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::vector<nlohmann::json> lines = Lines(run.out);
  ASSERT_EQ(lines.size(), 3u) << run.out;
  // Exact: /a with its copy and the revisit; the CSS pair. Then near: /b under /a.
  EXPECT_EQ(lines[0]["kind"], "exact");
  EXPECT_EQ(lines[0]["first"]["uri"], "http://127.0.0.1/a");
  EXPECT_EQ(lines[0]["first"]["record_id"], a_id_);
  EXPECT_EQ(lines[0]["first"]["file"], Path("crawl.warc.gz"));
  ASSERT_EQ(lines[0]["copies"].size(), 2u);
  EXPECT_EQ(lines[0]["copies"][0]["uri"], "http://127.0.0.1/a?session=1");
  EXPECT_EQ(lines[0]["copies"][1]["uri"], "http://127.0.0.1/a#again");
  EXPECT_EQ(lines[0]["copies"][1]["revisit"], true);
  EXPECT_EQ(lines[1]["kind"], "exact");
  EXPECT_EQ(lines[1]["first"]["uri"], "http://127.0.0.1/style.css");
  EXPECT_EQ(lines[1]["copies"][0]["uri"], "http://127.0.0.1/copy.css");
  EXPECT_EQ(lines[2]["kind"], "near");
  EXPECT_EQ(lines[2]["first"]["uri"], "http://127.0.0.1/a");
  ASSERT_EQ(lines[2]["copies"].size(), 1u);
  EXPECT_EQ(lines[2]["copies"][0]["uri"], "http://127.0.0.1/b");
  EXPECT_LE(lines[2]["copies"][0]["distance"].get<int>(), 3);
  EXPECT_NE(run.err.find("exact: 2 groups, 3 copies; near: 1 groups, 1 copies"), std::string::npos)
      << run.err;

  // Each offset is where the record's gzip member starts.
  const std::string file = testing::ReadFile(Path("crawl.warc.gz"));
  const uint64_t offset = lines[2]["copies"][0]["offset"];
  EXPECT_EQ(file.substr(offset, 2), "\x1f\x8b");

  ProgramRun exact_only = RunUrlsieve({"dupes", "--no-near", Path("crawl.warc.gz")}, dir_.path());
  ASSERT_EQ(exact_only.exit_code, 0) << exact_only.err;
  EXPECT_EQ(Lines(exact_only.out).size(), 2u);
  ProgramRun strict = RunUrlsieve(
      {"dupes", "--distance", "0", "--min-words", "1000", Path("crawl.warc.gz")}, dir_.path());
  EXPECT_EQ(Lines(strict.out).size(), 2u) << strict.out;
}

TEST_F(DupesCommandTest, OneStreamAndPlainGiveTheSameGroups) {
  ProgramRun members = RunUrlsieve({"dupes", Path("crawl.warc.gz")}, dir_.path());
  ASSERT_EQ(members.exit_code, 0) << members.err;
  // The same records, plain and as one gzip stream.
  ProgramRun plain_made = testing::RunShell(
      "zcat '" + Path("crawl.warc.gz") + "' > '" + Path("crawl.warc") + "'", dir_.path());
  ASSERT_EQ(plain_made.exit_code, 0) << plain_made.err;
  testing::WriteFile(Path("one.warc.gz"), testing::Gzip(testing::ReadFile(Path("crawl.warc"))));
  ProgramRun plain = RunUrlsieve({"dupes", Path("crawl.warc")}, dir_.path());
  ProgramRun one = RunUrlsieve({"dupes", Path("one.warc.gz")}, dir_.path());
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const std::string expected = Shape(Lines(members.out));
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(Shape(Lines(plain.out)), expected);
  EXPECT_EQ(Shape(Lines(one.out)), expected);
  // Within one stream, a record is found by its member (0) and its place in it.
  EXPECT_EQ(Lines(one.out)[0]["copies"][0]["offset"], 0);
  EXPECT_GT(Lines(one.out)[0]["copies"][0]["offset_in_member"].get<uint64_t>(), 0u);
}

TEST_F(DupesCommandTest, ATruncatedFileIsReportedAndTheOthersRead) {
  const std::string file = testing::ReadFile(Path("crawl.warc.gz"));
  testing::WriteFile(Path("cut.warc.gz"), file.substr(0, file.size() * 2 / 3));
  ProgramRun run = RunUrlsieve({"dupes", Path("cut.warc.gz"), Path("crawl.warc.gz")}, dir_.path());
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_NE(run.err.find(Path("cut.warc.gz") + ": offset"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("truncated"), std::string::npos) << run.err;
  // The records before the damage count: the cut file's /a comes first, the whole file's
  // records are its copies.
  std::vector<nlohmann::json> lines = Lines(run.out);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0]["first"]["file"], Path("cut.warc.gz"));
  EXPECT_EQ(lines[0]["first"]["uri"], "http://127.0.0.1/a");

  ProgramRun missing = RunUrlsieve({"dupes", Path("none.warc.gz")}, dir_.path());
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("none.warc.gz"), std::string::npos);
  ProgramRun usage = RunUrlsieve({"dupes"}, dir_.path());
  EXPECT_EQ(usage.exit_code, 2);
}

}  // namespace
}  // namespace urlsieve
