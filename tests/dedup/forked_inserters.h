// CountNewAcrossProcesses: the scaffold of the "exactly one caller in the world is told new"
// tests of a shared seen set. Forked processes, each with threads, insert the same ids (each
// thread in its own order and batch size) through an inserter the process opens for itself; the
// result is how many callers were told "new" for each id (1 everywhere when the set is right).
// Children report through files in `dir` and leave with _exit, so that no static destructor (a
// shared test server's) runs in them.
#ifndef URLSIEVE_TESTS_DEDUP_FORKED_INSERTERS_H_
#define URLSIEVE_TESTS_DEDUP_FORKED_INSERTERS_H_

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace urlsieve::testing {

// Inserts `ids`, setting (*is_new)[i] for ids[i]; false on an error.
using IdInserter = std::function<bool(const std::vector<int>& ids, std::vector<bool>* is_new)>;

// `open(p)` runs in child p before any thread: its inserter, or an empty function on failure.
// Ids are 0..keys-1; thread t of process p inserts batches of 10 + (p * threads + t) * 29 %
// max_batch ids. Failures of a child are test failures.
inline std::vector<int> CountNewAcrossProcesses(const std::filesystem::path& dir, int processes,
                                                int threads, int keys, int max_batch,
                                                const std::function<IdInserter(int)>& open) {
  std::vector<pid_t> children;
  for (int p = 0; p < processes; ++p) {
    const pid_t pid = ::fork();
    if (pid < 0) {
      ADD_FAILURE() << "fork failed";
      break;
    }
    if (pid == 0) {
      IdInserter insert = open(p);
      if (!insert) ::_exit(2);
      std::vector<std::vector<int>> fresh(threads);
      std::atomic<bool> failed{false};
      std::vector<std::thread> workers;
      for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
          const int id = p * threads + t;
          const int batch = 10 + id * 29 % max_batch;
          for (int begin = 0; begin < keys; begin += batch) {
            std::vector<int> ids;
            for (int j = begin; j < std::min(keys, begin + batch); ++j) {
              ids.push_back((j * 7919 + id * 1237) % keys);  // another order per thread
            }
            std::vector<bool> is_new;
            if (!insert(ids, &is_new)) {
              failed = true;
              return;
            }
            for (size_t j = 0; j < ids.size(); ++j) {
              if (is_new[j]) fresh[t].push_back(ids[j]);
            }
          }
        });
      }
      for (std::thread& worker : workers) worker.join();
      FILE* out = std::fopen((dir / std::to_string(p)).c_str(), "w");
      if (out == nullptr) ::_exit(3);
      for (const std::vector<int>& part : fresh) {
        for (int key : part) std::fprintf(out, "%d\n", key);
      }
      std::fclose(out);
      ::_exit(failed ? 4 : 0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    EXPECT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  std::vector<int> told(keys, 0);
  for (int p = 0; p < processes; ++p) {
    FILE* in = std::fopen((dir / std::to_string(p)).c_str(), "r");
    if (in == nullptr) {
      ADD_FAILURE() << "no report from child " << p;
      continue;
    }
    int key = 0;
    while (std::fscanf(in, "%d", &key) == 1) ++told[key];
    std::fclose(in);
  }
  return told;
}

}  // namespace urlsieve::testing

#endif  // URLSIEVE_TESTS_DEDUP_FORKED_INSERTERS_H_
