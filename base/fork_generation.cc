#include "base/fork_generation.h"

#include <pthread.h>

#include <atomic>

namespace urlsieve {
namespace {

std::atomic<uint64_t> generation{0};

void InChild() { generation.fetch_add(1, std::memory_order_relaxed); }

// Registered before the first generation is read: a fork before then happened before any object
// could record one.
const bool registered = [] { return pthread_atfork(nullptr, nullptr, InChild) == 0; }();

}  // namespace

uint64_t ForkGeneration() {
  (void)registered;
  return generation.load(std::memory_order_relaxed);
}

}  // namespace urlsieve
