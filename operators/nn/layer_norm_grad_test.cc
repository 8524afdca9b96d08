// layer_norm's gradient: numeric checks with and without Scale and Bias
// and along several axes, hand-computed float32 values, and errors.
#include <cmath>
#include <cstdint>
#include <random>
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
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

std::string LayerNorm(bool scale, bool bias, int axis,
                      const std::string& attrs = "") {
  return absl::StrCat(
      "type: \"layer_norm\" inputs { slot: \"X\" vars: \"x\" } ",
      scale ? "inputs { slot: \"Scale\" vars: \"scale\" } " : "",
      bias ? "inputs { slot: \"Bias\" vars: \"bias\" } " : "",
      "outputs { slot: \"Y\" vars: \"y\" } "
      "attrs { name: \"begin_norm_axis\" i: ",
      axis, " } ", attrs);
}

Tensor Random(const Dims& dims, uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<double> dist(-2, 2);
  std::vector<double> values(NumElements(dims));
  for (double& v : values) v = dist(engine);
  return MakeTensor<double>(dims, values);
}

TEST(LayerNormGradTest, MatchesCentralDifferences) {
  struct Case {
    Dims x;
    int axis;
    bool scale, bias;
  };
  const std::vector<Case> cases = {
      {{2, 3, 4}, 1, true, true},    {{2, 3, 4}, 2, true, true},
      {{2, 3, 4}, -1, false, false}, {{3, 5}, 1, true, false},
      {{3, 5}, 1, false, true},      {{2, 2, 3}, 0, true, true},
  };
  uint32_t seed = 1;
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(DimsToString(c.x), " axis ", c.axis, " scale ",
                              c.scale, " bias ", c.bias));
    int64_t normalized = 1;
    const int axis = c.axis < 0 ? c.axis + c.x.size() : c.axis;
    for (size_t i = axis; i < c.x.size(); ++i) normalized *= c.x[i];
    std::vector<Feed> feeds = {{"x", Random(c.x, ++seed)}};
    if (c.scale) feeds.push_back({"scale", Random({normalized}, ++seed)});
    if (c.bias) feeds.push_back({"bias", Random({normalized}, ++seed)});
    absl::Status status =
        CheckGradient(LayerNorm(c.scale, c.bias, c.axis), feeds);
    EXPECT_TRUE(status.ok()) << status;
  }
  // A large epsilon, so that it matters.
  absl::Status epsilon = CheckGradient(
      LayerNorm(true, true, 1, "attrs { name: \"epsilon\" f: 0.7 }"),
      {{"x", Random({2, 3}, 50)},
       {"scale", Random({3}, 51)},
       {"bias", Random({3}, 52)}});
  EXPECT_TRUE(epsilon.ok()) << epsilon;
}

TEST(LayerNormGradTest, HandComputedFloat32) {
  // Two-value rows normalize to (-1, 1) or (1, -1) whatever they hold, so
  // X@GRAD is 0. Row 0: 1, 3 (xhat -1, 1), dy 1, 0, g = dy * scale = 2, 0:
  // dx = inv_std * (g - mean(g) - xhat * mean(g * xhat))
  //    = (2 - 1 - 1, 0 - 1 + 1) / 1. Row 1: 5, 1 (xhat 1, -1), dy 1, 2,
  // g = 2, 8: dx = (2 - 5 + 3, 8 - 5 - 3) / 2.
  const std::string op =
      "type: \"layer_norm_grad\" inputs { slot: \"X\" vars: \"x\" } "
      "inputs { slot: \"Scale\" vars: \"scale\" } "
      "inputs { slot: \"Bias\" vars: \"bias\" } "
      "inputs { slot: \"Y@GRAD\" vars: \"dy\" } "
      "outputs { slot: \"X@GRAD\" vars: \"dx\" } "
      "outputs { slot: \"Scale@GRAD\" vars: \"dscale\" } "
      "outputs { slot: \"Bias@GRAD\" vars: \"dbias\" } "
      "attrs { name: \"epsilon\" f: 0 }";
  auto two = RunOp(op,
                   {{"x", MakeTensor<float>({2, 2}, {1, 3, 5, 1})},
                    {"scale", MakeTensor<float>({2}, {2, 4})},
                    {"bias", MakeTensor<float>({2}, {0, 0})},
                    {"dy", MakeTensor<float>({2, 2}, {1, 0, 1, 2})}},
                   {"dx", "dscale", "dbias"});
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_THAT(Values<float>((*two)[0]),
              Pointwise(FloatNear(1e-6), std::vector<float>{0, 0, 0, 0}));
  // Rows' xhat: (-1, 1) and (1, -1).
  EXPECT_THAT(Values<float>((*two)[1]), ElementsAre(-1 + 1, 0 - 2));
  EXPECT_THAT(Values<float>((*two)[2]), ElementsAre(2, 2));

  // Row 0, 0, 3: mean 1, variance 2, inv_std 1/sqrt(2); xhat = (-1, -1, 2)
  // / sqrt(2). dy = (1, 0, 0), no scale: mean(g) = 1/3,
  // mean(g * xhat) = -1 / (3 sqrt(2)), dx = inv_std * (g - 1/3 + xhat / (3
  // sqrt(2))) = (1/sqrt(2)) * (1 - 1/3 - 1/6, -1/3 - 1/6, -1/3 + 1/3).
  auto three = RunOp(
      "type: \"layer_norm_grad\" inputs { slot: \"X\" vars: \"x\" } "
      "inputs { slot: \"Y@GRAD\" vars: \"dy\" } "
      "outputs { slot: \"X@GRAD\" vars: \"dx\" } "
      "attrs { name: \"epsilon\" f: 0 }",
      {{"x", MakeTensor<float>({1, 3}, {0, 0, 3})},
       {"dy", MakeTensor<float>({1, 3}, {1, 0, 0})}},
      {"dx"});
  ASSERT_TRUE(three.ok()) << three.status();
  const float r = 1 / std::sqrt(2.0f);
  EXPECT_THAT(
      Values<float>((*three)[0]),
      Pointwise(FloatNear(1e-6), std::vector<float>{0.5f * r, -0.5f * r, 0}));
}

