// scatter_elements: hand-computed values for each reduction, negative and
// int32 indices, bool, its errors, and its gradients for "none" and "add"
// (values and numeric checks).
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

std::string ScatterElementsOp(int axis, const std::string& reduction) {
  return absl::StrCat(
      "type: \"scatter_elements\" inputs { slot: \"X\" vars: \"x\" } inputs "
      "{ slot: \"Index\" vars: \"i\" } inputs { slot: \"Updates\" vars: "
      "\"u\" } outputs { slot: \"Out\" vars: \"y\" } attrs { name: \"axis\" "
      "i64: ",
      axis, " } attrs { name: \"reduction\" s: \"", reduction, "\" }");
}

TEST(ScatterElementsTest, OnnxExamples) {
  // ONNX's first example: axis 0 of zeros [3, 3].
  auto out = RunOp(
      ScatterElementsOp(0, "none"),
      {{"x", MakeTensor<float>({3, 3}, {0, 0, 0, 0, 0, 0, 0, 0, 0})},
       {"i", MakeTensor<int64_t>({2, 3}, {1, 0, 2, 0, 2, 1})},
       {"u", MakeTensor<float>({2, 3}, {1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f})}},
      {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]),
              ElementsAre(2.0f, 1.1f, 0, 1.0f, 0, 2.2f, 0, 2.1f, 1.2f));
  // The second: axis 1, index -2 (= 3) of a row of five.
  out = RunOp(ScatterElementsOp(1, "none"),
              {{"x", MakeTensor<float>({1, 5}, {1, 2, 3, 4, 5})},
               {"i", MakeTensor<int32_t>({1, 2}, {1, -2})},
               {"u", MakeTensor<float>({1, 2}, {1.1f, 2.1f})}},
              {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 1.1f, 3, 2.1f, 5));
}

TEST(ScatterElementsTest, EachReductionCombinesDuplicates) {
  // Three updates land on element 1 of [1, 2, 3, 4] and one on element 3.
  const Tensor x = MakeTensor<int64_t>({4}, {1, 2, 3, 4});
  const Tensor index = MakeTensor<int64_t>({4}, {1, 3, 1, 1});
  const Tensor updates = MakeTensor<int64_t>({4}, {5, -1, 7, 3});
  struct Case {
    const char* reduction;
    std::vector<int64_t> expected;
  };
  for (const Case& c :
       {Case{"none", {1, 3, 3, -1}},  // the last wins
        Case{"add", {1, 17, 3, 3}}, Case{"mul", {1, 210, 3, -4}},
        Case{"max", {1, 7, 3, 4}}, Case{"min", {1, 2, 3, -1}}}) {
    SCOPED_TRACE(c.reduction);
    auto out = RunOp(ScatterElementsOp(0, c.reduction),
                     {{"x", x}, {"i", index}, {"u", updates}}, {"y"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values<int64_t>((*out)[0]), c.expected);
  }
  auto out = RunOp(ScatterElementsOp(0, "add"),
                   {{"x", MakeTensor<bool>({2}, {false, true})},
                    {"i", MakeTensor<int32_t>({2}, {0, 0})},
                    {"u", MakeTensor<bool>({2}, {false, true})}},
                   {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<bool>((*out)[0]), ElementsAre(true, true));
}

TEST(ScatterElementsTest, Errors) {
  const Tensor x = MakeTensor<float>({2, 2}, {1, 2, 3, 4});
  const Tensor u = MakeTensor<float>({1, 2}, {5, 6});
  auto out = RunOp(
      ScatterElementsOp(1, "none"),
      {{"x", x}, {"i", MakeTensor<int64_t>({1, 2}, {0, -3})}, {"u", u}}, {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (scatter_elements): input \"Index\" (variable "
                        "\"i\") holds -3 at [0, 1], out of range for axis 1 "
                        "of input \"X\" (variable \"x\", shape [2, 2]): "
                        "expected [-2, 2)"));
  absl::Status status = PrepareOp(ScatterElementsOp(0, "none"),
                                  {{"x", x},
                                   {"i", MakeTensor<int64_t>({1, 2}, {0, 1})},
                                   {"u", MakeTensor<float>({2, 1}, {5, 6})}});
  EXPECT_THAT(status.message(),
              HasSubstr("input \"Updates\" (variable \"u\", shape [2, 1]): "
                        "expected the shape of input \"Index\" (variable "
                        "\"i\", shape [1, 2])"));
  status = PrepareOp(ScatterElementsOp(0, "none"),
                     {{"x", x},
                      {"i", MakeTensor<int64_t>({1, 2}, {0, 1})},
                      {"u", MakeTensor<double>({1, 2}, {5, 6})}});
  EXPECT_THAT(status.message(), HasSubstr("\"Updates\""));
  status = PrepareOp(
      ScatterElementsOp(0, "sum"),
      {{"x", x}, {"i", MakeTensor<int64_t>({1, 2}, {0, 1})}, {"u", u}});
  EXPECT_THAT(status.message(), HasSubstr("reduction"));
}

std::string ScatterElementsGradOp(int axis, const std::string& reduction) {
  return absl::StrCat(
      "type: \"scatter_elements_grad\" inputs { slot: \"Index\" vars: \"i\" "
      "} inputs { slot: \"Out@GRAD\" vars: \"g\" } outputs { slot: "
      "\"X@GRAD\" vars: \"dx\" } outputs { slot: \"Updates@GRAD\" vars: "
      "\"du\" } attrs { name: \"axis\" i64: ",
      axis, " } attrs { name: \"reduction\" s: \"", reduction, "\" }");
}

TEST(ScatterElementsTest, GradValues) {
  // Updates 0, 2 and 3 land on element 1, update 1 on element 3.
  const Tensor index = MakeTensor<int64_t>({4}, {1, 3, 1, 1});
  const Tensor g = MakeTensor<float>({4}, {10, 20, 30, 40});
  auto out = RunOp(ScatterElementsGradOp(0, "none"), {{"i", index}, {"g", g}},
                   {"dx", "du"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(10, 0, 30, 0));
  EXPECT_THAT(Values<float>((*out)[1]), ElementsAre(0, 40, 0, 20));
  out = RunOp(ScatterElementsGradOp(0, "add"), {{"i", index}, {"g", g}},
              {"dx", "du"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(10, 20, 30, 40));
  EXPECT_THAT(Values<float>((*out)[1]), ElementsAre(20, 40, 20, 20));
  const absl::Status status =
      PrepareOp(ScatterElementsGradOp(0, "max"), {{"i", index}, {"g", g}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (scatter_elements_grad): attribute "
                        "\"reduction\" is \"max\": gradients exist here for "
                        "\"none\" and \"add\" only"));
}

TEST(ScatterElementsTest, GradientNumeric) {
  for (const char* reduction : {"none", "add"}) {
    for (int axis : {0, 1, -1}) {
      SCOPED_TRACE(absl::StrCat(reduction, " axis ", axis));
      // Index [2, 2] into X [3, 3] with a duplicate along each axis.
      const Tensor index = MakeTensor<int64_t>({2, 2}, {2, 0, 2, -3});
      const absl::Status status = CheckGradientTogetherAndAlone(
          ScatterElementsOp(axis, reduction),
          {{"x", MakeTensor<double>({3, 3}, RandomValues(9, 5))},
           {"i", index},
           {"u", MakeTensor<double>({2, 2}, RandomValues(4, 6))}},
          {"x", "u"});
      EXPECT_TRUE(status.ok()) << status;
    }
  }
}

}  // namespace
}  // namespace scopeflow
