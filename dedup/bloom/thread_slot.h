// ThreadSlot: a small index that the calling thread owns until it exits, for per-thread counters
// updated with a plain load and store instead of a locked read-modify-write (the owner is its
// slot's only writer). A locked instruction is a full fence on x86: on the Bloom filter's insert
// path a second one would wait for the insert's own cache miss.
//
// Slots are reused: a thread's slot is released when it exits (under a mutex that the next owner
// takes too, so the next owner's writes happen after the previous owner's). Threads beyond
// kThreadSlots, and a thread that counts from a thread_local destructor after its slot was
// released, get kSharedThreadSlot, whose counters need atomic read-modify-writes.
//
// Thread-safety: CurrentThreadSlot may be called from any thread.
#ifndef URLSIEVE_DEDUP_BLOOM_THREAD_SLOT_H_
#define URLSIEVE_DEDUP_BLOOM_THREAD_SLOT_H_

#include <cstdint>

namespace urlsieve {

inline constexpr uint32_t kThreadSlots = 64;
inline constexpr uint32_t kSharedThreadSlot = kThreadSlots;

namespace thread_slot_internal {
inline constexpr uint32_t kUnassigned = kThreadSlots + 1;
// Constant-initialized (visibly, here) and trivially destructible, so reading it is one TLS load,
// with no call to a TLS init wrapper.
inline thread_local uint32_t t_slot = kUnassigned;
uint32_t Assign();
}  // namespace thread_slot_internal

// The calling thread's slot in [0, kThreadSlots), or kSharedThreadSlot.
inline uint32_t CurrentThreadSlot() {
  const uint32_t slot = thread_slot_internal::t_slot;
  return slot != thread_slot_internal::kUnassigned ? slot : thread_slot_internal::Assign();
}

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_BLOOM_THREAD_SLOT_H_
