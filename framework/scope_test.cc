#include "framework/scope.h"

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "framework/default_scope.h"
#include "framework/tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Counts its live instances, to watch destruction.
struct Tracked {
  static std::atomic<int> live;
  Tracked() { live.fetch_add(1); }
  ~Tracked() { live.fetch_sub(1); }
};
std::atomic<int> Tracked::live{0};

TEST(ScopeTest, VarCreatesOnceLocally) {
  Scope scope;
  Variable* a = scope.Var("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(scope.Var("a"), a);
  EXPECT_EQ(scope.FindVar("a"), a);
  EXPECT_EQ(scope.FindLocalVar("a"), a);
  EXPECT_EQ(scope.FindVar("b"), nullptr);
  EXPECT_EQ(scope.parent(), nullptr);
}

TEST(ScopeTest, FindVarWalksUpAndLocalNamesShadow) {
  Scope root;
  Variable* w = root.Var("w");
  Variable* x_root = root.Var("x");
  Scope& kid = root.NewScope();
  Scope& grandkid = kid.NewScope();
  EXPECT_EQ(kid.parent(), &root);
  EXPECT_EQ(grandkid.parent(), &kid);

  EXPECT_EQ(grandkid.FindVar("w"), w);
  EXPECT_EQ(grandkid.FindLocalVar("w"), nullptr);
  EXPECT_EQ(grandkid.FindScope("w"), &root);

  Variable* x_kid = kid.Var("x");
  EXPECT_NE(x_kid, x_root);
  EXPECT_EQ(grandkid.FindVar("x"), x_kid);
  EXPECT_EQ(grandkid.FindScope("x"), &kid);
  EXPECT_EQ(root.FindVar("x"), x_root);
  EXPECT_EQ(grandkid.FindScope("nope"), nullptr);

  // Var never looks up: it makes a local variable shadowing the parent's.
  Variable* w_local = grandkid.Var("w");
  EXPECT_NE(w_local, w);
  EXPECT_EQ(grandkid.FindVar("w"), w_local);
}

TEST(ScopeTest, KidsSeeParentValuesWithoutCopies) {
  Scope root;
  Tensor* weight = *root.Var("w")->GetMutable<Tensor>();
  ASSERT_TRUE(weight->Allocate(CPUPlace(), kFloat32, {2}).ok());
  weight->data<float>()[0] = 3.0f;
  Scope& request = root.NewScope();
  const Tensor* seen = *request.FindVar("w")->Get<Tensor>();
  EXPECT_EQ(seen, weight);
  EXPECT_EQ(seen->data<float>()[0], 3.0f);
}

TEST(ScopeTest, DeleteScopeDestroysTheKidAndItsContents) {
  Scope root;
  Scope& kid = root.NewScope();
  kid.Var("t")->GetMutable<Tracked>().IgnoreError();
  kid.NewScope().Var("u")->GetMutable<Tracked>().IgnoreError();
  EXPECT_EQ(Tracked::live.load(), 2);
  EXPECT_EQ(root.num_kids(), 1);
  ASSERT_TRUE(root.DeleteScope(&kid).ok());
  EXPECT_EQ(Tracked::live.load(), 0);
  EXPECT_EQ(root.num_kids(), 0);
}

TEST(ScopeTest, DeleteScopeOfAStrangerIsAnError) {
  Scope root;
  Scope other;
  Scope& grandkid = root.NewScope().NewScope();
  absl::Status status = root.DeleteScope(&grandkid);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("is not a kid of scope"));
  EXPECT_EQ(root.DeleteScope(&other).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(root.DeleteScope(nullptr).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(root.num_kids(), 1);
}

TEST(ScopeTest, DropKidsDestroysEveryKid) {
  Scope root;
  for (int i = 0; i < 5; ++i) {
    root.NewScope().Var("t")->GetMutable<Tracked>().IgnoreError();
  }
  root.Var("kept")->GetMutable<Tracked>().IgnoreError();
  EXPECT_EQ(Tracked::live.load(), 6);
  root.DropKids();
  EXPECT_EQ(root.num_kids(), 0);
  EXPECT_EQ(Tracked::live.load(), 1);
  EXPECT_NE(root.FindVar("kept"), nullptr);
}

TEST(ScopeTest, DestroyingAScopeDestroysEverything) {
  {
    Scope root;
    root.Var("a")->GetMutable<Tracked>().IgnoreError();
    Scope& kid = root.NewScope();
    kid.Var("b")->GetMutable<Tracked>().IgnoreError();
    kid.NewScope().Var("c")->GetMutable<Tracked>().IgnoreError();
    EXPECT_EQ(Tracked::live.load(), 3);
  }
  EXPECT_EQ(Tracked::live.load(), 0);
}

TEST(ScopeTest, EraseVarsRemovesOnlyLocalNames) {
  Scope root;
  root.Var("shared")->GetMutable<Tracked>().IgnoreError();
  Scope& kid = root.NewScope();
  kid.Var("a")->GetMutable<Tracked>().IgnoreError();
  kid.Var("b");
  EXPECT_EQ(kid.EraseVars({"a", "b", "shared", "missing"}), 2);
  EXPECT_EQ(Tracked::live.load(), 1);
  EXPECT_THAT(kid.LocalVarNames(), IsEmpty());
  EXPECT_NE(kid.FindVar("shared"), nullptr);
}

TEST(ScopeTest, RenameKeepsTheVariable) {
  Scope scope;
  Variable* a = scope.Var("a");
  scope.Var("c");
  ASSERT_TRUE(scope.Rename("a", "b").ok());
  EXPECT_EQ(scope.FindVar("a"), nullptr);
  EXPECT_EQ(scope.FindVar("b"), a);
  EXPECT_THAT(scope.LocalVarNames(), ElementsAre("b", "c"));
  EXPECT_TRUE(scope.Rename("b", "b").ok());
}

TEST(ScopeTest, RenameErrors) {
  Scope root;
  root.Var("parent_only");
  Scope& scope = root.NewScope();
  Variable* a = scope.Var("a");
  Variable* b = scope.Var("b");
  absl::Status onto_existing = scope.Rename("a", "b");
  EXPECT_EQ(onto_existing.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(onto_existing.message(),
              HasSubstr("cannot rename \"a\" to \"b\""));
  EXPECT_EQ(scope.FindVar("a"), a);
  EXPECT_EQ(scope.FindVar("b"), b);

  absl::Status missing = scope.Rename("parent_only", "x");
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.message(), HasSubstr("no variable \"parent_only\""));
}

TEST(ScopeTest, LocalVarNamesAreSortedAndLocal) {
  Scope root;
  root.Var("z");
  Scope& kid = root.NewScope();
  kid.Var("m");
  kid.Var("b");
  EXPECT_THAT(kid.LocalVarNames(), ElementsAre("b", "m"));
}

TEST(ScopeTest, IdsAreNeverReused) {
  Scope root;
  uint64_t last = root.id();
  for (int i = 0; i < 100; ++i) {
    Scope& kid = root.NewScope();
    EXPECT_GT(kid.id(), last);
    last = kid.id();
    ASSERT_TRUE(root.DeleteScope(&kid).ok());
  }
}

TEST(DefaultScopeTest, GuardsNestAndRestore) {
  EXPECT_EQ(&DefaultScope(), &GlobalScope());
  Scope a;
  Scope b;
  {
    ScopeGuard outer(a);
    EXPECT_EQ(&DefaultScope(), &a);
    {
      ScopeGuard inner(b);
      EXPECT_EQ(&DefaultScope(), &b);
    }
    EXPECT_EQ(&DefaultScope(), &a);
  }
  EXPECT_EQ(&DefaultScope(), &GlobalScope());
}

TEST(DefaultScopeTest, GuardRestoresWhenAnExceptionUnwinds) {
  Scope a;
  try {
    ScopeGuard guard(a);
    throw std::runtime_error("request failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(&DefaultScope(), &GlobalScope());
}

TEST(DefaultScopeTest, ThreadsNeverSeeEachOthersDefault) {
  constexpr int kThreads = 4;
  Scope root;
  std::vector<Scope*> mine(kThreads);
  for (int t = 0; t < kThreads; ++t) mine[t] = &root.NewScope();
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      if (&DefaultScope() != &GlobalScope()) mismatches.fetch_add(1);
      for (int i = 0; i < 20000; ++i) {
        ScopeGuard guard(*mine[t]);
        if (&DefaultScope() != mine[t]) mismatches.fetch_add(1);
      }
      if (&DefaultScope() != &GlobalScope()) mismatches.fetch_add(1);
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace
}  // namespace scopeflow
