#include "framework/parallel/parallel.h"

#include <atomic>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::HasSubstr;

TEST(ParallelTest, ResultsComeBackInTheOrderPut) {
  // Later items finish first: Get still returns them in order.
  Parallel<int, int> pool(3, [](int replica, int x) -> absl::StatusOr<int> {
    std::this_thread::sleep_for(std::chrono::milliseconds(3 * (3 - replica)));
    return x * 10 + replica;
  });
  for (int x = 0; x < 9; ++x) pool.Put(x);
  for (int x = 0; x < 9; ++x) {
    absl::StatusOr<int> result = pool.Get();
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(*result, x * 10 + x % 3);
  }
  EXPECT_EQ(pool.outstanding(), 0);
}

TEST(ParallelTest, EachReplicaRunsOnItsOwnThread) {
  std::mutex mutex;
  std::vector<std::set<std::thread::id>> threads(2);
  Parallel<int, int> pool(2, [&](int replica, int x) -> absl::StatusOr<int> {
    std::lock_guard<std::mutex> lock(mutex);
    threads[replica].insert(std::this_thread::get_id());
    return x;
  });
  for (int x = 0; x < 8; ++x) pool.Put(x);
  for (int x = 0; x < 8; ++x) ASSERT_TRUE(pool.Get().ok());
  ASSERT_EQ(threads[0].size(), 1u);
  ASSERT_EQ(threads[1].size(), 1u);
  EXPECT_NE(*threads[0].begin(), *threads[1].begin());
  EXPECT_EQ(threads[0].count(std::this_thread::get_id()), 0u);
}

TEST(ParallelTest, ReplicasRunAtOnce) {
  // Each replica waits for the other to start: only concurrent workers
  // finish.
  std::atomic<int> started{0};
  Parallel<int, int> pool(2, [&](int, int x) -> absl::StatusOr<int> {
    ++started;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (started.load() < 2) {
      if (std::chrono::steady_clock::now() > deadline) {
        return absl::DeadlineExceededError("the other replica never started");
      }
      std::this_thread::yield();
    }
    return x;
  });
  pool.Put(1);
  pool.Put(2);
  EXPECT_TRUE(pool.Get().ok());
  EXPECT_TRUE(pool.Get().ok());
}

TEST(ParallelTest, SerialFirstCallRunsTheFirstRoundOnTheCaller) {
  std::mutex mutex;
  std::vector<std::thread::id> threads;
  Parallel<int, int> pool(
      2,
      [&](int, int x) -> absl::StatusOr<int> {
        std::lock_guard<std::mutex> lock(mutex);
        threads.push_back(std::this_thread::get_id());
        return x;
      },
      /*serial_first_call=*/true);
  pool.Put(0);
  pool.Put(1);
  {
    // Both ran before Put returned.
    std::lock_guard<std::mutex> lock(mutex);
    ASSERT_EQ(threads.size(), 2u);
    EXPECT_EQ(threads[0], std::this_thread::get_id());
    EXPECT_EQ(threads[1], std::this_thread::get_id());
  }
  pool.Put(2);
  pool.Put(3);
  for (int x = 0; x < 4; ++x) EXPECT_EQ(*pool.Get(), x);
  std::lock_guard<std::mutex> lock(mutex);
  ASSERT_EQ(threads.size(), 4u);
  EXPECT_NE(threads[2], std::this_thread::get_id());
  EXPECT_NE(threads[3], std::this_thread::get_id());
}

TEST(ParallelTest, AFailingReplicaIsNamedAndTheOthersStillAnswer) {
  Parallel<int, int> pool(3, [](int replica, int x) -> absl::StatusOr<int> {
    if (replica == 1) return absl::InvalidArgumentError("shard is empty");
    return x;
  });
  for (int x = 0; x < 3; ++x) pool.Put(x);
  EXPECT_EQ(*pool.Get(), 0);
  absl::StatusOr<int> failed = pool.Get();
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(failed.status().message(),
              HasSubstr("replica 1: shard is empty"));
  EXPECT_EQ(*pool.Get(), 2);
}

TEST(ParallelTest, DestroyingWithItemsNotGotWaitsForThemAndJoins) {
  // Items still running when the pool goes: the destructor waits, so the
  // counter the work writes (which outlives the pool) sees every item and
  // no worker touches it afterwards.
  std::atomic<int> finished{0};
  {
    Parallel<int, int> pool(2, [&](int, int x) -> absl::StatusOr<int> {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      ++finished;
      if (x == 3) return absl::InternalError("late failure");
      return x;
    });
    for (int x = 0; x < 6; ++x) pool.Put(x);
    EXPECT_TRUE(pool.Get().ok());
  }
  EXPECT_EQ(finished.load(), 6);
}

TEST(ParallelTest, GetWithNothingOutstandingIsAnError) {
  Parallel<int, int> pool(1,
                          [](int, int x) -> absl::StatusOr<int> { return x; });
  absl::StatusOr<int> result = pool.Get();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(result.status().message(), HasSubstr("no item is outstanding"));
}

TEST(ParallelTest, MoveOnlyInputs) {
  Parallel<std::unique_ptr<int>, int> pool(
      2, [](int, std::unique_ptr<int> x) -> absl::StatusOr<int> {
        return *x + 1;
      });
  pool.Put(std::make_unique<int>(1));
  pool.Put(std::make_unique<int>(2));
  EXPECT_EQ(*pool.Get(), 2);
  EXPECT_EQ(*pool.Get(), 3);
}

}  // namespace
}  // namespace scopeflow