// layer_norm with its statistics outputs bound: their gradients flow back
// into X too.
std::string WithStatistics(bool scale, int axis,
                           const std::string& attrs = "") {
  return absl::StrCat(
      "type: \"layer_norm\" inputs { slot: \"X\" vars: \"x\" } ",
      scale ? "inputs { slot: \"Scale\" vars: \"scale\" } " : "",
      "outputs { slot: \"Y\" vars: \"y\" } outputs { slot: \"Mean\" vars: "
      "\"mean\" } outputs { slot: \"InvStdDev\" vars: \"inv_std\" } attrs "
      "{ name: \"begin_norm_axis\" i: ",
      axis, " } ", attrs);
}

TEST(LayerNormGradTest, StatisticsOutputsMatchCentralDifferences) {
  absl::Status rows =
      CheckGradient(WithStatistics(true, 1),
                    {{"x", Random({3, 4}, 60)}, {"scale", Random({4}, 61)}});
  EXPECT_TRUE(rows.ok()) << rows;
  absl::Status trailing = CheckGradient(
      WithStatistics(false, -2, "attrs { name: \"epsilon\" f: 0.5 }"),
      {{"x", Random({2, 3, 2, 2}, 62)}});
  EXPECT_TRUE(trailing.ok()) << trailing;
  // Mean alone.
  absl::Status mean = CheckGradient(
      "type: \"layer_norm\" inputs { slot: \"X\" vars: \"x\" } outputs { "
      "slot: \"Y\" vars: \"y\" } outputs { slot: \"Mean\" vars: \"mean\" }",
      {{"x", Random({2, 5}, 63)}});
  EXPECT_TRUE(mean.ok()) << mean;
}

TEST(LayerNormGradTest, StatisticsGradientsHandComputed) {
  // Row [1, 2, 3]: mean 2, variance 2/3, inv_std = sqrt(3/2), xhat =
  // (-1, 0, 1) inv_std. Mean@GRAD 3 adds 3 / 3 to each element;
  // InvStdDev@GRAD 1 adds -inv_std^2 xhat / 3 = (1, 0, -1) inv_std / 2.
  const std::string op =
      "type: \"layer_norm_grad\" inputs { slot: \"X\" vars: \"x\" } "
      "inputs { slot: \"Y@GRAD\" vars: \"dy\" } "
      "inputs { slot: \"Mean@GRAD\" vars: \"dmean\" } "
      "inputs { slot: \"InvStdDev@GRAD\" vars: \"dinv\" } "
      "outputs { slot: \"X@GRAD\" vars: \"dx\" } "
      "attrs { name: \"epsilon\" f: 0 }";
  auto out = RunOp(op,
                   {{"x", MakeTensor<float>({1, 3}, {1, 2, 3})},
                    {"dy", MakeTensor<float>({1, 3}, {0, 0, 0})},
                    {"dmean", MakeTensor<float>({1, 1}, {3})},
                    {"dinv", MakeTensor<float>({1, 1}, {1})}},
                   {"dx"});
  ASSERT_TRUE(out.ok()) << out.status();
  const float half = std::sqrt(1.5f) / 2;
  EXPECT_THAT(
      Values<float>((*out)[0]),
      Pointwise(FloatNear(1e-6), std::vector<float>{1 + half, 1, 1 - half}));
}

TEST(LayerNormGradErrorTest, ShapesNameVariables) {
  const std::string op =
      "type: \"layer_norm_grad\" inputs { slot: \"X\" vars: \"x\" } "
      "inputs { slot: \"Y@GRAD\" vars: \"dy\" } "
      "outputs { slot: \"X@GRAD\" vars: \"dx\" } ";
  absl::Status shape = PrepareOp(op, {{"x", MakeTensor<float>({2, 3}, {})},
                                      {"dy", MakeTensor<float>({3, 2}, {})}});
  EXPECT_THAT(shape.message(),
              HasSubstr("op 0 (layer_norm_grad): input \"Y@GRAD\" (variable "
                        "\"dy\") is float32 [3, 2]: expected float32 [2, 3], "
                        "as the forward op's output \"Y\""));
  absl::Status scale = PrepareOp(
      absl::StrCat(op, "outputs { slot: \"Scale@GRAD\" vars: \"ds\" }"),
      {{"x", MakeTensor<float>({2, 3}, {})},
       {"dy", MakeTensor<float>({2, 3}, {})}});
  EXPECT_THAT(scale.message(),
              HasSubstr("op 0 (layer_norm_grad): input \"Scale\" is not "
                        "bound: output \"Scale@GRAD\" takes its shape"));
  absl::Status mean =
      PrepareOp(absl::StrCat(op, "inputs { slot: \"Mean@GRAD\" vars: \"dm\" }"),
                {{"x", MakeTensor<float>({2, 3}, {})},
                 {"dy", MakeTensor<float>({2, 3}, {})},
                 {"dm", MakeTensor<float>({2}, {})}});
  EXPECT_THAT(mean.message(),
              HasSubstr("op 0 (layer_norm_grad): input \"Mean@GRAD\" "
                        "(variable \"dm\") is float32 [2]: expected float32 "
                        "[2, 1], as the forward op's output \"Mean\""));
}

}  // namespace
}  // namespace scopeflow
