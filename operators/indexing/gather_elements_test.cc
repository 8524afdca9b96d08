// gather_elements: hand-computed values along each axis, negative and int32
// indices, the dtypes it copies, its errors, and its gradient (values and
// numeric checks).
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "framework/grad_check.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string GatherElementsOp(int axis) {
  return absl::StrCat(
      "type: \"gather_elements\" inputs { slot: \"X\" vars: \"x\" } inputs { "
      "slot: \"Index\" vars: \"i\" } outputs { slot: \"Out\" vars: \"y\" } "
      "attrs { name: \"axis\" i64: ",
      axis, " }");
}

TEST(GatherElementsTest, AlongEachAxis) {
  // x = [[1, 2], [3, 4]] (ONNX's example): along axis 1, [[0, 0], [1, 0]]
  // gives [[1, 1], [4, 3]].
  const Tensor x = MakeTensor<float>({2, 2}, {1, 2, 3, 4});
  auto out = RunOp(GatherElementsOp(1),
                   {{"x", x}, {"i", MakeTensor<int64_t>({2, 2}, {0, 0, 1, 0})}},
                   {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 2));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 1, 4, 3));
  // Along axis 0, an Index with fewer columns than X: [[1], [0], [1]] of
  // x = [[1, 2, 3], [4, 5, 6]] picks rows in column 0 only.
  out = RunOp(GatherElementsOp(0),
              {{"x", MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})},
               {"i", MakeTensor<int32_t>({3, 1}, {1, 0, 1})}},
              {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(3, 1));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(4, 1, 4));
}

TEST(GatherElementsTest, NegativeIndicesAndAxisOnRank3) {
  // x[a][b][c] = 100a + 10b + c, shape [2, 2, 3]; axis -1 picks c.
  std::vector<int64_t> values;
  for (int a = 0; a < 2; ++a) {
    for (int b = 0; b < 2; ++b) {
      for (int c = 0; c < 3; ++c) values.push_back(100 * a + 10 * b + c);
    }
  }
  auto out = RunOp(
      GatherElementsOp(-1),
      {{"x", MakeTensor<int64_t>({2, 2, 3}, values)},
       {"i", MakeTensor<int64_t>({2, 2, 2}, {-1, 0, 1, -3, 2, 2, 0, -2})}},
      {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 2, 2));
  EXPECT_THAT(Values<int64_t>((*out)[0]),
              ElementsAre(2, 0, 11, 10, 102, 102, 110, 111));
}

