// Runs the real `urlsieve canon` binary: stdin from a file, stdout captured, exit code checked.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/jsonl.h"
#include "tests/support/scratch_dir.h"

namespace {

using urlsieve::testing::Lines;

struct CanonRun {
  int exit_code = -1;
  std::string out;
};

class CanonCommandTest : public ::testing::Test {
 protected:
  // Feeds `input` on stdin to `urlsieve canon <args>`; `redirect` is appended to the command.
  CanonRun Canon(const std::string& input, const std::string& args = "",
                 const std::string& redirect = "2>/dev/null") {
    const std::string in_path = (dir_.path() / "in.txt").string();
    std::ofstream(in_path, std::ios::binary) << input;
    const std::string cmd =
        std::string(URLSIEVE_BINARY) + " canon " + args + " < '" + in_path + "' " + redirect;
    CanonRun run;
    FILE* pipe = popen(cmd.c_str(), "r");
    if (pipe == nullptr) return run;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) run.out.append(buf, n);
    const int status = pclose(pipe);
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return run;
  }

  urlsieve::testing::ScratchDir dir_{"urlsieve_canon_test"};
};

TEST_F(CanonCommandTest, OneOutputLinePerInputLine) {
  const CanonRun run = Canon(
      "HTTP://Example.COM:80/a/./b#f\n"
      "\n"
      "mailto:someone@example.com\n"
      "http://b\xc3\xbc"
      "cher.de/\n"
      "../relative\n"
      "http://0x7f.1/\n"
      "http://example.com:99999/\n"
      "  https://example.com/%7euser  \n"
      "http://[::FFFF:127.0.0.1]/\n"
      "http://last.example/no-newline");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(Lines(run.out), (std::vector<std::string>{
                                "http://example.com/a/b",
                                "error: empty url",
                                "error: unsupported scheme 'mailto'",
                                "http://xn--bcher-kva.de/",
                                "error: relative URL without a base",
                                "http://127.0.0.1/",
                                "error: invalid port",
                                "https://example.com/~user",
                                "http://[::ffff:7f00:1]/",
                                "http://last.example/no-newline",
                            }));
}

TEST_F(CanonCommandTest, ErrorLinesCarryNoRawInput) {
  const std::string huge = "http://a.example/" + std::string(1 << 20, '\x1b');
  const CanonRun run =
      Canon(huge + "\n\x1b]0;t\x07:x\nhttp://a.example/\x9b\n\xff\x1b[2J://x/\nx\x1b:y\n");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(Lines(run.out), (std::vector<std::string>{
                                "error: url too long (1048593 > 2083 bytes)",
                                "error: relative URL without a base",
                                "error: invalid UTF-8",
                                "error: invalid UTF-8",
                                "error: relative URL without a base",
                            }));
  for (char c : run.out) {
    const auto byte = static_cast<unsigned char>(c);
    EXPECT_TRUE(c == '\n' || (byte >= 0x20 && byte < 0x7f)) << static_cast<int>(byte);
  }
}

TEST_F(CanonCommandTest, EmptyInputGivesEmptyOutput) {
  const CanonRun run = Canon("");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.out, "");
}

TEST_F(CanonCommandTest, CrLfLineEndings) {
  const CanonRun run = Canon("http://a/x\r\nhttp://b/y\r\n\r\n");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.out, "http://a/x\nhttp://b/y\nerror: empty url\n");
}

TEST_F(CanonCommandTest, BaseResolvesEachLine) {
  const CanonRun run =
      Canon("g\n../x?q#f\n//other.org\n\njavascript:void(0)\n", "--base 'http://a/b/c/d;p?q'");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(Lines(run.out), (std::vector<std::string>{
                                "http://a/b/c/g",
                                "http://a/b/x?q",
                                "http://other.org/",
                                "http://a/b/c/d;p?q",  // RFC 3986 §5.4.1: "" is the base
                                "error: unsupported scheme 'javascript'",
                            }));
}

