#include "framework/grad_check.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kSum3[] =
    "type: \"sum\" inputs { slot: \"X\" vars: [\"a\", \"b\", \"c\"] } "
    "outputs { slot: \"Out\" vars: \"y\" }";

TEST(SumTest, AddsEveryInput) {
  auto out = RunOp(kSum3,
                   {{"a", MakeTensor<float>({2}, {1, 2})},
                    {"b", MakeTensor<float>({2}, {10, 20})},
                    {"c", MakeTensor<float>({2}, {100, 200})}},
                   {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(111, 222));
}

TEST(SumTest, Int64) {
  auto out = RunOp(kSum3,
                   {{"a", MakeTensor<int64_t>({1}, {1})},
                    {"b", MakeTensor<int64_t>({1}, {2})},
                    {"c", MakeTensor<int64_t>({1}, {3})}},
                   {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(6));
}

TEST(SumTest, RejectsMixedShapesAndDtypes) {
  absl::Status shapes =
      PrepareOp(kSum3, {{"a", MakeTensor<float>({2}, {1, 2})},
                        {"b", MakeTensor<float>({3}, {1, 2, 3})},
                        {"c", MakeTensor<float>({2}, {1, 2})}});
  ASSERT_FALSE(shapes.ok());
  EXPECT_THAT(shapes.message(), HasSubstr("op 0 (sum)"));
  EXPECT_THAT(shapes.message(), HasSubstr("variable \"b\""));
  absl::Status dtypes = PrepareOp(kSum3, {{"a", MakeTensor<float>({1}, {1})},
                                          {"b", MakeTensor<float>({1}, {1})},
                                          {"c", MakeTensor<double>({1}, {1})}});
  ASSERT_FALSE(dtypes.ok());
  EXPECT_THAT(dtypes.message(), HasSubstr("variable \"c\""));
}

TEST(SumTest, Gradient) {
  EXPECT_TRUE(CheckGradient(kSum3, {{"a", MakeTensor<double>({2}, {1, 2})},
                                    {"b", MakeTensor<double>({2}, {3, 4})},
                                    {"c", MakeTensor<double>({2}, {5, 6})}})
                  .ok());
}

TEST(FillAnyLikeTest, TakesShapeAndDtypeOfX) {
  auto out = RunOp(
      "type: \"fill_any_like\" inputs { slot: \"X\" vars: \"x\" } outputs { "
      "slot: \"Out\" vars: \"y\" } attrs { name: \"value\" f: 1.5 }",
      {{"x", MakeTensor<double>({2, 1}, {7, 8})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), kFloat64);
  EXPECT_THAT(Values<double>((*out)[0]), ElementsAre(1.5, 1.5));
}

TEST(AssignTest, Gradient) {
  EXPECT_TRUE(
      CheckGradient("type: \"assign\" inputs { slot: \"X\" vars: \"x\" } "
                    "outputs { slot: \"Out\" vars: \"y\" }",
                    {{"x", MakeTensor<double>({3}, {1, -2, 3})}})
          .ok());
}

}  // namespace
}  // namespace scopeflow
