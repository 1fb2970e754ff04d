#include "dedup/content/packed_buckets.h"

#include <algorithm>
#include <cstdlib>
#include <new>

namespace urlsieve {

PackedBuckets::PackedBuckets(uint32_t bucket_count, uint32_t entry_bytes)
    : bucket_count_(bucket_count),
      entry_bytes_(entry_bytes),
      blocks_(new uint8_t*[bucket_count]()),
      memory_bytes_(uint64_t{bucket_count} * sizeof(uint8_t*)) {}

PackedBuckets::~PackedBuckets() { FreeAll(); }

PackedBuckets::PackedBuckets(PackedBuckets&& other) noexcept
    : bucket_count_(other.bucket_count_),
      entry_bytes_(other.entry_bytes_),
      blocks_(std::move(other.blocks_)),
      memory_bytes_(other.memory_bytes_) {
  other.bucket_count_ = 0;
  other.memory_bytes_ = 0;
}

PackedBuckets& PackedBuckets::operator=(PackedBuckets&& other) noexcept {
  if (this != &other) {
    FreeAll();
    bucket_count_ = other.bucket_count_;
    entry_bytes_ = other.entry_bytes_;
    blocks_ = std::move(other.blocks_);
    memory_bytes_ = other.memory_bytes_;
    other.bucket_count_ = 0;
    other.memory_bytes_ = 0;
  }
  return *this;
}

void PackedBuckets::FreeAll() {
  if (blocks_ == nullptr) return;
  for (uint32_t i = 0; i < bucket_count_; ++i) std::free(blocks_[i]);
}

void PackedBuckets::Resize(uint32_t bucket, uint32_t capacity) {
  uint8_t*& block = blocks_[bucket];
  const uint32_t size = block == nullptr ? 0 : Header(block)[0];
  const uint32_t old_capacity = block == nullptr ? 0 : Header(block)[1];
  if (capacity == 0) {
    std::free(block);
    block = nullptr;
  } else {
    void* grown = std::realloc(block, BlockBytes(capacity));
    if (grown == nullptr) throw std::bad_alloc();  // as std::vector: out of memory ends the process
    block = static_cast<uint8_t*>(grown);
    Header(block)[0] = size;
    Header(block)[1] = capacity;
    std::memset(block + kHeaderBytes + uint64_t{capacity} * entry_bytes_, 0, kSlackBytes);
  }
  memory_bytes_ += (capacity == 0 ? 0 : BlockBytes(capacity));
  memory_bytes_ -= (old_capacity == 0 ? 0 : BlockBytes(old_capacity));
}

uint8_t* PackedBuckets::InsertAt(uint32_t bucket, uint32_t position) {
  uint32_t size = this->size(bucket);
  const uint32_t capacity = blocks_[bucket] == nullptr ? 0 : Header(blocks_[bucket])[1];
  if (size == capacity) Resize(bucket, capacity + std::max<uint32_t>(capacity / 8, 1));
  uint8_t* base = blocks_[bucket] + kHeaderBytes;
  uint8_t* slot = base + uint64_t{position} * entry_bytes_;
  std::memmove(slot + entry_bytes_, slot, uint64_t{size - position} * entry_bytes_);
  Header(blocks_[bucket])[0] = size + 1;
  return slot;
}

void PackedBuckets::RemoveAt(uint32_t bucket, uint32_t position) {
  uint8_t* block = blocks_[bucket];
  const uint32_t size = Header(block)[0];
  uint8_t* slot = block + kHeaderBytes + uint64_t{position} * entry_bytes_;
  std::memmove(slot, slot + entry_bytes_, uint64_t{size - position - 1} * entry_bytes_);
  Header(block)[0] = size - 1;
  // Keep the capacity within 9/8 of the entries (plus one) after erasures too.
  const uint32_t capacity = Header(block)[1];
  if (size - 1 == 0) {
    Resize(bucket, 0);
  } else if (capacity - (size - 1) > (size - 1) / 4 + 1) {
    Resize(bucket, size - 1 + (size - 1) / 8 + 1);
  }
}

void PackedBuckets::SwapRemove(uint32_t bucket, uint32_t position) {
  const uint32_t last = size(bucket) - 1;
  if (position != last) {
    uint8_t* base = entries(bucket);
    std::memcpy(base + uint64_t{position} * entry_bytes_, base + uint64_t{last} * entry_bytes_,
                entry_bytes_);
  }
  RemoveAt(bucket, last);
}

}  // namespace urlsieve
