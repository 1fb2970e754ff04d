// `urlsieve robots`, run as the real binary.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/scratch_dir.h"

namespace {

struct ProcessResult {
  int exit_code = -1;
  std::string out;
};

ProcessResult RunUrlsieve(const std::string& args) {
  const std::string command = std::string(URLSIEVE_BINARY) + " " + args + " 2>/dev/null";
  ProcessResult run;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) run.out.append(buffer, n);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

class RobotsCommandTest : public ::testing::Test {
 protected:
  RobotsCommandTest() {
    robots_ = (dir_ / "robots.txt").string();
    std::ofstream(robots_) << "# test file\n"
                              "User-agent: *\n"
                              "Disallow: /private\n"
                              "Allow: /private/ok\n"
                              "\n"
                              "User-agent: strictbot\n"
                              "Disallow: /\n";
  }

  urlsieve::testing::ScratchDir scratch_{"robots_cmd"};
  const std::filesystem::path dir_ = scratch_.path();
  std::string robots_;
};

TEST_F(RobotsCommandTest, AllAllowedExitsZero) {
  const ProcessResult run = RunUrlsieve("robots --agent mybot --robots " + robots_ +
                                        " http://a.test/ 'http://a.test/private/ok?x=1'");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.out, "allowed http://a.test/\nallowed http://a.test/private/ok?x=1\n");
}

TEST_F(RobotsCommandTest, AnyDisallowedExitsOne) {
  const ProcessResult run = RunUrlsieve("robots --agent mybot --robots " + robots_ +
                                        " http://a.test/private/x http://a.test/public");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.out, "disallowed http://a.test/private/x\nallowed http://a.test/public\n");
}

TEST_F(RobotsCommandTest, AgentSelectsItsGroup) {
  const ProcessResult run =
      RunUrlsieve("robots --agent StrictBot/2.0 --robots " + robots_ + " http://a.test/public");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.out, "disallowed http://a.test/public\n");
}

TEST_F(RobotsCommandTest, ExplainPrintsTheDecidingLine) {
  const ProcessResult run =
      RunUrlsieve("robots --explain --agent mybot --robots " + robots_ +
                  " http://a.test/private/x http://a.test/private/ok http://a.test/");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.out,
            "disallowed http://a.test/private/x\tline 3: Disallow: /private\n"
            "allowed http://a.test/private/ok\tline 4: Allow: /private/ok\n"
            "allowed http://a.test/\tno matching rule\n");
}

TEST_F(RobotsCommandTest, UsageAndIoErrorsExitTwo) {
  EXPECT_EQ(RunUrlsieve("robots --agent mybot --robots " + (dir_ / "missing.txt").string() +
                        " http://a.test/")
                .exit_code,
            2);
  EXPECT_EQ(RunUrlsieve("robots --agent mybot --robots " + robots_).exit_code, 2);  // no URL
  EXPECT_EQ(RunUrlsieve("robots --robots " + robots_ + " http://a.test/").exit_code, 2);
  EXPECT_EQ(RunUrlsieve("robots --agent mybot --robots " + robots_ + " not-a-url").exit_code, 2);
}

}  // namespace
