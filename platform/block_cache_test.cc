#include "platform/block_cache.h"

#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/mutex.h"

namespace scopeflow {
namespace {

using ::testing::HasSubstr;

constexpr size_t kMiB = size_t{1} << 20;

// Host memory standing in for a device of `capacity` bytes, counting calls.
class FakeBackend final : public BlockCacheBackend {
 public:
  struct Counts {
    Mutex mu;
    size_t in_use = 0;
    int mallocs = 0;
    int frees = 0;
  };

  FakeBackend(size_t capacity, Counts* counts)
      : capacity_(capacity), counts_(counts) {}

  absl::StatusOr<void*> Malloc(size_t bytes) override {
    MutexLock lock(&counts_->mu);
    if (counts_->in_use + bytes > capacity_) {
      return absl::ResourceExhaustedError("fake device is full");
    }
    counts_->in_use += bytes;
    ++counts_->mallocs;
    return std::malloc(bytes);
  }
  void Free(void* data, size_t bytes) override {
    MutexLock lock(&counts_->mu);
    counts_->in_use -= bytes;
    ++counts_->frees;
    std::free(data);
  }

 private:
  const size_t capacity_;
  Counts* counts_;
};

class BlockCacheTest : public ::testing::Test {
 protected:
  std::unique_ptr<BlockCache> MakeCache(size_t capacity = 64 * kMiB,
                                        size_t limit = 0) {
    return std::make_unique<BlockCache>(
        std::make_unique<FakeBackend>(capacity, &counts_), limit);
  }
  FakeBackend::Counts counts_;
};

TEST_F(BlockCacheTest, FreedBlockIsReusedOnItsStream) {
  auto cache = MakeCache();
  void* a = *cache->Allocate(1000, /*stream=*/1);
  cache->Free(a);
  void* b = *cache->Allocate(900, 1);
  EXPECT_EQ(b, a);
  EXPECT_EQ(cache->stats().cache_hits, 1);
  EXPECT_EQ(cache->stats().segment_allocations, 1);
  cache->Free(b);
}

TEST_F(BlockCacheTest, OtherStreamsDoNotReuseACachedBlock) {
  auto cache = MakeCache();
  void* a = *cache->Allocate(3 * kMiB, 1);
  cache->Free(a);
  void* b = *cache->Allocate(3 * kMiB, 2);
  EXPECT_NE(b, a);
  EXPECT_EQ(cache->stats().segment_allocations, 2);
  cache->Free(b);
}

TEST_F(BlockCacheTest, SmallBlocksShareASegmentAndMergeWhenFreed) {
  auto cache = MakeCache();
  char* a = static_cast<char*>(*cache->Allocate(512, 1));
  char* b = static_cast<char*>(*cache->Allocate(512, 1));
  char* c = static_cast<char*>(*cache->Allocate(512, 1));
  EXPECT_EQ(b, a + 512);
  EXPECT_EQ(c, b + 512);
  EXPECT_EQ(cache->stats().segment_allocations, 1);
  EXPECT_EQ(cache->stats().bytes_in_use, 3 * 512);
  // Freeing b then a merges them: a 1024-byte request fits at a again.
  cache->Free(b);
  cache->Free(a);
  EXPECT_EQ(*cache->Allocate(1024, 1), a);
  cache->Free(a);
  cache->Free(c);
  // The segment is whole again, so it can be released.
  cache->ReleaseCached();
  EXPECT_EQ(cache->stats().bytes_reserved, 0);
  EXPECT_EQ(counts_.frees, 1);
}

TEST_F(BlockCacheTest, BestFitTakesTheSmallestCachedBlockThatFits) {
  auto cache = MakeCache();
  void* large = *cache->Allocate(6 * kMiB, 1);
  void* medium = *cache->Allocate(4 * kMiB, 1);
  cache->Free(large);
  cache->Free(medium);
  EXPECT_EQ(*cache->Allocate(3 * kMiB, 1), medium);
  EXPECT_EQ(*cache->Allocate(5 * kMiB, 1), large);
  cache->Free(medium);
  cache->Free(large);
}

TEST_F(BlockCacheTest, SizesAreRoundedAndCounted) {
  auto cache = MakeCache();
  void* a = *cache->Allocate(1, 1);
  void* b = *cache->Allocate(513, 1);
  BlockCacheStats stats = cache->stats();
  EXPECT_EQ(stats.bytes_in_use, 512 + 1024);
  EXPECT_EQ(stats.bytes_reserved, static_cast<int64_t>(2 * kMiB));
  cache->Free(a);
  cache->Free(b);
  stats = cache->stats();
  EXPECT_EQ(stats.bytes_in_use, 0);
  EXPECT_EQ(stats.peak_bytes_in_use, 512 + 1024);
  EXPECT_EQ(stats.bytes_reserved, static_cast<int64_t>(2 * kMiB));
}

TEST_F(BlockCacheTest, ZeroBytesIsAnError) {
  auto cache = MakeCache();
  EXPECT_FALSE(cache->Allocate(0, 1).ok());
}

TEST_F(BlockCacheTest, LimitFlushesTheCacheThenFailsClearly) {
  auto cache = MakeCache(64 * kMiB, /*limit=*/6 * kMiB);
  void* a = *cache->Allocate(3 * kMiB, 1);  // a 4 MiB segment
  cache->Free(a);                           // cached
  // 4 MiB cached + a 6 MiB segment is over the limit: the cache is given
  // back and the request fits.
  void* b = *cache->Allocate(5 * kMiB, 2);
  BlockCacheStats stats = cache->stats();
  EXPECT_EQ(stats.cache_flushes, 1);
  EXPECT_EQ(stats.segment_frees, 1);
  EXPECT_EQ(stats.bytes_reserved, static_cast<int64_t>(6 * kMiB));
  // Now nothing is cached, and the limit is reached.
  absl::StatusOr<void*> c = cache->Allocate(1000, 1);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(c.status().message(), HasSubstr("1024 bytes asked"));
  EXPECT_THAT(c.status().message(),
              HasSubstr("5.0 MiB in use, 6.0 MiB reserved"));
  EXPECT_THAT(c.status().message(), HasSubstr("limit 6.0 MiB"));
  cache->Free(b);
  // The same request fits once the limit is raised.
  cache->SetLimit(0);
  void* d = *cache->Allocate(1000, 1);
  cache->Free(d);
}

TEST_F(BlockCacheTest, BackendOutOfMemoryReleasesTheCacheAndRetriesOnce) {
  auto cache = MakeCache(/*capacity=*/8 * kMiB);
  void* a = *cache->Allocate(5 * kMiB, 1);  // a 6 MiB segment
  cache->Free(a);
  void* b = *cache->Allocate(5 * kMiB, 2);  // only fits once a is released
  EXPECT_EQ(cache->stats().cache_flushes, 1);
  absl::StatusOr<void*> c = cache->Allocate(5 * kMiB, 3);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(c.status().message(), HasSubstr("fake device is full"));
  cache->Free(b);
}

TEST_F(BlockCacheTest, ReleaseKeepsSegmentsWithBlocksInUse) {
  auto cache = MakeCache();
  void* a = *cache->Allocate(512, 1);
  void* b = *cache->Allocate(512, 1);
  cache->Free(a);
  cache->ReleaseCached();
  EXPECT_EQ(cache->stats().segment_frees, 0);
  cache->Free(b);
  cache->ReleaseCached();
  EXPECT_EQ(cache->stats().segment_frees, 1);
}

TEST_F(BlockCacheTest, ConcurrentAllocationsNeverOverlap) {
  auto cache = MakeCache(/*capacity=*/size_t{256} * kMiB);
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&cache, t] {
      for (int round = 0; round < 200; ++round) {
        std::vector<std::pair<char*, size_t>> held;
        for (size_t size : {size_t{700}, size_t{5000}, 2 * kMiB + 3}) {
          char* data = static_cast<char*>(*cache->Allocate(size, t % 2));
          // Each thread writes its own mark over the whole block; a block
          // handed out twice would show another thread's mark.
          std::fill(data, data + size, static_cast<char>(t));
          held.emplace_back(data, size);
        }
        for (auto& [data, size] : held) {
          for (size_t i = 0; i < size; i += 97) {
            ASSERT_EQ(data[i], static_cast<char>(t));
          }
          cache->Free(data);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(cache->stats().bytes_in_use, 0);
}

}  // namespace
}  // namespace scopeflow
