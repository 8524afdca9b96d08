#include "platform/parallel.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;

// The ranges a ParallelFor called its body with, sorted by their start.
std::vector<std::pair<int64_t, int64_t>> RangesOf(int64_t n, int64_t grain) {
  std::mutex mu;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  ParallelFor(n, grain, [&](int64_t begin, int64_t end) {
    std::lock_guard<std::mutex> lock(mu);
    ranges.emplace_back(begin, end);
  });
  std::sort(ranges.begin(), ranges.end());
  return ranges;
}

TEST(ParallelForTest, RangesCoverEveryItemOnce) {
  for (int64_t n : {1, 2, 3, 7, 100, 1001}) {
    for (int64_t grain : {1, 2, 5, 1000}) {
      const auto ranges = RangesOf(n, grain);
      ASSERT_FALSE(ranges.empty()) << n << " " << grain;
      int64_t next = 0;
      for (const auto& [begin, end] : ranges) {
        EXPECT_EQ(begin, next) << "n " << n << " grain " << grain;
        EXPECT_LT(begin, end);
        next = end;
      }
      EXPECT_EQ(next, n) << "grain " << grain;
    }
  }
}

TEST(ParallelForTest, SplitsIntoOneRangePerThreadAtMost) {
  const int threads = MaxParallelThreads();
  ASSERT_GE(threads, 1);
  EXPECT_EQ(RangesOf(1000, 1).size(),
            static_cast<size_t>(std::min(threads, 1000)));
  // Fewer than two grains of work stay in one call.
  EXPECT_THAT(RangesOf(1000, 600),
              ElementsAre(std::pair<int64_t, int64_t>(0, 1000)));
  EXPECT_EQ(RangesOf(1000, 500).size(),
            static_cast<size_t>(std::min(threads, 2)));
}

TEST(ParallelForTest, EmptyLoopCallsNothing) {
  bool called = false;
  ParallelFor(0, 1, [&](int64_t, int64_t) { called = true; });
  EXPECT_FALSE(called);
}

TEST(ParallelForTest, NestedLoopRunsOnTheCallingThread) {
  std::atomic<int64_t> sum{0};
  std::atomic<int> nested_ranges{0};
  ParallelFor(8, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      ParallelFor(100, 1, [&](int64_t b, int64_t e) {
        nested_ranges.fetch_add(1);
        for (int64_t j = b; j < e; ++j) sum.fetch_add(i * 100 + j);
      });
    }
  });
  // Every (i, j) once: the sum of 0 .. 799.
  EXPECT_EQ(sum.load(), 799 * 800 / 2);
  // Each inner loop ran as one call: on one thread of the outer loop's
  // team, or, with one thread, on the calling thread anyway.
  EXPECT_EQ(nested_ranges.load(), 8);
}

TEST(ScopedMaxThreadsTest, LimitsTheCallingThreadAndRestores) {
  const int before = MaxParallelThreads();
  {
    ScopedMaxThreads one(1);
    EXPECT_EQ(MaxParallelThreads(), 1);
    // One range however many items: the team has one thread.
    EXPECT_EQ(RangesOf(100, 1).size(), 1u);
    {
      // A limit above the present one leaves it.
      ScopedMaxThreads more(before + 1);
      EXPECT_EQ(MaxParallelThreads(), 1);
    }
    EXPECT_EQ(MaxParallelThreads(), 1);
  }
  EXPECT_EQ(MaxParallelThreads(), before);
}

}  // namespace
}  // namespace scopeflow
