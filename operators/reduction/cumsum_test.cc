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

// cumsum with the axis given as input "Axis" (variable "a").
std::string CumsumOp(bool exclusive, bool reverse) {
  return absl::StrCat(R"pb(type: "cumsum"
                           inputs { slot: "X" vars: "x" }
                           inputs { slot: "Axis" vars: "a" }
                           outputs { slot: "Out" vars: "y" }
                           attrs { name: "exclusive" b: )pb",
                      exclusive ? "true" : "false",
                      R"pb( } attrs { name: "reverse" b: )pb",
                      reverse ? "true" : "false", " }");
}

std::string CumsumAttrOp(int axis) {
  return absl::StrCat(R"pb(type: "cumsum"
                           inputs { slot: "X" vars: "x" }
                           outputs { slot: "Out" vars: "y" }
                           attrs { name: "axis" i: )pb",
                      axis, " }");
}

TEST(CumsumTest, FourModesAlongAVector) {
  const Tensor x = MakeTensor<float>({5}, {1, 2, 3, 4, 5});
  const Tensor axis = MakeTensor<int64_t>({}, {0});
  struct Case {
    bool exclusive, reverse;
    std::vector<float> expected;
  };
  // The ONNX cases test_cumsum_1d, _exclusive, _reverse, _reverse_exclusive.
  for (const Case& c : {Case{false, false, {1, 3, 6, 10, 15}},
                        Case{true, false, {0, 1, 3, 6, 10}},
                        Case{false, true, {15, 14, 12, 9, 5}},
                        Case{true, true, {14, 12, 9, 5, 0}}}) {
    auto out = RunOp(CumsumOp(c.exclusive, c.reverse),
                     {{"x", x}, {"a", axis}}, {"y"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values<float>((*out)[0]), c.expected);
  }
}

TEST(CumsumTest, AxesOfAMatrixAndIntegerDtypes) {
  // [[1, 2, 3], [4, 5, 6]].
  const Tensor x = MakeTensor<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto rows = RunOp(CumsumOp(false, false),
                    {{"x", x}, {"a", MakeTensor<int32_t>({}, {0})}}, {"y"});
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(Values<int32_t>((*rows)[0]), ElementsAre(1, 2, 3, 5, 7, 9));
  auto cols = RunOp(CumsumOp(false, false),
                    {{"x", x}, {"a", MakeTensor<int32_t>({1}, {-1})}}, {"y"});
  ASSERT_TRUE(cols.ok()) << cols.status();
  EXPECT_THAT(Values<int32_t>((*cols)[0]), ElementsAre(1, 3, 6, 4, 9, 15));
  auto attr = RunOp(
      CumsumAttrOp(1),
      {{"x", MakeTensor<int64_t>({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8})}}, {"y"});
  ASSERT_TRUE(attr.ok()) << attr.status();
  EXPECT_THAT(Values<int64_t>((*attr)[0]),
              ElementsAre(1, 2, 4, 6, 5, 6, 12, 14));
  auto f64 = RunOp(CumsumOp(true, true),
                   {{"x", MakeTensor<double>({2, 2}, {0.5, 1.5, 2.5, 3.5})},
                    {"a", MakeTensor<int64_t>({}, {1})}},
                   {"y"});
  ASSERT_TRUE(f64.ok()) << f64.status();
  EXPECT_THAT(Values<double>((*f64)[0]), ElementsAre(1.5, 0, 3.5, 0));
}

TEST(CumsumTest, GradientIsTheReverseSum) {
  for (bool exclusive : {false, true}) {
    for (bool reverse : {false, true}) {
      for (int64_t axis : {0, 1, -1}) {
        SCOPED_TRACE(absl::StrCat("exclusive ", exclusive, " reverse ",
                                  reverse, " axis ", axis));
        const absl::Status status = CheckGradient(
            CumsumOp(exclusive, reverse),
            {{"x", MakeTensor<double>({2, 3, 2}, RandomValues(12, 3))},
             {"a", MakeTensor<int64_t>({}, {axis})}});
        EXPECT_TRUE(status.ok()) << status;
      }
    }
  }
}

TEST(CumsumTest, BadAxisNamesTheInput) {
  const Tensor x = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto out = RunOp(CumsumOp(false, false),
                   {{"x", x}, {"a", MakeTensor<int64_t>({}, {2})}}, {"y"});
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("op 0 (cumsum): input \"Axis\" (variable \"a\") = 2 "
                        "is out of range for input \"X\" of rank 2 (expected "
                        "[-2, 2))"));
  absl::Status status =
      PrepareOp(CumsumOp(false, false),
                {{"x", x}, {"a", MakeTensor<int64_t>({2}, {0, 1})}});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("op 0 (cumsum): input \"Axis\" (variable \"a\") has "
                        "shape [2]: expected a scalar"));
  status = PrepareOp(CumsumOp(false, false),
                     {{"x", x}, {"a", MakeTensor<float>({}, {0})}});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("input \"Axis\" (variable \"a\") has dtype float32: "
                        "expected int32 or int64"));
  status = PrepareOp(CumsumAttrOp(-3), {{"x", x}});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("attribute \"axis\" = -3 is out of range for input "
                        "\"X\" of rank 2 (expected [-2, 2)), for input \"X\" "
                        "(variable \"x\""));
  status = PrepareOp(CumsumAttrOp(0),
                     {{"x", MakeTensor<bool>({2}, {true, false})}});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("input \"X\" (variable \"x\") has dtype bool"));
}

}  // namespace
}  // namespace scopeflow
