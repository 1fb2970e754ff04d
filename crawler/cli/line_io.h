// LineReader and LineWriter: buffered, constant-memory line I/O on file descriptors for the
// streaming subcommands (canon, filter). Far faster than iostreams for millions of short lines.
//
// Thread-safety: none; one thread per object.
#ifndef URLSIEVE_CRAWLER_CLI_LINE_IO_H_
#define URLSIEVE_CRAWLER_CLI_LINE_IO_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace urlsieve::cli {

class LineReader {
 public:
  // A line longer than the buffer grows it, so no line is ever cut or lost.
  explicit LineReader(int fd, size_t buffer_size = 1 << 16);

  // Sets *line to the next line without its '\n' (valid until the next call). Returns false at end
  // of input; a last line without '\n' is still returned. *error is set on a read error.
  bool Next(std::string_view* line);
  bool error() const { return error_; }

 private:
  bool Fill();

  int fd_;
  std::vector<char> buffer_;
  size_t begin_ = 0;
  size_t end_ = 0;
  bool eof_ = false;
  bool error_ = false;
};

class LineWriter {
 public:
  explicit LineWriter(int fd, size_t buffer_size = 1 << 16);
  ~LineWriter();
  LineWriter(const LineWriter&) = delete;
  LineWriter& operator=(const LineWriter&) = delete;

  void Write(std::string_view text);
  void WriteLine(std::string_view line) {
    Write(line);
    Write("\n");
  }
  // Returns false if any write failed (e.g. a closed pipe).
  bool Flush();
  bool ok() const { return ok_; }

 private:
  int fd_;
  std::string buffer_;
  size_t capacity_;
  bool ok_ = true;
};

}  // namespace urlsieve::cli

#endif  // URLSIEVE_CRAWLER_CLI_LINE_IO_H_
