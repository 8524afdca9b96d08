#include "framework/run_scope_cache.h"

#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "platform/allocator.h"

namespace scopeflow {
namespace {

const std::vector<std::string> kNames = {"w", "t0", "t1"};
const std::vector<bool> kTemporary = {false, true, true};

TEST(RunScopeCacheTest, ReusesAScopeOfTheSameParentWithItsVariables) {
  Scope root;
  RunScopeCache cache;
  auto first = cache.Acquire(root, kNames, kTemporary);
  ASSERT_TRUE(first.ok()) << first.status();
  const Scope* scope = (*first)->scope;
  EXPECT_EQ((*first)->tensors[0], nullptr);  // persistable: not here
  ASSERT_NE((*first)->tensors[1], nullptr);
  EXPECT_EQ(scope->FindLocalVar("t1")->Get<Tensor>().value(),
            (*first)->tensors[2]);
  ASSERT_TRUE(
      (*first)->tensors[1]->Allocate(CPUPlace(), kFloat32, {1000}).ok());
  cache.Release(std::move(*first));
  EXPECT_EQ(cache.idle_count(), 1);

  auto second = cache.Acquire(root, kNames, kTemporary);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ((*second)->scope, scope);
  // Released emptied: the temporaries died with the first run.
  EXPECT_FALSE((*second)->tensors[1]->initialized());
  EXPECT_EQ(root.num_kids(), 1);
  cache.Release(std::move(*second));
}

TEST(RunScopeCacheTest, ConcurrentRunsGetDistinctScopesAndFewAreKept) {
  Scope root;
  RunScopeCache cache(/*max_idle_per_parent=*/2);
  std::vector<std::unique_ptr<RunScope>> runs;
  for (int i = 0; i < 3; ++i) {
    auto run = cache.Acquire(root, kNames, kTemporary);
    ASSERT_TRUE(run.ok());
    for (const auto& other : runs) EXPECT_NE(other->scope, (*run)->scope);
    runs.push_back(std::move(*run));
  }
  EXPECT_EQ(root.num_kids(), 3);
  for (auto& run : runs) cache.Release(std::move(run));
  EXPECT_EQ(cache.idle_count(), 2);
  EXPECT_EQ(root.num_kids(), 2);
}

TEST(RunScopeCacheTest, ScopesOfADestroyedParentAreDroppedSafely) {
  RunScopeCache cache;
  {
    Scope parent;
    auto run = cache.Acquire(parent, kNames, kTemporary);
    ASSERT_TRUE(run.ok());
    cache.Release(std::move(*run));
  }
  // The parent took its kid with it; a run on another scope must neither
  // reuse nor touch it.
  Scope other;
  auto run = cache.Acquire(other, kNames, kTemporary);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ((*run)->parent, &other);
  EXPECT_EQ(other.num_kids(), 1);
  cache.Release(std::move(*run));
  EXPECT_EQ(cache.idle_count(), 1);
}

TEST(RunScopeCacheTest, DestroyingTheCacheDeletesItsScopes) {
  Scope root;
  {
    RunScopeCache cache;
    auto run = cache.Acquire(root, kNames, kTemporary);
    ASSERT_TRUE(run.ok());
    cache.Release(std::move(*run));
    EXPECT_EQ(root.num_kids(), 1);
  }
  EXPECT_EQ(root.num_kids(), 0);
}

TEST(RunScopeCacheTest, ThreadsShareOneCache) {
  Scope root;
  RunScopeCache cache;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        auto run = cache.Acquire(root, kNames, kTemporary);
        ASSERT_TRUE(run.ok());
        ASSERT_TRUE(
            (*run)->tensors[1]->Allocate(CPUPlace(), kFloat32, {4}).ok());
        cache.Release(std::move(*run));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_LE(root.num_kids(), 4);
}

}  // namespace
}  // namespace scopeflow
