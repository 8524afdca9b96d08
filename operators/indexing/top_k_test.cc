// top_k: hand-computed values and indices along each axis, smallest, ties
// (lower index first), NaN, k from the input, its errors, and its gradient
// (numeric checks, through backward's gather_elements_grad).
#include <cstdint>
#include <limits>
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

std::string TopKOp(const std::string& attrs, bool k_input = false) {
  return absl::StrCat(
      "type: \"top_k\" inputs { slot: \"X\" vars: \"x\" } ",
      k_input ? "inputs { slot: \"K\" vars: \"k\" } " : "",
      "outputs { slot: \"Out\" vars: \"v\" } outputs { slot: \"Indices\" "
      "vars: \"i\" } ",
      attrs);
}

TEST(TopKTest, LargestAlongTheLastAxis) {
  // ONNX's example: X [3, 4] = 0..11, k 3.
  auto out = RunOp(TopKOp("attrs { name: \"k\" i64: 3 }"),
                   {{"x", MakeTensor<float>(
                              {3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})}},
                   {"v", "i"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(3, 3));
  EXPECT_THAT(Values<float>((*out)[0]),
              ElementsAre(3, 2, 1, 7, 6, 5, 11, 10, 9));
  EXPECT_EQ((*out)[1].dtype(), kInt64);
  EXPECT_THAT(Values<int64_t>((*out)[1]),
              ElementsAre(3, 2, 1, 3, 2, 1, 3, 2, 1));
}

TEST(TopKTest, SmallestAlongAnOuterAxisWithTies) {
  // X [4, 2]: column 0 = [3, 1, 3, 1], column 1 = [5, 5, 2, 9]; axis 0.
  const Tensor x = MakeTensor<int32_t>({4, 2}, {3, 5, 1, 5, 3, 2, 1, 9});
  auto out = RunOp(TopKOp("attrs { name: \"k\" i64: 3 } attrs { name: "
                          "\"axis\" i64: 0 } attrs { name: \"largest\" b: "
                          "false }"),
                   {{"x", x}}, {"v", "i"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(3, 2));
  // Column 0: 1 (row 1), 1 (row 3), 3 (row 0); column 1: 2, 5 (row 0), 5.
  EXPECT_THAT(Values<int32_t>((*out)[0]), ElementsAre(1, 2, 1, 5, 3, 5));
  EXPECT_THAT(Values<int64_t>((*out)[1]), ElementsAre(1, 2, 3, 0, 0, 1));
  // Largest keeps the lower index of tied values first too.
  out = RunOp(TopKOp("attrs { name: \"k\" i64: 4 } attrs { name: \"axis\" "
                     "i64: -2 }"),
              {{"x", x}}, {"v", "i"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>((*out)[1]), ElementsAre(0, 3, 2, 0, 1, 1, 3, 2));
}

TEST(TopKTest, NaNIsLargestAndKFromTheInput) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor x = MakeTensor<double>({5}, {1, nan, 4, -2, nan});
  auto out =
      RunOp(TopKOp("", /*k_input=*/true),
            {{"x", x}, {"k", MakeTensor<int64_t>({1}, {3})}}, {"v", "i"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>((*out)[1]), ElementsAre(1, 4, 2));
  EXPECT_EQ(Values<double>((*out)[0])[2], 4);
  out = RunOp(TopKOp("attrs { name: \"largest\" b: false }", true),
              {{"x", x}, {"k", MakeTensor<int64_t>({1}, {2})}}, {"v", "i"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<double>((*out)[0]), ElementsAre(-2, 1));
  EXPECT_THAT(Values<int64_t>((*out)[1]), ElementsAre(3, 0));
  // k = 0 gives empty outputs.
  out = RunOp(TopKOp("attrs { name: \"k\" i64: 0 }"), {{"x", x}}, {"v", "i"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(0));
}

TEST(TopKTest, KFedAtRunTimeLeavesTheAxisUnknownAtPrepare) {
  auto info =
      InferAtPrepare(TopKOp("attrs { name: \"axis\" i64: 0 }", true),
                     {{"x", kFloat32, {6, 3}}, {"k", kInt64, {1}}}, "v");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(-1, 3));
}

TEST(TopKTest, Errors) {
  const Tensor x = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  absl::Status status =
      PrepareOp(TopKOp("attrs { name: \"k\" i64: 4 }"), {{"x", x}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (top_k): k = 4 (attribute \"k\") is out of "
                        "range for axis 1 of input \"X\" (variable \"x\", "
                        "shape [2, 3]): expected [0, 3]"));
  status = PrepareOp(TopKOp(""), {{"x", x}});
  EXPECT_THAT(status.message(),
              HasSubstr("attribute \"k\" is -1 and input \"K\" is not bound"));
  auto out =
      RunOp(TopKOp("", true), {{"x", x}, {"k", MakeTensor<int64_t>({1}, {-1})}},
            {"v", "i"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (top_k): k = -1 (input \"K\" (variable \"k\")) "
                        "is out of range"));
  status = PrepareOp(TopKOp("", true),
                     {{"x", x}, {"k", MakeTensor<float>({1}, {1})}});
  EXPECT_THAT(status.message(), HasSubstr("input \"K\" (variable \"k\")"));
}

TEST(TopKTest, GradientNumeric) {
  // Distinct values, so that small steps keep the order.
  for (const char* attrs :
       {"attrs { name: \"k\" i64: 2 }",
        "attrs { name: \"k\" i64: 3 } attrs { name: \"axis\" i64: 0 } attrs "
        "{ name: \"largest\" b: false }",
        "attrs { name: \"k\" i: 1 } attrs { name: \"axis\" i: 1 }"}) {
    SCOPED_TRACE(attrs);
    const absl::Status status = CheckGradient(
        TopKOp(attrs),
        {{"x", MakeTensor<double>({3, 4, 2}, RandomValues(24, 4))}});
    EXPECT_TRUE(status.ok()) << status;
  }
}

}  // namespace
}  // namespace scopeflow
