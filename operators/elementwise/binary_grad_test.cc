// Gradients of the binary broadcast ops: numeric checks in float64 for
// every op, shape pair and input position, and hand-computed float32 values
// of the gradient ops.
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "framework/grad_check.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatEq;
using ::testing::HasSubstr;
using ::testing::Pointwise;

std::string BinaryOp(const std::string& type) {
  return absl::StrFormat(
      "type: \"%s\" inputs { slot: \"X\" vars: \"x\" } inputs { slot: \"Y\" "
      "vars: \"y\" } outputs { slot: \"Out\" vars: \"out\" }",
      type);
}

// A float64 tensor of `dims` with values drawn uniformly from [lo, hi),
// negated at odd positions if `alternate` (values away from 0 of both
// signs).
Tensor Random(const Dims& dims, double lo, double hi, uint32_t seed,
              bool alternate = false) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(lo, hi);
  std::vector<double> values(NumElements(dims));
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = uniform(rng) * (alternate && i % 2 == 1 ? -1 : 1);
  }
  return MakeTensor<double>(dims, values);
}

struct ShapePair {
  Dims x;
  Dims y;
};

// Same shapes, a bias each way, a broadcast of both, a single element each
// way, a broadcast in the middle dimension and rows longer than the
// reduction's 8 lanes.
std::vector<ShapePair> ShapePairs() {
  return {
      {{2, 3}, {2, 3}},    {{2, 3}, {3}},       {{3}, {2, 3}},
      {{2, 1, 4}, {3, 1}}, {{3, 1}, {2, 1, 4}}, {{2, 3}, {1}},
      {{1}, {2, 3}},       {{2, 3, 4}, {3, 1}}, {{1, 3}, {2, 1}},
      {{1}, {1}},          {{3, 10}, {3, 1}},
  };
}

// An op and the ranges of its inputs, away from points where it is not
// differentiable (division by 0, pow at x <= 0).
struct OpCase {
  std::string op;
  double x_lo, x_hi;
  double y_lo, y_hi;
  bool y_alternates;  // y takes both signs, away from 0
};

std::vector<OpCase> OpCases() {
  return {
      {"add", -2, 2, -2, 2, false},
      {"sub", -2, 2, -2, 2, false},
      {"mul", -2, 2, -2, 2, false},
      {"div", -2, 2, 0.5, 2, true},
      {"pow", 0.5, 2, -2, 2, false},
      // Continuous random values: no two are within the check's step.
      {"max", -2, 2, -2, 2, false},
      {"min", -2, 2, -2, 2, false},
  };
}

TEST(BinaryGradTest, NumericCheckForEveryShapeAndInput) {
  uint32_t seed = 1;
  for (const OpCase& c : OpCases()) {
    for (const ShapePair& shapes : ShapePairs()) {
      SCOPED_TRACE(absl::StrCat(c.op, " ", DimsToString(shapes.x), " with ",
                                DimsToString(shapes.y)));
      const std::vector<Feed> feeds = {
          {"x", Random(shapes.x, c.x_lo, c.x_hi, seed++)},
          {"y", Random(shapes.y, c.y_lo, c.y_hi, seed++, c.y_alternates)}};
      absl::Status both = CheckGradient(BinaryOp(c.op), feeds);
      EXPECT_TRUE(both.ok()) << both;
      // One input at a time: the other gradient output is left unbound.
      for (const char* input : {"x", "y"}) {
        GradCheckOptions options;
        options.wrt = {input};
        options.seed = seed;
        absl::Status status = CheckGradient(BinaryOp(c.op), feeds, options);
        EXPECT_TRUE(status.ok()) << input << ": " << status;
      }
    }
  }
}

TEST(BinaryGradTest, PowOfANegativeBaseByAWholeExponent) {
  // d/dx x^y = y x^(y-1) holds for x < 0 when y is whole (d/dy does not
  // exist there).
  GradCheckOptions options;
  options.wrt = {"x"};
  absl::Status status =
      CheckGradient(BinaryOp("pow"),
                    {{"x", Random({2, 3}, -2, -0.5, 7)},
                     {"y", MakeTensor<double>({3}, {2, 3, -1})}},
                    options);
  EXPECT_TRUE(status.ok()) << status;
}

