// FileSizeLimit: while it lives, no file of this process may grow past `bytes` (RLIMIT_FSIZE, the
// kernel's own limit: a write past it fails with EFBIG, as on a full disk). Real storage failures
// for the tests of what the crawl does when its files cannot grow; SIGXFSZ is ignored meanwhile,
// so the write fails instead of killing the process. The previous limit and signal disposition
// come back on destruction.
// Thread-safety: create and destroy it on the test's thread; it applies to the whole process.
#ifndef URLSIEVE_TESTS_SUPPORT_FILE_SIZE_LIMIT_H_
#define URLSIEVE_TESTS_SUPPORT_FILE_SIZE_LIMIT_H_

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

namespace urlsieve::testing {

class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    EXPECT_EQ(::getrlimit(RLIMIT_FSIZE, &previous_), 0);
    previous_handler_ = ::signal(SIGXFSZ, SIG_IGN);
    rlimit limit = previous_;
    limit.rlim_cur = bytes;
    EXPECT_EQ(::setrlimit(RLIMIT_FSIZE, &limit), 0);
  }
  ~FileSizeLimit() {
    EXPECT_EQ(::setrlimit(RLIMIT_FSIZE, &previous_), 0);
    ::signal(SIGXFSZ, previous_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit previous_{};
  sighandler_t previous_handler_ = SIG_DFL;
};

}  // namespace urlsieve::testing

#endif  // URLSIEVE_TESTS_SUPPORT_FILE_SIZE_LIMIT_H_
