#include "crawler/cli/line_io.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace urlsieve::cli {

LineReader::LineReader(int fd, size_t buffer_size) : fd_(fd), buffer_(buffer_size) {}

bool LineReader::Fill() {
  if (begin_ > 0) {  // keep the partial line, move it to the front
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buffer_.size()) buffer_.resize(buffer_.size() * 2);  // one very long line
  for (;;) {
    const ssize_t n = ::read(fd_, buffer_.data() + end_, buffer_.size() - end_);
    if (n > 0) {
      end_ += static_cast<size_t>(n);
      return true;
    }
    if (n == 0) {
      eof_ = true;
      return false;
    }
    if (errno == EINTR) continue;
    error_ = true;
    eof_ = true;
    return false;
  }
}

bool LineReader::Next(std::string_view* line) {
  size_t scanned = begin_;
  for (;;) {
    const void* nl = std::memchr(buffer_.data() + scanned, '\n', end_ - scanned);
    if (nl != nullptr) {
      const size_t pos = static_cast<const char*>(nl) - buffer_.data();
      *line = std::string_view(buffer_.data() + begin_, pos - begin_);
      begin_ = pos + 1;
      return true;
    }
    const size_t already = end_ - begin_;
    if (eof_ || !Fill()) {
      if (end_ == begin_) return false;
      *line = std::string_view(buffer_.data() + begin_, end_ - begin_);
      begin_ = end_;
      return true;
    }
    scanned = begin_ + already;
  }
}

LineWriter::LineWriter(int fd, size_t buffer_size) : fd_(fd), capacity_(buffer_size) {
  buffer_.reserve(capacity_);
}

LineWriter::~LineWriter() { Flush(); }

void LineWriter::Write(std::string_view text) {
  if (buffer_.size() + text.size() > capacity_) Flush();
  buffer_.append(text);
}

bool LineWriter::Flush() {
  size_t done = 0;
  while (ok_ && done < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      ok_ = false;
      break;
    }
    done += static_cast<size_t>(n);
  }
  buffer_.clear();
  return ok_;
}

}  // namespace urlsieve::cli
