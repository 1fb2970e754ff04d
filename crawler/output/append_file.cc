#include "crawler/output/append_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/file_io.h"

namespace urlsieve {
namespace {

constexpr size_t kBufferLimit = 64 << 10;

Status Errno(const std::string& what, const std::string& path) {
  return Status::IoError(what + " " + path + ": " + std::strerror(errno));
}

}  // namespace

Result<std::unique_ptr<AppendFile>> AppendFile::Open(const std::string& path,
                                                     std::optional<uint64_t> truncate_to) {
  Result<VerifiedPrefix> prefix =
      truncate_to ? VerifyOutputPrefix(path, OutputMark{*truncate_to, {}}) : ReadOutputPrefix(path);
  if (!prefix.ok()) return prefix.status();
  return Open(path, std::move(*prefix));
}

Result<std::unique_ptr<AppendFile>> AppendFile::Open(const std::string& path,
                                                     VerifiedPrefix prefix) {
  ScopedFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
  if (fd.get() < 0) return Errno("cannot open", path);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Errno("cannot stat", path);
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (prefix.size > size) {
    return Status::Corruption(path + " is " + std::to_string(size) +
                              " bytes, shorter than the checkpoint's " +
                              std::to_string(prefix.size));
  }
  if (size != prefix.size && ::ftruncate(fd.get(), static_cast<off_t>(prefix.size)) != 0) {
    return Errno("cannot truncate", path);
  }
  if (::lseek(fd.get(), static_cast<off_t>(prefix.size), SEEK_SET) < 0) {
    return Errno("cannot seek", path);
  }
  return std::unique_ptr<AppendFile>(new AppendFile(path, fd.release(), std::move(prefix)));
}

AppendFile::AppendFile(std::string path, int fd, VerifiedPrefix prefix)
    : path_(std::move(path)), fd_(fd), written_(prefix.size), checksum_(prefix.checksum) {}

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

Result<OutputMark> AppendFile::Sync() {
  URLSIEVE_RETURN_IF_ERROR(Flush());
  if (written_ == synced_) return OutputMark{written_, checksum_.Digest()};
  if (::fdatasync(fd_) != 0) return Errno("cannot sync", path_);
  synced_ = written_;
  return OutputMark{written_, checksum_.Digest()};
}

Status AppendFile::WriteAll(std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd_, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("cannot write", path_);
    }
    written_ += static_cast<uint64_t>(n);
    checksum_.Update(data.substr(0, static_cast<size_t>(n)));
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

}  // namespace urlsieve
