#include "framework/variable.h"

#include <string>
#include <vector>

#include "framework/tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::HasSubstr;

TEST(VariableTest, GetMutableCreatesThenReturnsTheSameObject) {
  Variable var;
  EXPECT_FALSE(var.IsInitialized());
  EXPECT_EQ(var.TypeName(), "nothing");
  absl::StatusOr<Tensor*> tensor = var.GetMutable<Tensor>();
  ASSERT_TRUE(tensor.ok());
  EXPECT_TRUE(var.IsInitialized());
  EXPECT_TRUE(var.IsType<Tensor>());
  EXPECT_FALSE(var.IsType<int>());
  ASSERT_TRUE((*tensor)->Allocate(CPUPlace(), kFloat32, {3}).ok());
  EXPECT_EQ(*var.GetMutable<Tensor>(), *tensor);
  absl::StatusOr<const Tensor*> read = var.Get<Tensor>();
  ASSERT_TRUE(read.ok());
  EXPECT_EQ((*read)->numel(), 3);
  EXPECT_EQ(var.TypeName(), "scopeflow::Tensor");
}

TEST(VariableTest, WrongTypeIsAnErrorNotAReplacement) {
  Variable var;
  **var.GetMutable<std::vector<int>>() = {1, 2, 3};
  absl::StatusOr<Tensor*> as_tensor = var.GetMutable<Tensor>();
  ASSERT_FALSE(as_tensor.ok());
  EXPECT_EQ(as_tensor.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(as_tensor.status().message(),
              HasSubstr("not the scopeflow::Tensor asked for"));
  EXPECT_THAT(as_tensor.status().message(), HasSubstr("std::vector<int"));
  absl::StatusOr<const Tensor*> get = var.Get<Tensor>();
  EXPECT_FALSE(get.ok());
  // The held object is untouched.
  EXPECT_EQ((*var.Get<std::vector<int>>())->size(), 3);
}

TEST(VariableTest, GetOnAnEmptyVariableIsAnError) {
  Variable var;
  absl::StatusOr<const Tensor*> tensor = var.Get<Tensor>();
  ASSERT_FALSE(tensor.ok());
  EXPECT_THAT(tensor.status().message(), HasSubstr("variable holds nothing"));
  EXPECT_FALSE(var.IsInitialized());
}

TEST(VariableTest, ClearAllowsAnotherType) {
  Variable var;
  **var.GetMutable<std::string>() = "text";
  var.Clear();
  EXPECT_FALSE(var.IsInitialized());
  EXPECT_TRUE(var.GetMutable<Tensor>().ok());
}

}  // namespace
}  // namespace scopeflow
