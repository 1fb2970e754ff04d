#include "dedup/bloom/thread_slot.h"

#include <bit>
#include <mutex>

namespace urlsieve {
namespace {

std::mutex g_mu;
uint64_t g_used = 0;  // bit i: slot i has an owner. Guarded by g_mu.
static_assert(kThreadSlots == 64, "g_used holds one bit per slot");

// Releases the thread's slot when the thread exits.
struct SlotOwner {
  uint32_t slot = kSharedThreadSlot;
  ~SlotOwner() {
    // Whatever this thread counts from here on goes to the shared slot.
    thread_slot_internal::t_slot = kSharedThreadSlot;
    if (slot == kSharedThreadSlot) return;
    std::lock_guard<std::mutex> lock(g_mu);
    g_used &= ~(uint64_t{1} << slot);
  }
};

}  // namespace

namespace thread_slot_internal {

uint32_t Assign() {
  thread_local SlotOwner owner;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_used != ~uint64_t{0}) {
      owner.slot = static_cast<uint32_t>(std::countr_one(g_used));
      g_used |= uint64_t{1} << owner.slot;
    }
  }
  t_slot = owner.slot;
  return owner.slot;
}

}  // namespace thread_slot_internal
}  // namespace urlsieve
