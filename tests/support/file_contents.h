// ReadFile / WriteFile: a whole file's bytes in and out, for tests that inspect or damage the files
// the code under test writes. Binary-safe; a missing or unreadable file reads as "".
// Thread-safety: free functions; the caller owns the file.
#ifndef URLSIEVE_TESTS_SUPPORT_FILE_CONTENTS_H_
#define URLSIEVE_TESTS_SUPPORT_FILE_CONTENTS_H_

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace urlsieve::testing {

inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Writes a new file: truncating the old one would make ext4 flush it on close (auto_da_alloc),
// which slows the tests that damage state files down a hundredfold.
inline void WriteFile(const std::filesystem::path& path, const std::string& data) {
  std::filesystem::remove(path);
  std::ofstream(path, std::ios::binary) << data;
}

}  // namespace urlsieve::testing

#endif  // URLSIEVE_TESTS_SUPPORT_FILE_CONTENTS_H_
