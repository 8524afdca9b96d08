#include "platform/allocator.h"

#include <utility>

#include "absl/strings/str_format.h"
#include "platform/status_macros.h"

namespace scopeflow {

Allocation::Allocation(void* data, size_t size,
                       std::shared_ptr<Allocator> allocator)
    : data_(data), size_(size), allocator_(std::move(allocator)) {}

Allocation::~Allocation() {
  if (data_ != nullptr) allocator_->Free(data_, size_);
}

const Place& Allocation::place() const { return allocator_->place(); }

bool Allocation::tracks_writes() const { return allocator_->OwnsMemory(); }

KeptCopies& Allocation::kept_copies() const {
  std::call_once(kept_copies_made_,
                 [this] { kept_copies_ = std::make_unique<KeptCopies>(); });
  return *kept_copies_;
}

absl::StatusOr<std::shared_ptr<Allocation>> Allocator::Allocate(size_t bytes) {
  if (bytes == 0) {
    return std::make_shared<Allocation>(nullptr, 0, shared_from_this());
  }
  absl::StatusOr<void*> data = AllocateRaw(bytes);
  if (!data.ok()) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "out of memory on %s: asked for %d bytes with %d bytes in use in %d "
        "allocations (%s)",
        place_.ToString(), bytes, bytes_in_use_.load(),
        stats().live_allocations, data.status().message()));
  }
  const int64_t in_use =
      bytes_in_use_.fetch_add(static_cast<int64_t>(bytes)) + bytes;
  int64_t peak = peak_bytes_in_use_.load(std::memory_order_relaxed);
  while (in_use > peak &&
         !peak_bytes_in_use_.compare_exchange_weak(peak, in_use)) {
  }
  num_allocations_.fetch_add(1, std::memory_order_relaxed);
  return std::make_shared<Allocation>(*data, bytes, shared_from_this());
}

void Allocator::Free(void* data, size_t bytes) {
  FreeRaw(data, bytes);
  bytes_in_use_.fetch_sub(static_cast<int64_t>(bytes));
  // Release, with the acquire in stats(): whoever sees this free sees
  // the allocation it frees counted.
  num_frees_.fetch_add(1, std::memory_order_release);
}

AllocatorStats Allocator::stats() const {
  AllocatorStats stats;
  stats.bytes_in_use = bytes_in_use_.load();
  stats.peak_bytes_in_use = peak_bytes_in_use_.load();
  // Frees read first: an allocation counted among the frees is counted
  // among the allocations too, so live_allocations is never negative.
  const int64_t frees = num_frees_.load(std::memory_order_acquire);
  stats.num_allocations = num_allocations_.load();
  stats.live_allocations = stats.num_allocations - frees;
  return stats;
}

void Allocator::ResetPeakBytesInUse() {
  peak_bytes_in_use_.store(bytes_in_use_.load());
}

absl::StatusOr<AllocatorStats> GetAllocatorStats(const Place& place) {
  SF_ASSIGN_OR_RETURN(Allocator * allocator, GetAllocator(place));
  return allocator->stats();
}

}  // namespace scopeflow
