#include <cstdint>

#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string GatherOp(int axis) {
  return R"pb(type: "gather"
              inputs { slot: "X" vars: "x" }
              inputs { slot: "Index" vars: "i" }
              outputs { slot: "Out" vars: "y" }
              attrs { name: "axis" i:)pb" +
         std::to_string(axis) + "}";
}

TEST(GatherTest, MatrixIndexWithNegativeIndices) {
  // x = [[1, 2], [3, 4], [5, 6]]; rows 0, -1 (= 2), 2, 1.
  auto out = RunOp(GatherOp(0),
                   {{"x", MakeTensor<float>({3, 2}, {1, 2, 3, 4, 5, 6})},
                    {"i", MakeTensor<int64_t>({2, 2}, {0, -1, 2, 1})}},
                   {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 2, 2));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 2, 5, 6, 5, 6, 3, 4));
}

TEST(GatherTest, InnerAxisWithInt32Index) {
  // x = [[1, 2, 3], [4, 5, 6]]; columns 2 and -3 (= 0).
  const Tensor x = MakeTensor<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor index = MakeTensor<int32_t>({2}, {2, -3});
  auto out = RunOp(GatherOp(1), {{"x", x}, {"i", index}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 2));
  EXPECT_THAT(Values<int32_t>((*out)[0]), ElementsAre(3, 1, 6, 4));
  out = RunOp(GatherOp(-1), {{"x", x}, {"i", index}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int32_t>((*out)[0]), ElementsAre(3, 1, 6, 4));
}

TEST(GatherTest, ScalarIndexDropsTheAxis) {
  auto out = RunOp(
      GatherOp(0),
      {{"x", MakeTensor<bool>({3, 2}, {true, true, false, true, false, false})},
       {"i", MakeTensor<int64_t>({}, {1})}},
      {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), kBool);
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2));
  EXPECT_THAT(Values<bool>((*out)[0]), ElementsAre(false, true));
  auto f64 = RunOp(GatherOp(1),
                   {{"x", MakeTensor<double>({1, 3, 1}, {1.5, 2.5, 3.5})},
                    {"i", MakeTensor<int64_t>({3}, {2, 2, 0})}},
                   {"y"});
  ASSERT_TRUE(f64.ok()) << f64.status();
  EXPECT_THAT((*f64)[0].dims(), ElementsAre(1, 3, 1));
  EXPECT_THAT(Values<double>((*f64)[0]), ElementsAre(3.5, 3.5, 1.5));
}

TEST(GatherTest, UnknownDimsAtPrepare) {
  auto info = InferAtPrepare(
      GatherOp(1), {{"x", kFloat32, {-1, 4, 2}}, {"i", kInt64, {-1, 5}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(-1, -1, 5, 2));
  info = InferAtPrepare(GatherOp(0),
                        {{"x", kFloat32, {-1, 4}}, {"i", kInt64, {}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_FALSE(info->has_dims);
  EXPECT_EQ(info->dtype, kFloat32);
}

TEST(GatherTest, IndexOutOfRangeIsARunTimeErrorNamingTheValue) {
  const Tensor x = MakeTensor<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  auto out = RunOp(GatherOp(0),
                   {{"x", x}, {"i", MakeTensor<int64_t>({2, 2}, {0, 1, 3, 0})}},
                   {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (gather): input \"Index\" holds 3 at [1, 0], out "
                        "of range for axis 0 of input \"X\" (shape [3, 2]): "
                        "expected [-3, 3)"));
  out = RunOp(GatherOp(-1), {{"x", x}, {"i", MakeTensor<int32_t>({1}, {-3})}},
              {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (gather): input \"Index\" holds -3 at [0], out "
                        "of range for axis 1 of input \"X\" (shape [3, 2]): "
                        "expected [-2, 2)"));
}

TEST(GatherTest, PrepareErrorsNameOpAndVariable) {
  const Tensor x = MakeTensor<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  absl::Status status =
      PrepareOp(GatherOp(0), {{"x", x}, {"i", MakeTensor<float>({1}, {0})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (gather): input \"Index\" (variable \"i\") of "
                        "shape [1] has dtype float32: expected int32 or "
                        "int64"));
  status =
      PrepareOp(GatherOp(2), {{"x", x}, {"i", MakeTensor<int64_t>({1}, {0})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (gather): attribute \"axis\" = 2 is out of range "
                        "for rank 2 (expected [-2, 2)), for input \"X\" "
                        "(variable \"x\") of shape [3, 2]"));
}

}  // namespace
}  // namespace scopeflow
