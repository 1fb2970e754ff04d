// FuzzCorpus: the inputs of one fuzz target's corpus (fuzz/corpus/<target>/), for tests that
// replay them: seeds, and what the fuzzer found, kept as regression inputs.
// Thread-safety: a pure function.
#ifndef URLSIEVE_TESTS_SUPPORT_FUZZ_CORPUS_H_
#define URLSIEVE_TESTS_SUPPORT_FUZZ_CORPUS_H_

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

namespace urlsieve::testing {

// (file name, contents) of every file in fuzz/corpus/<target>, in name order.
inline std::vector<std::pair<std::string, std::string>> FuzzCorpus(const std::string& target) {
  const std::filesystem::path dir =
      std::filesystem::path(URLSIEVE_SOURCE_DIR) / "fuzz/corpus" / target;
  std::vector<std::pair<std::string, std::string>> inputs;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    inputs.emplace_back(entry.path().filename().string(),
                        std::string(std::istreambuf_iterator<char>(in), {}));
  }
  std::sort(inputs.begin(), inputs.end());
  return inputs;
}

}  // namespace urlsieve::testing

#endif  // URLSIEVE_TESTS_SUPPORT_FUZZ_CORPUS_H_
