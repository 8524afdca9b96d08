#include "framework/step_scopes.h"

#include <memory>

#include "gtest/gtest.h"

namespace scopeflow {
namespace {

TEST(StepScopesTest, AddsKidsOfTheParentAndClearDeletesThem) {
  Scope parent;
  StepScopes steps;
  steps.Reset(parent);
  Scope& first = steps.Add();
  steps.Add();
  EXPECT_EQ(steps.size(), 2);
  EXPECT_EQ(&steps.at(0), &first);
  EXPECT_EQ(first.parent(), &parent);
  EXPECT_EQ(parent.num_kids(), 2);
  steps.Clear();
  EXPECT_EQ(steps.size(), 0);
  EXPECT_EQ(parent.num_kids(), 0);
}

TEST(StepScopesTest, ResetDeletesTheEarlierList) {
  Scope parent;
  StepScopes steps;
  steps.Reset(parent);
  steps.Add();
  steps.Reset(parent);
  EXPECT_EQ(parent.num_kids(), 0);
}

// Held in a variable of the parent itself: the parent destroys its kids
// before its variables, so the list finds its scopes already gone.
TEST(StepScopesTest, HeldByItsParentItOutlivesItsScopes) {
  auto parent = std::make_unique<Scope>();
  StepScopes* steps = *parent->Var("steps")->GetMutable<StepScopes>();
  steps->Reset(*parent);
  steps->Add().Var("x");
  steps->Add();
  parent.reset();  // No use after free (run under the sanitizers).
}

TEST(StepScopesTest, OutlivingItsParentDeletesNothing) {
  StepScopes steps;
  {
    Scope parent;
    steps.Reset(parent);
    steps.Add();
  }
  steps.Clear();
  EXPECT_EQ(steps.size(), 0);
}

}  // namespace
}  // namespace scopeflow
