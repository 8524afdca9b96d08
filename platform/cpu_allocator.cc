#include "platform/cpu_allocator.h"

#include <sys/mman.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <vector>

#include "absl/status/status.h"

namespace scopeflow {
namespace {

// Freed small blocks are kept per thread for the next allocation of the
// same size: a net of small tensors allocates and frees one per op, and
// the C library's aligned path costs more than such an op. AddressSanitizer
// builds skip the cache so that it still sees every use after free.
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kMaxCachedBytes = 0;
#else
constexpr size_t kMaxCachedBytes = 4096;
#endif
constexpr size_t kBlocksPerSize = 64;
constexpr size_t kSizeClasses = kMaxCachedBytes / kAllocationAlignment;

class BlockCache {
 public:
  BlockCache() { alive_ = true; }
  ~BlockCache() {
    alive_ = false;
    for (std::vector<void*>& blocks : free_) {
      for (void* block : blocks) std::free(block);
    }
  }
  // False once this thread's cache is destroyed (at thread exit, when other
  // thread-local objects may still free tensors).
  static bool alive() { return alive_; }

  void* Take(size_t rounded) {
    std::vector<void*>& blocks = free_[rounded / kAllocationAlignment - 1];
    if (blocks.empty()) return nullptr;
    void* block = blocks.back();
    blocks.pop_back();
    return block;
  }
  bool Keep(void* block, size_t rounded) {
    std::vector<void*>& blocks = free_[rounded / kAllocationAlignment - 1];
    if (blocks.size() >= kBlocksPerSize) return false;
    if (blocks.capacity() == 0) blocks.reserve(kBlocksPerSize);
    blocks.push_back(block);
    return true;
  }

 private:
  static thread_local bool alive_;
  std::array<std::vector<void*>, kSizeClasses> free_;
};

thread_local bool BlockCache::alive_ = false;

BlockCache* ThisThreadsCache() {
  if (kMaxCachedBytes == 0) return nullptr;
  thread_local BlockCache cache;
  return BlockCache::alive() ? &cache : nullptr;
}

// `bytes` rounded up to a multiple of `multiple` (overflow wraps to a value
// below `bytes`, which AllocateRaw checks).
size_t RoundUp(size_t bytes, size_t multiple = kAllocationAlignment) {
  return (bytes + multiple - 1) / multiple * multiple;
}

// Blocks of a huge page or more (weights, the copies Gemm keeps of them,
// large activations) start on a huge-page boundary and are advised for
// transparent huge pages. A product of one row streams all its weights
// once per run, a new 4 KiB page every 1024 floats: on small pages the MLP
// 784-1024-1024-10 at batch 1 took 1.1-1.3x as long on 2 threads
// (net_benchmark's BM_HugePageSpeedup, docs/PERFORMANCE.md). The advice
// covers every huge page the block touches; where the system gives none
// (THP off, or no huge page free at the first touch) the block keeps small
// pages.
constexpr size_t kHugePageBytes = size_t{2} << 20;

std::atomic<bool> huge_pages_for_large_blocks{true};

void* AllocateHugePageAligned(size_t bytes) {
  void* data = nullptr;
  if (posix_memalign(&data, kHugePageBytes, bytes) != 0) return nullptr;
  // Advice only: a kernel without THP refuses it, and the block still
  // works on small pages.
  madvise(data, RoundUp(bytes, kHugePageBytes), MADV_HUGEPAGE);
  return data;
}

}  // namespace

absl::StatusOr<void*> CpuAllocator::AllocateRaw(size_t bytes) {
  // aligned_alloc wants a multiple of the alignment.
  const size_t rounded = RoundUp(bytes);
  if (rounded < bytes) return absl::ResourceExhaustedError("size overflows");
  if (rounded <= kMaxCachedBytes) {
    if (BlockCache* cache = ThisThreadsCache()) {
      if (void* block = cache->Take(rounded)) return block;
    }
  }
  void* data = rounded >= kHugePageBytes && HugePagesForLargeHostBlocks()
                   ? AllocateHugePageAligned(rounded)
                   : std::aligned_alloc(kAllocationAlignment, rounded);
  if (data == nullptr) {
    return absl::ResourceExhaustedError("the C library's allocator failed");
  }
  return data;
}

void CpuAllocator::FreeRaw(void* data, size_t bytes) {
  const size_t rounded = RoundUp(bytes);
  if (data != nullptr && rounded <= kMaxCachedBytes) {
    if (BlockCache* cache = ThisThreadsCache()) {
      if (cache->Keep(data, rounded)) return;
    }
  }
  std::free(data);
}

void SetHugePagesForLargeHostBlocks(bool enabled) {
  huge_pages_for_large_blocks.store(enabled, std::memory_order_relaxed);
}

bool HugePagesForLargeHostBlocks() {
  return huge_pages_for_large_blocks.load(std::memory_order_relaxed);
}

}  // namespace scopeflow
