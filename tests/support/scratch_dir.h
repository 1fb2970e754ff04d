// ScratchDir: a fresh, empty directory for one test, removed when the test ends. Its name carries
// the process id and the running test's name, so parallel ctest runs never share one.
// Thread-safety: a plain value; create it on the test's thread.
#ifndef URLSIEVE_TESTS_SUPPORT_SCRATCH_DIR_H_
#define URLSIEVE_TESTS_SUPPORT_SCRATCH_DIR_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>

namespace urlsieve::testing {

class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix) {
    const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name =
        prefix + "_" + std::to_string(::getpid()) + "_" +
        (test != nullptr ? std::string(test->test_suite_name()) + "." + test->name() : "");
    // A parameterized test's name ("Local/Suite.Test/0") would make nested directories, of which
    // only the innermost would be removed.
    std::replace(name.begin(), name.end(), '/', '_');
    path_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace urlsieve::testing

#endif  // URLSIEVE_TESTS_SUPPORT_SCRATCH_DIR_H_
