// scatter_nd: ONNX's examples (hand-checked), each reduction, negative and
// int32 indices, its errors, and its gradients for "none" and "add" (values
// and numeric checks).
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
using ::testing::HasSubstr;

std::string ScatterNdOp(const std::string& reduction) {
  return absl::StrCat(
      "type: \"scatter_nd\" inputs { slot: \"X\" vars: \"x\" } inputs { "
      "slot: \"Index\" vars: \"i\" } inputs { slot: \"Updates\" vars: \"u\" "
      "} outputs { slot: \"Out\" vars: \"y\" } attrs { name: \"reduction\" "
      "s: \"",
      reduction, "\" }");
}

TEST(ScatterNdTest, OnnxExampleOne) {
  // data [1..8], indices [[4], [3], [1], [7]], updates [9, 10, 11, 12].
  auto out = RunOp(ScatterNdOp("none"),
                   {{"x", MakeTensor<float>({8}, {1, 2, 3, 4, 5, 6, 7, 8})},
                    {"i", MakeTensor<int64_t>({4, 1}, {4, 3, 1, 7})},
                    {"u", MakeTensor<float>({4}, {9, 10, 11, 12})}},
                   {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 11, 3, 10, 9, 6, 7, 12));
}

TEST(ScatterNdTest, SlicesAndReductions) {
  // X [3, 2] = [[1, 2], [3, 4], [5, 6]]; rows 2, 0 and -1 (= 2 again) get
  // [10, 20], [30, 40] and [2, 3].
  const Tensor x = MakeTensor<int32_t>({3, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor index = MakeTensor<int32_t>({3, 1}, {2, 0, -1});
  const Tensor updates = MakeTensor<int32_t>({3, 2}, {10, 20, 30, 40, 2, 3});
  struct Case {
    const char* reduction;
    std::vector<int32_t> expected;
  };
  for (const Case& c :
       {Case{"none", {30, 40, 3, 4, 2, 3}}, Case{"add", {31, 42, 3, 4, 17, 29}},
        Case{"mul", {30, 80, 3, 4, 100, 360}},
        Case{"max", {30, 40, 3, 4, 10, 20}}, Case{"min", {1, 2, 3, 4, 2, 3}}}) {
    SCOPED_TRACE(c.reduction);
    auto out = RunOp(ScatterNdOp(c.reduction),
                     {{"x", x}, {"i", index}, {"u", updates}}, {"y"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values<int32_t>((*out)[0]), c.expected);
  }
  // Full rows of indices on a [2, 2] bool X: single elements.
  auto out = RunOp(ScatterNdOp("none"),
                   {{"x", MakeTensor<bool>({2, 2}, {false, false, true, true})},
                    {"i", MakeTensor<int64_t>({2, 2}, {0, 1, 1, -2})},
                    {"u", MakeTensor<bool>({2}, {true, false})}},
                   {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<bool>((*out)[0]), ElementsAre(false, true, false, true));
}

TEST(ScatterNdTest, Errors) {
  const Tensor x = MakeTensor<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  auto out = RunOp(ScatterNdOp("add"),
                   {{"x", x},
                    {"i", MakeTensor<int64_t>({2, 1}, {1, 3})},
                    {"u", MakeTensor<float>({2, 2}, {1, 1, 1, 1})}},
                   {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (scatter_nd): input \"Index\" (variable \"i\") "
                        "holds 3 at [1, 0], out of range for axis 0 of input "
                        "\"X\" (variable \"x\", shape [3, 2]): expected [-3, "
                        "3)"));
  absl::Status status =
      PrepareOp(ScatterNdOp("none"),
                {{"x", x},
                 {"i", MakeTensor<int64_t>({2, 1}, {1, 2})},
                 {"u", MakeTensor<float>({2, 3}, {1, 1, 1, 1, 1, 1})}});
  EXPECT_THAT(status.message(),
              HasSubstr("input \"Updates\" (variable \"u\", shape [2, 3]): "
                        "expected shape [2, 2]"));
  status = PrepareOp(ScatterNdOp("none"),
                     {{"x", x},
                      {"i", MakeTensor<int64_t>({1, 3}, {0, 0, 0})},
                      {"u", MakeTensor<float>({1}, {1})}});
  EXPECT_THAT(status.message(),
              HasSubstr("has rows of 3 indices: expected at most 2"));
}

std::string ScatterNdGradOp(const std::string& reduction) {
  return absl::StrCat(
      "type: \"scatter_nd_grad\" inputs { slot: \"Index\" vars: \"i\" } "
      "inputs { slot: \"Out@GRAD\" vars: \"g\" } outputs { slot: \"X@GRAD\" "
      "vars: \"dx\" } outputs { slot: \"Updates@GRAD\" vars: \"du\" } attrs "
      "{ name: \"reduction\" s: \"",
      reduction, "\" }");
}

TEST(ScatterNdTest, GradValues) {
  // Rows 2, 0 and 2 again of a [3, 2] X.
  const Tensor index = MakeTensor<int64_t>({3, 1}, {2, 0, 2});
  const Tensor g = MakeTensor<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  auto out =
      RunOp(ScatterNdGradOp("none"), {{"i", index}, {"g", g}}, {"dx", "du"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(0, 0, 3, 4, 0, 0));
  EXPECT_THAT((*out)[1].dims(), ElementsAre(3, 2));
  EXPECT_THAT(Values<float>((*out)[1]), ElementsAre(0, 0, 1, 2, 5, 6));
  out = RunOp(ScatterNdGradOp("add"), {{"i", index}, {"g", g}}, {"dx", "du"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 2, 3, 4, 5, 6));
  EXPECT_THAT(Values<float>((*out)[1]), ElementsAre(5, 6, 1, 2, 5, 6));
  const absl::Status status =
      PrepareOp(ScatterNdGradOp("mul"), {{"i", index}, {"g", g}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (scatter_nd_grad): attribute \"reduction\" is "
                        "\"mul\": gradients exist here for \"none\" and "
                        "\"add\" only"));
}

TEST(ScatterNdTest, GradientNumeric) {
  struct Case {
    Tensor index;
    Dims updates;
  };
  for (const char* reduction : {"none", "add"}) {
    for (const Case& c : {
             Case{MakeTensor<int64_t>({3, 1}, {2, 0, -1}), {3, 2, 2}},
             Case{MakeTensor<int32_t>({2, 2}, {1, 1, 1, -1}), {2, 2}},
             Case{MakeTensor<int64_t>({2, 3}, {0, 1, 1, 2, 0, 0}), {2}},
         }) {
      SCOPED_TRACE(reduction);
      const absl::Status status = CheckGradientTogetherAndAlone(
          ScatterNdOp(reduction),
          {{"x", MakeTensor<double>({3, 2, 2}, RandomValues(12, 8))},
           {"i", c.index},
           {"u", MakeTensor<double>(c.updates,
                                    RandomValues(NumElements(c.updates), 9))}},
          {"x", "u"});
      EXPECT_TRUE(status.ok()) << status;
    }
  }
}

}  // namespace
}  // namespace scopeflow