// --encoding: the lines come from a page in that encoding; a browser sends their queries in it
// (docs/features/canonicalization.md, "Queries in the document's encoding"). The path stays UTF-8,
// and the base's own query is not re-encoded. Expectations from Python:
// urllib.parse.quote("中文".encode("gbk")).
TEST_F(CanonCommandTest, EncodingAppliesToQueriesOfReferences) {
  const std::string input =
      "/搜索/页面.html?q=中文\n"
      "?q=‽\n"
      "#top\n"
      "https://other.example/é?q=é\n";
  const CanonRun gbk = Canon(input, "--base 'http://example.com/p?q=%E4%B8%AD' --encoding GB2312");
  EXPECT_EQ(gbk.exit_code, 0);
  EXPECT_EQ(Lines(gbk.out), (std::vector<std::string>{
                                "http://example.com/%E6%90%9C%E7%B4%A2/%E9%A1%B5%E9%9D%A2.html"
                                "?q=%D6%D0%CE%C4",
                                "http://example.com/p?q=%26%238253%3B",  // GBK lacks U+203D
                                "http://example.com/p?q=%E4%B8%AD",      // the base's query
                                "https://other.example/%C3%A9?q=%A8%A6",
                            }));
  const CanonRun latin1 =
      Canon(input, "--base 'http://example.com/p?q=%E4%B8%AD' --encoding latin1");
  EXPECT_EQ(Lines(latin1.out)[3], "https://other.example/%C3%A9?q=%E9");
  // Without --encoding (or in UTF-8, or for a UTF-16 page) the query is UTF-8.
  for (const char* flag : {"", "--encoding utf-8", "--encoding ' UTF-16LE '"}) {
    const CanonRun utf8 =
        Canon(input, std::string("--base 'http://example.com/p?q=%E4%B8%AD' ") + flag);
    EXPECT_EQ(utf8.exit_code, 0) << flag;
    EXPECT_EQ(Lines(utf8.out), (std::vector<std::string>{
                                   "http://example.com/%E6%90%9C%E7%B4%A2/%E9%A1%B5%E9%9D%A2.html"
                                   "?q=%E4%B8%AD%E6%96%87",
                                   "http://example.com/p?q=%E2%80%BD",
                                   "http://example.com/p?q=%E4%B8%AD",
                                   "https://other.example/%C3%A9?q=%C3%A9",
                               }))
        << flag;
  }
}

TEST_F(CanonCommandTest, UnknownEncodingIsAUsageErrorNamingIt) {
  const CanonRun run = Canon("?q=中\n", "--base http://a/ --encoding klingon-8", "2>&1");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out, "urlsieve canon: unknown --encoding label 'klingon-8'\n");
  // --encoding applies to references resolved against --base: alone it is a usage error.
  const CanonRun alone = Canon("http://a/?q=中\n", "--encoding gbk", "2>&1");
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_NE(alone.out.find("--base"), std::string::npos) << alone.out;
}

TEST_F(CanonCommandTest, CrawlerRuleFlags) {
  const std::string url = "http://www.example.com//a//b;jsessionid=1?z=1&sid=2&a=3\n";
  EXPECT_EQ(Canon(url).out, "http://www.example.com//a//b;jsessionid=1?z=1&sid=2&a=3\n");
  EXPECT_EQ(Canon(url, "--sort-query").out,
            "http://www.example.com//a//b;jsessionid=1?a=3&sid=2&z=1\n");
  EXPECT_EQ(Canon(url, "--strip-session-ids").out, "http://www.example.com//a//b?z=1&a=3\n");
  EXPECT_EQ(Canon(url, "--strip-www").out, "http://example.com//a//b;jsessionid=1?z=1&sid=2&a=3\n");
  EXPECT_EQ(Canon(url, "--collapse-slashes").out,
            "http://www.example.com/a/b;jsessionid=1?z=1&sid=2&a=3\n");
  EXPECT_EQ(Canon("http://a/p?\n").out, "http://a/p?\n");
  EXPECT_EQ(Canon("http://a/p?\n", "--drop-empty-query").out, "http://a/p\n");
  EXPECT_EQ(Canon(url,
                  "--sort-query --drop-empty-query --strip-session-ids --strip-www "
                  "--collapse-slashes")
                .out,
            "http://example.com/a/b?a=3&z=1\n");
}

