#include "dedup/state/state_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace urlsieve {
namespace {

// The pid recorded by the exclusive holder, or "" (none recorded: the holder is a reader).
std::string RecordedPid(int fd) {
  char buf[32];
  const ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
  if (n <= 0) return "";
  std::string pid(buf, static_cast<size_t>(n));
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  for (char c : pid) {
    if (c < '0' || c > '9') return "";
  }
  return pid;
}

Status InUse(const std::string& dir, const std::string& lock_path, int fd) {
  const std::string pid = RecordedPid(fd);
  return Status::FailedPrecondition(
      "state directory " + dir + " is in use by " +
      (pid.empty() ? std::string("another process") : "process " + pid) + " (" + lock_path +
      "); wait for it to finish, or use another state directory");
}

}  // namespace

std::string StateLock::LockPath(const std::string& dir) { return dir + "/LOCK"; }

Result<std::unique_ptr<StateLock>> StateLock::Acquire(const std::string& dir, Mode mode) {
  const std::string path = LockPath(dir);
  const bool exclusive = mode == Mode::kExclusive;
  const int fd = exclusive ? ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)
                           : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (!exclusive && errno == ENOENT) {
      return std::unique_ptr<StateLock>(new StateLock(-1, mode));
    }
    return Status::IoError(std::string(exclusive ? "cannot create " : "cannot open ") + path +
                           " (locking the state directory): " + std::strerror(errno));
  }
  while (::flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    const int error = errno;
    Status status = error == EWOULDBLOCK
                        ? InUse(dir, path, fd)
                        : Status::IoError("cannot lock " + path + ": " + std::strerror(error));
    ::close(fd);
    return status;
  }
  std::unique_ptr<StateLock> lock(new StateLock(fd, mode));
  if (exclusive) {
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd, 0) != 0 ||
        ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
      // The lock itself is held: only the courtesy of naming the holder is lost.
      (void)::ftruncate(fd, 0);
    }
  }
  return lock;
}

StateLock::~StateLock() {
  if (fd_ < 0) return;
  // The pid goes first, while the lock is still held: a later refusal must not name this process.
  if (mode_ == Mode::kExclusive) (void)::ftruncate(fd_, 0);
  ::close(fd_);
}

}  // namespace urlsieve
