#include "crawler/output/output_checksum.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <vector>

#include "base/file_io.h"

namespace urlsieve {
namespace {

constexpr size_t kReadChunk = 1 << 20;

Status Errno(const std::string& what, const std::string& path) {
  return Status::IoError(what + " " + path + ": " + std::strerror(errno));
}

// Reads the first `size` bytes of the open file `fd` into `checksum`.
Status ReadInto(int fd, const std::string& path, uint64_t size, OutputChecksum* checksum) {
  std::vector<char> buffer(static_cast<size_t>(std::min<uint64_t>(size, kReadChunk)));
  uint64_t done = 0;
  while (done < size) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(size - done, buffer.size()));
    ssize_t n = ::pread(fd, buffer.data(), want, static_cast<off_t>(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("cannot read", path);
    }
    if (n == 0) {
      return Status::Corruption(path + " shrank to " + std::to_string(done) +
                                " bytes while it was being checked");
    }
    checksum->Update(std::string_view(buffer.data(), static_cast<size_t>(n)));
    done += static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

}  // namespace

OutputChecksum::OutputChecksum() : state_(XXH3_createState()) {
  if (state_ == nullptr) throw std::bad_alloc();
  XXH3_64bits_reset(state_);
}

OutputChecksum::~OutputChecksum() { XXH3_freeState(state_); }

OutputChecksum::OutputChecksum(const OutputChecksum& other) : state_(XXH3_createState()) {
  if (state_ == nullptr) throw std::bad_alloc();
  XXH3_copyState(state_, other.state_);
}

OutputChecksum& OutputChecksum::operator=(const OutputChecksum& other) {
  if (this != &other) XXH3_copyState(state_, other.state_);
  return *this;
}

void OutputChecksum::Update(std::string_view bytes) {
  XXH3_64bits_update(state_, bytes.data(), bytes.size());
}

uint64_t OutputChecksum::Digest() const { return XXH3_64bits_digest(state_); }

std::string FormatChecksum(uint64_t checksum) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(checksum));
  return text;
}

Result<VerifiedPrefix> VerifyOutputPrefix(const std::string& path, const OutputMark& mark) {
  VerifiedPrefix prefix;
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno != ENOENT) return Errno("cannot open", path);
    if (mark.size == 0) return prefix;
    return Status::Corruption(path + " is missing; the crawl's checkpoint recorded " +
                              std::to_string(mark.size) + " bytes of it");
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Errno("cannot stat", path);
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size < mark.size) {
    return Status::Corruption(path + " is truncated: " + std::to_string(size) +
                              " bytes, shorter than the " + std::to_string(mark.size) +
                              " bytes the crawl's checkpoint recorded");
  }
  Status read = ReadInto(fd.get(), path, mark.size, &prefix.checksum);
  fd.Close();
  URLSIEVE_RETURN_IF_ERROR(read);
  prefix.size = mark.size;
  if (mark.checksum && prefix.checksum.Digest() != *mark.checksum) {
    return Status::Corruption(
        path + " was changed after the crawl wrote it: the XXH3-64 of its first " +
        std::to_string(mark.size) + " bytes is " + FormatChecksum(prefix.checksum.Digest()) +
        ", the crawl's checkpoint recorded " + FormatChecksum(*mark.checksum));
  }
  return prefix;
}

Result<VerifiedPrefix> ReadOutputPrefix(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return VerifiedPrefix();
    return Errno("cannot stat", path);
  }
  return VerifyOutputPrefix(path, OutputMark{static_cast<uint64_t>(st.st_size), std::nullopt});
}

}  // namespace urlsieve
