#include "platform/block_cache.h"

#include <algorithm>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace scopeflow {
namespace {

size_t RoundUp(size_t bytes, size_t multiple) {
  return (bytes + multiple - 1) / multiple * multiple;
}

size_t SegmentSizeFor(size_t size) {
  if (size <= BlockCache::kSmallRequest) return BlockCache::kSmallSegment;
  return RoundUp(size, BlockCache::kSmallSegment);
}

// A block is split when the rest is worth keeping: any rest for small
// requests, at least a small segment's worth of rest for large ones (a
// large block cut into slivers could no longer serve large requests).
size_t SmallestRest(size_t size) {
  return size <= BlockCache::kSmallRequest ? BlockCache::kRounding
                                           : BlockCache::kSmallRequest;
}

double MiB(int64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

}  // namespace

bool BlockCache::FreeOrder::operator()(const Block* a, const Block* b) const {
  return std::tie(a->stream, a->size, a->data) <
         std::tie(b->stream, b->size, b->data);
}

BlockCache::BlockCache(std::unique_ptr<BlockCacheBackend> backend,
                       size_t limit_bytes)
    : backend_(std::move(backend)), limit_(limit_bytes) {}

BlockCache::~BlockCache() {
  MutexLock lock(&mu_);
  ReleaseCachedLocked();
}

absl::StatusOr<void*> BlockCache::Allocate(size_t bytes, uintptr_t stream) {
  if (bytes == 0) {
    return absl::InvalidArgumentError("a block of 0 bytes was asked for");
  }
  const size_t size = RoundUp(bytes, kRounding);
  MutexLock lock(&mu_);
  absl::StatusOr<Block*> block = TakeFromCache(size, stream);
  if (block.ok()) {
    ++stats_.cache_hits;
  } else {
    block = NewSegment(size, stream);
    if (!block.ok()) return block.status();
  }
  Block* taken = *block;
  if (taken->size - size >= SmallestRest(size)) {
    auto rest = std::make_unique<Block>();
    rest->data = taken->data + size;
    rest->size = taken->size - size;
    rest->stream = stream;
    rest->prev = taken;
    rest->next = taken->next;
    if (taken->next != nullptr) taken->next->prev = rest.get();
    taken->next = rest.get();
    taken->size = size;
    free_.insert(rest.get());
    char* key = rest->data;
    blocks_.emplace(key, std::move(rest));
  }
  taken->in_use = true;
  stats_.bytes_in_use += static_cast<int64_t>(taken->size);
  stats_.peak_bytes_in_use =
      std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  return static_cast<void*>(taken->data);
}

absl::StatusOr<BlockCache::Block*> BlockCache::TakeFromCache(size_t size,
                                                             uintptr_t stream) {
  Block key{nullptr, size, stream};
  auto it = free_.lower_bound(&key);
  if (it == free_.end() || (*it)->stream != stream) {
    return absl::NotFoundError("no cached block fits");
  }
  Block* block = *it;
  free_.erase(it);
  return block;
}

absl::StatusOr<BlockCache::Block*> BlockCache::NewSegment(size_t size,
                                                          uintptr_t stream) {
  const size_t segment = SegmentSizeFor(size);
  auto over_limit = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return limit_ != 0 &&
           static_cast<size_t>(stats_.bytes_reserved) + segment > limit_;
  };
  absl::StatusOr<void*> data = absl::ResourceExhaustedError("over the limit");
  if (!over_limit()) data = backend_->Malloc(segment);
  if (!data.ok()) {
    // Cached blocks of other sizes and streams hold memory this request
    // could use: give them back and try once more.
    ReleaseCachedLocked();
    ++stats_.cache_flushes;
    if (!over_limit()) data = backend_->Malloc(segment);
  }
  if (!data.ok()) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "out of memory: %d bytes asked (a segment of %d), %s%s", size, segment,
        DescribeLocked(),
        over_limit() ? "" : absl::StrCat("; ", data.status().message())));
  }
  auto block = std::make_unique<Block>();
  block->data = static_cast<char*>(*data);
  block->size = segment;
  block->stream = stream;
  Block* raw = block.get();
  blocks_.emplace(raw->data, std::move(block));
  ++stats_.segment_allocations;
  stats_.bytes_reserved += static_cast<int64_t>(segment);
  stats_.peak_bytes_reserved =
      std::max(stats_.peak_bytes_reserved, stats_.bytes_reserved);
  return raw;
}

void BlockCache::Free(void* data) {
  MutexLock lock(&mu_);
  auto it = blocks_.find(static_cast<char*>(data));
  if (it == blocks_.end() || !it->second->in_use) return;
  Block* block = it->second.get();
  block->in_use = false;
  stats_.bytes_in_use -= static_cast<int64_t>(block->size);
  // Merge with free neighbours, so the segment can serve larger blocks
  // again (and be released once wholly free).
  if (Block* next = block->next; next != nullptr && !next->in_use) {
    free_.erase(next);
    block->size += next->size;
    block->next = next->next;
    if (next->next != nullptr) next->next->prev = block;
    blocks_.erase(next->data);
  }
  if (Block* prev = block->prev; prev != nullptr && !prev->in_use) {
    free_.erase(prev);
    prev->size += block->size;
    prev->next = block->next;
    if (block->next != nullptr) block->next->prev = prev;
    blocks_.erase(block->data);
    block = prev;
  }
  free_.insert(block);
}

void BlockCache::ReleaseCached() {
  MutexLock lock(&mu_);
  ReleaseCachedLocked();
}

void BlockCache::ReleaseCachedLocked() {
  std::vector<Block*> whole;
  for (Block* block : free_) {
    if (block->prev == nullptr && block->next == nullptr) {
      whole.push_back(block);
    }
  }
  for (Block* block : whole) {
    free_.erase(block);
    backend_->Free(block->data, block->size);
    ++stats_.segment_frees;
    stats_.bytes_reserved -= static_cast<int64_t>(block->size);
    blocks_.erase(block->data);
  }
}

void BlockCache::SetLimit(size_t limit_bytes) {
  MutexLock lock(&mu_);
  limit_ = limit_bytes;
}

size_t BlockCache::limit() const {
  MutexLock lock(&mu_);
  return limit_;
}

BlockCacheStats BlockCache::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

std::string BlockCache::Describe() const {
  MutexLock lock(&mu_);
  return DescribeLocked();
}

std::string BlockCache::DescribeLocked() const {
  return absl::StrFormat(
      "%.1f MiB in use, %.1f MiB reserved (%.1f MiB of it cached), limit %s",
      MiB(stats_.bytes_in_use), MiB(stats_.bytes_reserved),
      MiB(stats_.bytes_reserved - stats_.bytes_in_use),
      limit_ == 0 ? std::string("none")
                  : absl::StrFormat("%.1f MiB", MiB(limit_)));
}

}  // namespace scopeflow