TEST(BinaryGradTest, BothInputsOneVariable) {
  // x * x and x / x: backward sums the two contributions to x's gradient.
  for (const char* op : {"mul", "div", "max"}) {
    SCOPED_TRACE(op);
    absl::Status status = CheckGradient(
        absl::StrFormat("type: \"%s\" inputs { slot: \"X\" vars: \"x\" } "
                        "inputs { slot: \"Y\" vars: \"x\" } outputs { slot: "
                        "\"Out\" vars: \"out\" }",
                        op),
        {{"x", Random({2, 3}, 0.5, 2, 3)}});
    EXPECT_TRUE(status.ok()) << status;
  }
}

// Runs gradient op `type` with X = x, Y = y, Out@GRAD = g, writing
// X@GRAD = dx and Y@GRAD = dy (only those of `outputs`).
absl::StatusOr<std::vector<Tensor>> RunGrad(
    const std::string& type, const Tensor& x, const Tensor& y, const Tensor& g,
    const std::vector<std::string>& outputs = {"X@GRAD", "Y@GRAD"}) {
  std::string text = absl::StrFormat(
      "type: \"%s\" inputs { slot: \"X\" vars: \"x\" } inputs { slot: \"Y\" "
      "vars: \"y\" } inputs { slot: \"Out@GRAD\" vars: \"g\" }",
      type);
  std::vector<std::string> fetches;
  for (const std::string& slot : outputs) {
    const std::string var = slot == "X@GRAD" ? "dx" : "dy";
    absl::StrAppend(&text, " outputs { slot: \"", slot, "\" vars: \"", var,
                    "\" }");
    fetches.push_back(var);
  }
  return RunOp(text, {{"x", x}, {"y", y}, {"g", g}}, fetches);
}

TEST(BinaryGradTest, MulWithABias) {
  auto grads =
      RunGrad("mul_grad", MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}),
              MakeTensor<float>({3}, {10, 20, 30}),
              MakeTensor<float>({2, 3}, {1, -1, 2, 0.5f, 3, -2}));
  ASSERT_TRUE(grads.ok()) << grads.status();
  EXPECT_EQ((*grads)[0].dtype(), kFloat32);
  EXPECT_THAT((*grads)[0].dims(), ElementsAre(2, 3));
  EXPECT_THAT(Values<float>((*grads)[0]), ElementsAre(10, -20, 60, 5, 60, -60));
  // Column sums of g * x: 1 + 2, -2 + 15, 6 - 12.
  EXPECT_THAT((*grads)[1].dims(), ElementsAre(3));
  EXPECT_THAT(Values<float>((*grads)[1]), ElementsAre(3, 13, -6));
}

TEST(BinaryGradTest, AddAndSubSumOverBothInputsBroadcastDims) {
  // X [2, 1, 2] and Y [3, 1] broadcast to [2, 3, 2]; g = 1..12.
  const Tensor x = MakeTensor<float>({2, 1, 2}, {0, 0, 0, 0});
  const Tensor y = MakeTensor<float>({3, 1}, {0, 0, 0});
  std::vector<float> g_values(12);
  for (int i = 0; i < 12; ++i) g_values[i] = i + 1;
  const Tensor g = MakeTensor<float>({2, 3, 2}, g_values);
  auto add = RunGrad("add_grad", x, y, g);
  ASSERT_TRUE(add.ok()) << add.status();
  EXPECT_THAT((*add)[0].dims(), ElementsAre(2, 1, 2));
  EXPECT_THAT(Values<float>((*add)[0]), ElementsAre(9, 12, 27, 30));
  EXPECT_THAT((*add)[1].dims(), ElementsAre(3, 1));
  EXPECT_THAT(Values<float>((*add)[1]), ElementsAre(18, 26, 34));
  auto sub = RunGrad("sub_grad", x, y, g);
  ASSERT_TRUE(sub.ok()) << sub.status();
  EXPECT_THAT(Values<float>((*sub)[0]), ElementsAre(9, 12, 27, 30));
  EXPECT_THAT(Values<float>((*sub)[1]), ElementsAre(-18, -26, -34));
}

