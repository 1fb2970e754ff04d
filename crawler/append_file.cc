#include "crawler/append_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace urlsieve {
namespace {

constexpr size_t kBufferLimit = 64 << 10;

Status Errno(const std::string& what, const std::string& path) {
  return Status::IoError(what + " " + path + ": " + std::strerror(errno));
}

}  // namespace

Result<std::unique_ptr<AppendFile>> AppendFile::Open(const std::string& path,
                                                     std::optional<uint64_t> truncate_to) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("cannot open", path);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    Status s = Errno("cannot stat", path);
    ::close(fd);
    return s;
  }
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (truncate_to) {
    if (*truncate_to > size) {
      ::close(fd);
      return Status::Corruption(path + " is " + std::to_string(size) +
                                " bytes, shorter than the checkpoint's " +
                                std::to_string(*truncate_to));
    }
    if (::ftruncate(fd, static_cast<off_t>(*truncate_to)) != 0) {
      Status s = Errno("cannot truncate", path);
      ::close(fd);
      return s;
    }
    size = *truncate_to;
  }
  if (::lseek(fd, static_cast<off_t>(size), SEEK_SET) < 0) {
    Status s = Errno("cannot seek", path);
    ::close(fd);
    return s;
  }
  return std::unique_ptr<AppendFile>(new AppendFile(path, fd, size));
}

AppendFile::AppendFile(std::string path, int fd, uint64_t size)
    : path_(std::move(path)), fd_(fd), written_(size) {}

AppendFile::~AppendFile() {
  (void)Flush();
  ::close(fd_);
}

Status AppendFile::Append(std::string_view data) {
  if (buffer_.size() + data.size() <= kBufferLimit) {
    buffer_.append(data);
    return Status::Ok();
  }
  URLSIEVE_RETURN_IF_ERROR(Flush());
  if (data.size() >= kBufferLimit) return WriteAll(data);
  buffer_.append(data);
  return Status::Ok();
}

Status AppendFile::Flush() {
  if (buffer_.empty()) return Status::Ok();
  Status s = WriteAll(buffer_);
  buffer_.clear();
  return s;
}

Result<uint64_t> AppendFile::Sync() {
  URLSIEVE_RETURN_IF_ERROR(Flush());
  if (written_ == synced_) return written_;
  if (::fdatasync(fd_) != 0) return Errno("cannot sync", path_);
  synced_ = written_;
  return written_;
}

Status AppendFile::WriteAll(std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd_, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("cannot write", path_);
    }
    written_ += static_cast<uint64_t>(n);
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

}  // namespace urlsieve