TEST_F(CanonCommandTest, StripTrackingParamsWithExceptions) {
  const std::string input =
      "http://a.example/p?utm_source=x&id=1&fbclid=2\n"
      "http://shop.keep.example/p?utm_source=x&gclid=1&id=2\n"
      "http://a.example/p?gclid=1;x=2\n";
  EXPECT_EQ(Canon(input).out,
            "http://a.example/p?utm_source=x&id=1&fbclid=2\n"
            "http://shop.keep.example/p?utm_source=x&gclid=1&id=2\n"
            "http://a.example/p?gclid=1;x=2\n");
  EXPECT_EQ(Canon(input, "--strip-tracking-params").out,
            "http://a.example/p?id=1\n"
            "http://shop.keep.example/p?id=2\n"
            "http://a.example/p?gclid=1;x=2\n");
  const CanonRun kept =
      Canon(input,
            "--strip-tracking-params --keep-tracking-param keep.example:UTM_SOURCE "
            "--keep-tracking-param other.example:ref");
  EXPECT_EQ(kept.exit_code, 0);
  EXPECT_EQ(kept.out,
            "http://a.example/p?id=1\n"
            "http://shop.keep.example/p?utm_source=x&id=2\n"
            "http://a.example/p?gclid=1;x=2\n");
  // A malformed exception, or one without the rule, is a usage error naming the flag.
  const CanonRun bad =
      Canon(input, "--strip-tracking-params --keep-tracking-param nocolon", "2>&1");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("HOST:NAME"), std::string::npos) << bad.out;
  const CanonRun alone = Canon(input, "--keep-tracking-param a.example:ref", "2>&1");
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_NE(alone.out.find("--strip-tracking-params"), std::string::npos) << alone.out;
}

TEST_F(CanonCommandTest, MaxLength) {
  const CanonRun run = Canon("http://example.com/1\nhttp://example.com/12\n", "--max-length 20");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.out, "http://example.com/1\nerror: url too long (21 > 20 bytes)\n");
}

TEST_F(CanonCommandTest, UsageErrorsExitTwo) {
  for (const char* args : {"--base /relative", "--base mailto:x", "--bogus", "--max-length 0",
                           "--max-length abc", "--base"}) {
    const CanonRun run = Canon("http://a/\n", args);
    EXPECT_EQ(run.exit_code, 2) << args;
    EXPECT_EQ(run.out, "") << args;
  }
}

TEST_F(CanonCommandTest, ReadErrorExitsOne) {
  // A directory as stdin: read() fails with EISDIR.
  const std::string cmd = std::string(URLSIEVE_BINARY) + " canon < / >/dev/null 2>&1";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
}

TEST_F(CanonCommandTest, WriteErrorExitsOne) {
  // stdout closed: every write() fails with EBADF.
  const CanonRun run = Canon("http://a/\n", "", ">&- 2>/dev/null");
  EXPECT_EQ(run.exit_code, 1);
}

TEST_F(CanonCommandTest, StreamsManyLines) {
  std::string input;
  for (int i = 0; i < 50000; ++i)
    input += "HTTP://Host" + std::to_string(i % 97) + ".example/p/" + std::to_string(i) + "\n";
  const CanonRun run = Canon(input);
  EXPECT_EQ(run.exit_code, 0);
  const std::vector<std::string> lines = Lines(run.out);
  ASSERT_EQ(lines.size(), 50000u);
  EXPECT_EQ(lines[0], "http://host0.example/p/0");
  EXPECT_EQ(lines[49999], "http://host44.example/p/49999");
}

}  // namespace
