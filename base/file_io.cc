#include "base/file_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace urlsieve {

std::string ErrnoMessage(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

ScopedFd::~ScopedFd() {
  if (fd_ >= 0) ::close(fd_);
}

bool ScopedFd::Close() {
  const int fd = std::exchange(fd_, -1);
  return ::close(fd) == 0;
}

Status WriteAll(int fd, const char* data, size_t size, uint64_t offset, const std::string& path) {
  while (size > 0) {
    const ssize_t n = ::pwrite(fd, data, size, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::IoError(ErrnoMessage("cannot write", path));
    }
    data += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

Status ReadAll(int fd, char* data, size_t size, uint64_t offset, const std::string& path,
               std::string_view truncated) {
  while (size > 0) {
    const ssize_t n = ::pread(fd, data, size, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::IoError(ErrnoMessage("cannot read", path));
    }
    if (n == 0) return Status::Corruption(path + ": " + std::string(truncated));
    data += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

Status SyncDirectoryOf(const std::string& path) {
  const std::string dir = DirectoryOf(path);
  ScopedFd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir_fd.get() < 0 || ::fsync(dir_fd.get()) != 0) {
    return Status::IoError(ErrnoMessage("cannot fsync directory", dir));
  }
  return Status::Ok();
}

}  // namespace urlsieve
