// File I/O helpers shared by the dedup layer's state files (the Bloom snapshot, the Bloom delta
// log): little-endian field encoding, an owning file descriptor, pwrite/pread loops that retry on
// EINTR and turn failures into a Status naming the file, and the directory fsync that makes a
// created or renamed file's entry durable. Internal to the library: not part of its API.
//
// Thread-safety: free functions on caller-owned buffers and descriptors; ScopedFd is a plain
// owner, not to be shared between threads without external synchronization.
#ifndef URLSIEVE_BASE_FILE_IO_H_
#define URLSIEVE_BASE_FILE_IO_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "base/status.h"

namespace urlsieve {

// Little-endian fixed-width fields, whatever the host's byte order.
inline void Put32(char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>(v >> (8 * i));
}
inline void Put64(char* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<char>(v >> (8 * i));
}
inline uint32_t Get32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    v |= static_cast<uint32_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  }
  return v;
}
inline uint64_t Get64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) {
    v |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  }
  return v;
}

// "<what> <path>: <strerror(errno)>"; call it before anything else can change errno.
std::string ErrnoMessage(const std::string& what, const std::string& path);

// Owns a file descriptor (or -1) and closes it when it goes out of scope.
class ScopedFd {
 public:
  explicit ScopedFd(int fd) : fd_(fd) {}
  ~ScopedFd();
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;

  int get() const { return fd_; }
  // Gives up ownership: the caller closes the descriptor.
  int release() { return std::exchange(fd_, -1); }
  // Closes now, reporting the error close() can carry (delayed write failures).
  bool Close();

 private:
  int fd_;
};

// Writes all `size` bytes at `offset`; IoError naming `path` on failure.
Status WriteAll(int fd, const char* data, size_t size, uint64_t offset, const std::string& path);

// Reads exactly `size` bytes at `offset`. The caller has checked the file's size, so end of file
// means it shrank under us: Corruption "<path>: <truncated>", like any truncation.
Status ReadAll(int fd, char* data, size_t size, uint64_t offset, const std::string& path,
               std::string_view truncated);

// The directory part of `path` ("." when it has none).
std::string DirectoryOf(const std::string& path);

// fsyncs the directory holding `path`, so that the file's creation or rename is durable.
Status SyncDirectoryOf(const std::string& path);

}  // namespace urlsieve

#endif  // URLSIEVE_BASE_FILE_IO_H_
