#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/grad_check.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

// cumprod with the axis given as input "Axis" (variable "a").
std::string CumprodOp(bool exclusive, bool reverse) {
  return absl::StrCat(R"pb(type: "cumprod"
                           inputs { slot: "X" vars: "x" }
                           inputs { slot: "Axis" vars: "a" }
                           outputs { slot: "Out" vars: "y" }
                           attrs { name: "exclusive" b: )pb",
                      exclusive ? "true" : "false",
                      R"pb( } attrs { name: "reverse" b: )pb",
                      reverse ? "true" : "false", " }");
}

TEST(CumprodTest, FourModesAlongAVector) {
  const Tensor x = MakeTensor<float>({5}, {1, 2, 3, 4, 5});
  const Tensor axis = MakeTensor<int64_t>({}, {0});
  struct Case {
    bool exclusive, reverse;
    std::vector<float> expected;
  };
  // torch.cumprod of [1, 2, 3, 4, 5] (and its flip), shifted for
  // exclusive.
  for (const Case& c : {Case{false, false, {1, 2, 6, 24, 120}},
                        Case{true, false, {1, 1, 2, 6, 24}},
                        Case{false, true, {120, 120, 60, 20, 5}},
                        Case{true, true, {120, 60, 20, 5, 1}}}) {
    SCOPED_TRACE(absl::StrCat(c.exclusive, c.reverse));
    auto out = RunOp(CumprodOp(c.exclusive, c.reverse),
                     {{"x", x}, {"a", axis}}, {"y"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT(Values<float>((*out)[0]), ElementsAreArray(c.expected));
  }
}

TEST(CumprodTest, AlongTheSecondAxisOfIntegers) {
  auto out = RunOp(CumprodOp(false, false),
                   {{"x", MakeTensor<int32_t>({2, 3}, {1, 2, 3, -1, 0, 5})},
                    {"a", MakeTensor<int64_t>({}, {-1})}},
                   {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int32_t>((*out)[0]), ElementsAre(1, 2, 6, -1, 0, 0));
}

TEST(CumprodTest, GradientsMatchNumericOnesWithAndWithoutZeros) {
  for (const std::vector<double>& x :
       {std::vector<double>{0.5, -1.5, 2.0, 0.8, 1.2, -0.7},
        std::vector<double>{0.5, 0.0, 2.0, 0.0, 1.2, -0.7}}) {
    for (bool exclusive : {false, true}) {
      for (bool reverse : {false, true}) {
        for (int64_t axis : {0, 1}) {
          SCOPED_TRACE(absl::StrCat(x[1], exclusive, reverse, axis));
          const absl::Status status =
              CheckGradient(CumprodOp(exclusive, reverse),
                            {{"x", MakeTensor<double>({2, 3}, x)},
                             {"a", MakeTensor<int64_t>({}, {axis})}});
          EXPECT_TRUE(status.ok()) << status;
        }
      }
    }
  }
}

TEST(CumprodTest, AnAxisOutOfRangeNamesTheInput) {
  auto out = RunOp(CumprodOp(false, false),
                   {{"x", MakeTensor<float>({2}, {1, 2})},
                    {"a", MakeTensor<int64_t>({}, {3})}},
                   {"y"});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("input \"Axis\" (variable \"a\") = 3 is out of range"));
}

}  // namespace
}  // namespace scopeflow