TEST(BinaryGradTest, DivByASingleElement) {
  auto grads =
      RunGrad("div_grad", MakeTensor<float>({3}, {2, -4, 6}),
              MakeTensor<float>({1}, {2}), MakeTensor<float>({3}, {1, 1, 2}));
  ASSERT_TRUE(grads.ok()) << grads.status();
  EXPECT_THAT(Values<float>((*grads)[0]), ElementsAre(0.5f, 0.5f, 1));
  // -(1 * 2 + 1 * -4 + 2 * 6) / 2^2.
  EXPECT_THAT((*grads)[1].dims(), ElementsAre(1));
  EXPECT_THAT(Values<float>((*grads)[1]), ElementsAre(-2.5f));
}

TEST(BinaryGradTest, MaxAndMinRouteToTheInputTheyTook) {
  // Element 1 is a tie: the forward ops take X, so X gets the gradient.
  const Tensor x = MakeTensor<float>({3}, {1, 3, 2});
  const Tensor y = MakeTensor<float>({3}, {2, 3, 1});
  const Tensor g = MakeTensor<float>({3}, {10, 20, 30});
  auto max = RunGrad("max_grad", x, y, g);
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_THAT(Values<float>((*max)[0]), ElementsAre(0, 20, 30));
  EXPECT_THAT(Values<float>((*max)[1]), ElementsAre(10, 0, 0));
  auto min = RunGrad("min_grad", x, y, g);
  ASSERT_TRUE(min.ok()) << min.status();
  EXPECT_THAT(Values<float>((*min)[0]), ElementsAre(10, 20, 0));
  EXPECT_THAT(Values<float>((*min)[1]), ElementsAre(0, 0, 30));
}

TEST(BinaryGradTest, PowAtZero) {
  auto grads = RunGrad("pow_grad", MakeTensor<float>({3}, {0, 2, 0}),
                       MakeTensor<float>({3}, {2, 3, 0}),
                       MakeTensor<float>({3}, {1, 1, 1}));
  ASSERT_TRUE(grads.ok()) << grads.status();
  // d/dx: 2 * 0, 3 * 2^2, and 0 for the constant x^0.
  EXPECT_THAT(Values<float>((*grads)[0]), ElementsAre(0, 12, 0));
  // d/dy: 0 where x = 0 (not 0 * log 0 = NaN), 2^3 log 2.
  EXPECT_THAT(Values<float>((*grads)[1]),
              Pointwise(FloatEq(), {0.0f, 8 * std::log(2.0f), 0.0f}));
}

TEST(BinaryGradTest, OnlyTheBoundGradientIsWritten) {
  auto dx = RunGrad("mul_grad", MakeTensor<float>({2}, {1, 2}),
                    MakeTensor<float>({2}, {3, 4}),
                    MakeTensor<float>({2}, {1, 10}), {"X@GRAD"});
  ASSERT_TRUE(dx.ok()) << dx.status();
  EXPECT_THAT(Values<float>((*dx)[0]), ElementsAre(3, 40));
  auto dy = RunGrad("mul_grad", MakeTensor<float>({2}, {1, 2}),
                    MakeTensor<float>({2}, {3, 4}),
                    MakeTensor<float>({2}, {1, 10}), {"Y@GRAD"});
  ASSERT_TRUE(dy.ok()) << dy.status();
  EXPECT_THAT(Values<float>((*dy)[0]), ElementsAre(1, 20));
}

TEST(BinaryGradTest, OutputGradientOfTheWrongShapeOrDtype) {
  auto shape =
      RunGrad("mul_grad", MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}),
              MakeTensor<float>({3}, {1, 2, 3}),
              MakeTensor<float>({3, 2}, {1, 2, 3, 4, 5, 6}));
  ASSERT_FALSE(shape.ok());
  EXPECT_THAT(shape.status().message(),
              HasSubstr("op 0 (mul_grad): input \"Out@GRAD\" (variable "
                        "\"g\", shape [3, 2]) must have the broadcast shape "
                        "[2, 3] of inputs \"X\" (variable \"x\", shape [2, "
                        "3]), \"Y\" (variable \"y\", shape [3])"));
  auto dtype =
      RunGrad("add_grad", MakeTensor<float>({2}, {1, 2}),
              MakeTensor<float>({2}, {1, 2}), MakeTensor<double>({2}, {1, 2}));
  ASSERT_FALSE(dtype.ok());
  EXPECT_THAT(dtype.status().message(),
              HasSubstr("op 0 (add_grad): inputs \"X\" (variable \"x\", "
                        "float32) and \"Out@GRAD\" (variable \"g\", float64) "
                        "must have one dtype"));
}

}  // namespace
}  // namespace scopeflow
