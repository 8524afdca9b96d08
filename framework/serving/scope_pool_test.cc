#include "framework/serving/scope_pool.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace scopeflow {
namespace {

TEST(ScopePoolTest, ReusesIdleScopes) {
  Scope parent;
  ScopePool pool(parent);
  Scope* first = nullptr;
  {
    ScopeLease lease(pool);
    first = &lease.scope();
    EXPECT_EQ(first->parent(), &parent);
  }
  {
    ScopeLease lease(pool);
    EXPECT_EQ(&lease.scope(), first);
  }
  EXPECT_EQ(pool.size(), 1);
  EXPECT_EQ(parent.num_kids(), 1);
}

TEST(ScopePoolTest, LendsEachScopeToOneHolderAtATime) {
  Scope parent;
  ScopePool pool(parent);
  ScopeLease a(pool);
  ScopeLease b(pool);
  EXPECT_NE(&a.scope(), &b.scope());
  EXPECT_EQ(pool.size(), 2);
}

TEST(ScopePoolTest, DeletesItsScopesFromTheParent) {
  Scope parent;
  {
    ScopePool pool(parent);
    ScopeLease a(pool);
    ScopeLease b(pool);
    EXPECT_EQ(parent.num_kids(), 2);
  }
  EXPECT_EQ(parent.num_kids(), 0);
}

// No two threads ever hold the same scope: each marks its scope with a
// variable and checks nobody else's mark is there.
TEST(ScopePoolTest, ThreadsNeverShareAScope) {
  Scope parent;
  ScopePool pool(parent);
  std::atomic<int> shared{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 500; ++i) {
        ScopeLease lease(pool);
        if (lease.scope().FindLocalVar("held") != nullptr) shared.fetch_add(1);
        lease.scope().Var("held");
        lease.scope().EraseVars({"held"});
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(shared.load(), 0);
  EXPECT_LE(pool.size(), 4);
}

}  // namespace
}  // namespace scopeflow
