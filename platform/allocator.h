// Allocators hand out memory on a Place and count what they hand out.
#ifndef SCOPEFLOW_PLATFORM_ALLOCATOR_H_
#define SCOPEFLOW_PLATFORM_ALLOCATOR_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include "absl/status/statusor.h"
#include "platform/kept_copies.h"
#include "platform/place.h"

namespace scopeflow {

// Every allocation's address is a multiple of this (a cache line, and the
// widest vector register the CPU kernels use).
inline constexpr size_t kAllocationAlignment = 64;

struct AllocatorStats {
  // Bytes handed out and not yet returned.
  int64_t bytes_in_use = 0;
  // The largest bytes_in_use seen since the allocator was made.
  int64_t peak_bytes_in_use = 0;
  // Allocations made since the allocator was made.
  int64_t num_allocations = 0;
  // Allocations not yet returned.
  int64_t live_allocations = 0;
};

class Allocator;

// A block of memory on one place, returned to its allocator when destroyed.
// Not copyable: share it through std::shared_ptr<Allocation> (as Tensor
// does). Holds its allocator alive, so allocations may outlive the registry.
class Allocation {
 public:
  Allocation(void* data, size_t size, std::shared_ptr<Allocator> allocator);
  ~Allocation();

  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;

  // Null for a zero-byte allocation.
  void* data() const { return data_; }
  size_t size() const { return size_; }
  const Place& place() const;

  // The version of the contents: it changes each time they are declared
  // written (MarkWritten), so a copy kept from one version is known stale
  // at the next.
  uint64_t version() const { return version_.load(std::memory_order_acquire); }
  void MarkWritten() { version_.fetch_add(1, std::memory_order_acq_rel); }

  // Whether every write to the contents is declared: false for memory a
  // caller owns (Tensor::FromExternal), which its owner may write at any
  // time. Copies of such contents must not be kept.
  bool tracks_writes() const;

  // Copies derived from the contents, kept with them (see KeptCopies).
  KeptCopies& kept_copies() const;

 private:
  void* data_;
  size_t size_;
  std::shared_ptr<Allocator> allocator_;
  std::atomic<uint64_t> version_{0};
  // Made on first use: a run's temporaries never keep copies, and
  // constructing and destroying KeptCopies' mutex for each of them was a
  // measurable part of an op's cost in nets of small tensors.
  mutable std::once_flag kept_copies_made_;
  mutable std::unique_ptr<KeptCopies> kept_copies_;
};

// Base of the allocators of each place. Thread-safe: Allocate and stats may
// be called from any number of threads at once.
class Allocator : public std::enable_shared_from_this<Allocator> {
 public:
  explicit Allocator(const Place& place) : place_(place) {}
  virtual ~Allocator() = default;

  Allocator(const Allocator&) = delete;
  Allocator& operator=(const Allocator&) = delete;

  const Place& place() const { return place_; }

  // Whether the memory handed out is this allocator's own, so that every
  // write to it goes through scopeflow (see Allocation::tracks_writes).
  virtual bool OwnsMemory() const { return true; }

  // Returns `bytes` bytes aligned to kAllocationAlignment, or
  // ResourceExhausted naming the size asked and the bytes in use. Zero bytes
  // gives an allocation with a null address that counts as nothing.
  // The allocator must be owned by a std::shared_ptr.
  absl::StatusOr<std::shared_ptr<Allocation>> Allocate(size_t bytes);

  AllocatorStats stats() const;

  // Starts a new peak: peak_bytes_in_use becomes the bytes in use now, so a
  // later stats() shows the peak of what ran in between.
  void ResetPeakBytesInUse();

 protected:
  virtual absl::StatusOr<void*> AllocateRaw(size_t bytes) = 0;
  virtual void FreeRaw(void* data, size_t bytes) = 0;

 private:
  friend class Allocation;
  void Free(void* data, size_t bytes);

  const Place place_;
  std::atomic<int64_t> bytes_in_use_{0};
  std::atomic<int64_t> peak_bytes_in_use_{0};
  std::atomic<int64_t> num_allocations_{0};
  // Live allocations are the difference: each allocation and free then
  // updates two counters, not three (an atomic add costs an op of a net of
  // small tensors about as much as a small kernel's loop).
  std::atomic<int64_t> num_frees_{0};
};

// The allocator of `place`, made on first use and kept for the life of the
// process. An error when the place does not exist here: a CUDA place in a
// build without CUDA, or a device index past the devices present.
absl::StatusOr<Allocator*> GetAllocator(const Place& place);

// Statistics of the allocator of `place` (all zero if it was never used).
absl::StatusOr<AllocatorStats> GetAllocatorStats(const Place& place);

}  // namespace scopeflow

#endif  // SCOPEFLOW_PLATFORM_ALLOCATOR_H_
