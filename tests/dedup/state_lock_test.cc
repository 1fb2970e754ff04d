#include "dedup/state/state_lock.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "tests/support/file_contents.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;

class StateLockTest : public ::testing::Test {
 protected:
  Result<std::unique_ptr<StateLock>> Lock(StateLock::Mode mode) {
    return StateLock::Acquire(dir_.string(), mode);
  }

  testing::ScratchDir scratch_{"urlsieve_state_lock"};
  const fs::path& dir_ = scratch_.path();
};

// flock belongs to an open file description, so a second Acquire in this process conflicts just
// as another process's would.
TEST_F(StateLockTest, SecondExclusiveLockIsRefusedNamingTheDirectoryAndThePid) {
  auto first = Lock(StateLock::Mode::kExclusive);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(ReadFile(dir_ / "LOCK"), std::to_string(::getpid()) + "\n");
  auto second = Lock(StateLock::Mode::kExclusive);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
  const std::string& message = second.status().message();
  EXPECT_NE(message.find(dir_.string()), std::string::npos) << message;
  EXPECT_NE(message.find("process " + std::to_string(::getpid())), std::string::npos) << message;
  EXPECT_FALSE(Lock(StateLock::Mode::kShared).ok());
}

TEST_F(StateLockTest, ReleasedWhenDestroyedAndThePidIsCleared) {
  {
    auto first = Lock(StateLock::Mode::kExclusive);
    ASSERT_TRUE(first.ok());
  }
  EXPECT_EQ(ReadFile(dir_ / "LOCK"), "");
  auto again = Lock(StateLock::Mode::kExclusive);
  EXPECT_TRUE(again.ok()) << again.status().ToString();
}

TEST_F(StateLockTest, ReadersShareButExcludeAWriter) {
  { ASSERT_TRUE(Lock(StateLock::Mode::kExclusive).ok()); }  // creates LOCK
  auto reader1 = Lock(StateLock::Mode::kShared);
  auto reader2 = Lock(StateLock::Mode::kShared);
  ASSERT_TRUE(reader1.ok()) << reader1.status().ToString();
  ASSERT_TRUE(reader2.ok()) << reader2.status().ToString();
  auto writer = Lock(StateLock::Mode::kExclusive);
  ASSERT_FALSE(writer.ok());
  EXPECT_NE(writer.status().message().find("another process"), std::string::npos)
      << writer.status().message();
}

// A reader writes nothing: without a LOCK file (a directory no locking writer has opened) it goes
// on without a lock rather than create one.
TEST_F(StateLockTest, ReaderCreatesNoLockFile) {
  auto reader = Lock(StateLock::Mode::kShared);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_FALSE(fs::exists(dir_ / "LOCK"));
}

// Another process: a child that tries to take the lock while this process holds it.
TEST_F(StateLockTest, AnotherProcessIsRefusedUntilTheHolderReleases) {
  auto held = Lock(StateLock::Mode::kExclusive);
  ASSERT_TRUE(held.ok());
  auto child_can_lock = [&]() {
    const pid_t pid = ::fork();
    if (pid == 0) {
      auto lock = StateLock::Acquire(dir_.string(), StateLock::Mode::kExclusive);
      ::_exit(lock.ok() ? 0 : 1);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  };
  EXPECT_FALSE(child_can_lock());
  held->reset();
  EXPECT_TRUE(child_can_lock());
}

}  // namespace
}  // namespace urlsieve