TEST(GatherElementsTest, CopiesBoolInt32AndFloat64) {
  auto out = RunOp(GatherElementsOp(0),
                   {{"x", MakeTensor<bool>({2, 2}, {true, false, false, true})},
                    {"i", MakeTensor<int32_t>({1, 2}, {1, 0})}},
                   {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), kBool);
  EXPECT_THAT(Values<bool>((*out)[0]), ElementsAre(false, false));
  out = RunOp(GatherElementsOp(0),
              {{"x", MakeTensor<int32_t>({3}, {7, 8, 9})},
               {"i", MakeTensor<int64_t>({4}, {2, 2, -3, 1})}},
              {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int32_t>((*out)[0]), ElementsAre(9, 9, 7, 8));
  out = RunOp(GatherElementsOp(0),
              {{"x", MakeTensor<double>({2}, {0.5, 1.5})},
               {"i", MakeTensor<int64_t>({0}, {})}},
              {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(0));
}

TEST(GatherElementsTest, IndexOutOfRangeNamesOpVariableAndValue) {
  const Tensor x = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto out = RunOp(GatherElementsOp(1),
                   {{"x", x}, {"i", MakeTensor<int64_t>({2, 2}, {0, 1, 2, 3})}},
                   {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (gather_elements): input \"Index\" (variable "
                        "\"i\") holds 3 at [1, 1], out of range for axis 1 of "
                        "input \"X\" (variable \"x\", shape [2, 3]): expected "
                        "[-3, 3)"));
  out = RunOp(GatherElementsOp(0),
              {{"x", x}, {"i", MakeTensor<int32_t>({1, 1}, {-3})}}, {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("holds -3 at [0, 0], out of range for axis 0"));
}

TEST(GatherElementsTest, PrepareErrorsNameOpAndVariable) {
  const Tensor x = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  absl::Status status = PrepareOp(
      GatherElementsOp(0), {{"x", x}, {"i", MakeTensor<float>({1, 1}, {0})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (gather_elements): input \"Index\" (variable "
                        "\"i\") has dtype float32: expected int32 or int64"));
  status = PrepareOp(GatherElementsOp(0),
                     {{"x", x}, {"i", MakeTensor<int64_t>({2}, {0, 1})}});
  EXPECT_THAT(status.message(),
              HasSubstr("input \"Index\" (variable \"i\", shape [2]) has rank "
                        "1: expected the rank of input \"X\" (variable \"x\", "
                        "shape [2, 3])"));
  status =
      PrepareOp(GatherElementsOp(0),
                {{"x", x}, {"i", MakeTensor<int64_t>({1, 4}, {0, 0, 0, 0})}});
  EXPECT_THAT(status.message(),
              HasSubstr("is larger than input \"X\" (variable \"x\", shape "
                        "[2, 3]) along axis 1: expected at most 3"));
  status = PrepareOp(GatherElementsOp(2),
                     {{"x", x}, {"i", MakeTensor<int64_t>({1, 1}, {0})}});
  EXPECT_THAT(status.message(),
              HasSubstr("input \"X\" (variable \"x\", shape [2, 3]): "
                        "attribute \"axis\""));
}

TEST(GatherElementsTest, UnknownDimsAtPrepare) {
  auto info =
      InferAtPrepare(GatherElementsOp(1),
                     {{"x", kFloat32, {-1, 4}}, {"i", kInt64, {-1, 2}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(-1, 2));
}

TEST(GatherElementsTest, GradScatterAddsRepeatedIndices) {
  // Along axis 1 of a [2, 3] X: row 0 picks columns 2, 2, 0 and row 1
  // picks -1 (= 2), 1, 1.
  const std::string op =
      "type: \"gather_elements_grad\" inputs { slot: \"X\" vars: \"x\" } "
      "inputs { slot: \"Index\" vars: \"i\" } inputs { slot: \"Out@GRAD\" "
      "vars: \"g\" } outputs { slot: \"X@GRAD\" vars: \"dx\" } attrs { name: "
      "\"axis\" i64: 1 }";
  auto out = RunOp(op,
                   {{"x", MakeTensor<float>({2, 3}, {0, 0, 0, 0, 0, 0})},
                    {"i", MakeTensor<int64_t>({2, 3}, {2, 2, 0, -1, 1, 1})},
                    {"g", MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})}},
                   {"dx"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(3, 0, 3, 0, 11, 4));
}

TEST(GatherElementsTest, GradientNumeric) {
  struct Case {
    int axis;
    Dims x_dims;
    Tensor index;
  };
  for (const Case& c : {
           Case{0,
                {3, 2},
                MakeTensor<int64_t>({4, 2}, {2, 0, 2, 1, -1, 0, 0, 0})},
           Case{1,
                {2, 3, 2},
                MakeTensor<int32_t>({2, 2, 2}, {0, 2, 1, 1, 2, 2, 0, 1})},
           Case{-1, {2, 3}, MakeTensor<int64_t>({1, 5}, {2, 2, 0, 1, -1})},
       }) {
    SCOPED_TRACE(c.axis);
    const Tensor x =
        MakeTensor<double>(c.x_dims, RandomValues(NumElements(c.x_dims), 3));
    const absl::Status status =
        CheckGradient(GatherElementsOp(c.axis), {{"x", x}, {"i", c.index}});
    EXPECT_TRUE(status.ok()) << status;
  }
}

}  // namespace
}  // namespace scopeflow
