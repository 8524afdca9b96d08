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

std::string OneHotOp(int axis) {
  return absl::StrCat(R"pb(type: "one_hot"
                           inputs { slot: "Indices" vars: "i" }
                           inputs { slot: "Depth" vars: "d" }
                           inputs { slot: "Values" vars: "v" }
                           outputs { slot: "Out" vars: "y" }
                           attrs { name: "axis" i: )pb",
                      axis, " }");
}

TEST(OneHotTest, LastAxisWithNegativeAndOutOfRangeIndices) {
  // Depth 3: 0, -1 (= 2), 3 (none) and -4 (none).
  auto out = RunOp(OneHotOp(-1),
                   {{"i", MakeTensor<int64_t>({4}, {0, -1, 3, -4})},
                    {"d", MakeTensor<int64_t>({}, {3})},
                    {"v", MakeTensor<float>({2}, {-1, 5})}},
                   {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(4, 3));
  EXPECT_THAT(Values<float>((*out)[0]),
              ElementsAre(5, -1, -1, -1, -1, 5, -1, -1, -1, -1, -1, -1));
}

TEST(OneHotTest, AxisZeroOfAMatrixWithFloatIndicesAndDepth) {
  // Indices [[1, 0], [2.7, 0]] (2.7 truncates to 2), depth 3.0, axis 0:
  // out[k][r][c] = on where indices[r][c] == k.
  auto out = RunOp(OneHotOp(0),
                   {{"i", MakeTensor<float>({2, 2}, {1, 0, 2.7f, 0})},
                    {"d", MakeTensor<float>({1}, {3})},
                    {"v", MakeTensor<int32_t>({2}, {0, 1})}},
                   {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), kInt32);
  EXPECT_THAT((*out)[0].dims(), ElementsAre(3, 2, 2));
  EXPECT_THAT(Values<int32_t>((*out)[0]),
              ElementsAre(0, 1, 0, 1,   // k = 0
                          1, 0, 0, 0,   // k = 1
                          0, 0, 1, 0)); // k = 2
  auto middle = RunOp(OneHotOp(1),
                      {{"i", MakeTensor<int32_t>({2, 1}, {1, 0})},
                       {"d", MakeTensor<int32_t>({}, {2})},
                       {"v", MakeTensor<bool>({2}, {false, true})}},
                      {"y"});
  ASSERT_TRUE(middle.ok()) << middle.status();
  EXPECT_THAT((*middle)[0].dims(), ElementsAre(2, 2, 1));
  EXPECT_THAT(Values<bool>((*middle)[0]), ElementsAre(false, true, true, false));
}

TEST(OneHotTest, DepthDimensionIsUnknownAtPrepare) {
  auto info = InferAtPrepare(
      OneHotOp(1),
      {{"i", kInt64, {4, 5}}, {"d", kInt64, {1}}, {"v", kFloat32, {2}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(4, -1, 5));
}

TEST(OneHotTest, GradientReachesOffAndOnValues) {
  const absl::Status status = CheckGradient(
      OneHotOp(1),
      {{"i", MakeTensor<int64_t>({2, 3}, {0, 2, -1, 5, 1, 1})},
       {"d", MakeTensor<int64_t>({}, {3})},
       {"v", MakeTensor<double>({2}, {0.25, -1.5})}});
  EXPECT_TRUE(status.ok()) << status;
}

TEST(OneHotTest, BadInputsNameTheVariable) {
  const Tensor indices = MakeTensor<int64_t>({2}, {0, 1});
  absl::Status status = PrepareOp(OneHotOp(-1),
                                  {{"i", indices},
                                   {"d", MakeTensor<int64_t>({2}, {3, 3})},
                                   {"v", MakeTensor<float>({2}, {0, 1})}});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("op 0 (one_hot): input \"Depth\" (variable \"d\", "
                        "shape [2]): expected a scalar"));
  status = PrepareOp(OneHotOp(-1), {{"i", indices},
                                    {"d", MakeTensor<int64_t>({}, {3})},
                                    {"v", MakeTensor<float>({3}, {0, 1, 2})}});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("input \"Values\" (variable \"v\", shape [3]): "
                        "expected [off_value, on_value], a 1-D tensor of 2 "
                        "elements"));
  status = PrepareOp(OneHotOp(2), {{"i", indices},
                                   {"d", MakeTensor<int64_t>({}, {3})},
                                   {"v", MakeTensor<float>({2}, {0, 1})}});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("attribute \"axis\" = 2 is out of range for an output "
                        "of rank 2 (expected [-2, 2)), for input \"Indices\""));
  auto out = RunOp(OneHotOp(-1), {{"i", indices},
                                  {"d", MakeTensor<int64_t>({}, {-2})},
                                  {"v", MakeTensor<float>({2}, {0, 1})}},
                   {"y"});
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("op 0 (one_hot): input \"Depth\" (variable \"d\") = "
                        "-2: expected a non-negative number of classes"));
}

}  // namespace
}  // namespace scopeflow
