// A caching allocator's bookkeeping, as PyTorch's and Paddle's device
// allocators keep it: memory is taken from a backend (cudaMalloc) in
// segments and never given back while in use; freed blocks are cached and
// handed out again best-fit (the smallest cached block that is large
// enough), split when much larger than asked, and merged with free
// neighbours of their segment. A cached block is reused only by the stream
// it was allocated on, so that work still queued on that stream and reading
// it runs before the next user's (stream order), without events.
//
// Device free calls synchronise the device: caching them keeps a net's
// steady-state runs free of cudaMalloc and cudaFree.
//
// Generic over the backend, so that its policy is tested on the host.
// Thread-safe.
#ifndef SCOPEFLOW_PLATFORM_BLOCK_CACHE_H_
#define SCOPEFLOW_PLATFORM_BLOCK_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "platform/mutex.h"

namespace scopeflow {

// Where segments come from.
class BlockCacheBackend {
 public:
  virtual ~BlockCacheBackend() = default;
  // ResourceExhausted when the memory is not there.
  virtual absl::StatusOr<void*> Malloc(size_t bytes) = 0;
  virtual void Free(void* data, size_t bytes) = 0;
};

struct BlockCacheStats {
  // Bytes of blocks handed out (sizes as rounded) and not yet returned.
  int64_t bytes_in_use = 0;
  int64_t peak_bytes_in_use = 0;
  // Bytes of segments taken from the backend (in use plus cached).
  int64_t bytes_reserved = 0;
  int64_t peak_bytes_reserved = 0;
  // Backend calls, and requests served from the cache.
  int64_t segment_allocations = 0;
  int64_t segment_frees = 0;
  int64_t cache_hits = 0;
  // Times the cache was emptied to retry a request that did not fit.
  int64_t cache_flushes = 0;
};

class BlockCache {
 public:
  // Block sizes are multiples of this (and every block address is, within
  // segments the backend aligns at least as much).
  static constexpr size_t kRounding = 512;
  // Requests up to this size share 2 MiB segments; a larger one gets a
  // segment of its own, rounded up to 2 MiB.
  static constexpr size_t kSmallRequest = size_t{1} << 20;
  static constexpr size_t kSmallSegment = size_t{2} << 20;

  // `limit_bytes` caps bytes_reserved (0: no cap).
  explicit BlockCache(std::unique_ptr<BlockCacheBackend> backend,
                      size_t limit_bytes = 0);
  ~BlockCache();
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;

  // A block of at least `bytes` (> 0) for `stream`. When neither the cache
  // nor the backend has room (or the limit would be passed), the cached
  // blocks are given back to the backend and the request tried once more;
  // after that, ResourceExhausted naming the size asked, the bytes in use
  // and reserved, and the limit.
  absl::StatusOr<void*> Allocate(size_t bytes, uintptr_t stream);
  // Returns a block of Allocate to the cache.
  void Free(void* data);

  // Gives every segment that is wholly cached back to the backend.
  void ReleaseCached();

  // 0: no limit. A lower limit than bytes_reserved takes effect as blocks
  // are freed and the cache released.
  void SetLimit(size_t limit_bytes);
  size_t limit() const;

  BlockCacheStats stats() const;
  // A description for errors: "X MiB in use, Y MiB reserved, limit Z".
  std::string Describe() const;

 private:
  struct Block {
    char* data;
    size_t size;
    uintptr_t stream;
    bool in_use = false;
    // Neighbours in the same segment (null at its ends).
    Block* prev = nullptr;
    Block* next = nullptr;
  };
  // Free blocks ordered by (stream, size, address): best fit is a
  // lower_bound.
  struct FreeOrder {
    bool operator()(const Block* a, const Block* b) const;
  };

  absl::StatusOr<Block*> TakeFromCache(size_t size, uintptr_t stream)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<Block*> NewSegment(size_t size, uintptr_t stream)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ReleaseCachedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string DescribeLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::unique_ptr<BlockCacheBackend> backend_;
  mutable Mutex mu_;
  size_t limit_ ABSL_GUARDED_BY(mu_);
  // Every block, free or in use, by address.
  absl::flat_hash_map<char*, std::unique_ptr<Block>> blocks_
      ABSL_GUARDED_BY(mu_);
  std::set<Block*, FreeOrder> free_ ABSL_GUARDED_BY(mu_);
  BlockCacheStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_PLATFORM_BLOCK_CACHE_H_
