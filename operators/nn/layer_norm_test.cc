#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

constexpr char kLayerNorm[] = R"pb(type: "layer_norm"
                                   inputs { slot: "X" vars: "x" }
                                   outputs { slot: "Y" vars: "y" })pb";

constexpr char kLayerNormAffine[] = R"pb(type: "layer_norm"
                                         inputs { slot: "X" vars: "x" }
                                         inputs { slot: "Scale" vars: "scale" }
                                         inputs { slot: "Bias" vars: "bias" }
                                         outputs { slot: "Y" vars: "y" })pb";

TEST(LayerNormTest, ScaleAndBias) {
  // Row [1, 2, 3]: mean 2, variance 2/3; with epsilon 1/3 the deviation is
  // 1. Row [4, 4, 4] normalizes to zeros.
  auto out =
      RunOp(absl::StrCat(kLayerNormAffine,
                         "attrs { name: \"epsilon\" f: ", 1.0f / 3, " }"),
            {{"x", MakeTensor<float>({2, 3}, {1, 2, 3, 4, 4, 4})},
             {"scale", MakeTensor<float>({3}, {1, 2, 3})},
             {"bias", MakeTensor<float>({3}, {0, 1, -1})}},
            {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 3));
  EXPECT_THAT(
      Values<float>((*out)[0]),
      Pointwise(FloatNear(1e-6), std::vector<float>{-1, 1, 2, 0, 1, -1}));
}

// Many rows over threads (300 x 100 values: past kElementsWorthAThread),
// rows whose length is no multiple of the vector sums' lanes, values off
// zero so that the mean matters: each row against the textbook formula
// (two passes in double), with Mean and InvStdDev.
TEST(LayerNormTest, ManyRowsMatchTheFormula) {
  const int64_t rows = 300, n = 100;
  std::vector<float> x = RandomFloats(rows * n, 7);
  for (int64_t i = 0; i < rows * n; ++i) x[i] = 3 * x[i] + (i / n) % 5;
  const std::vector<float> scale = RandomFloats(n, 8);
  const std::vector<float> bias = RandomFloats(n, 9);
  auto out = RunOp(absl::StrCat(R"pb(type: "layer_norm"
                                     inputs { slot: "X" vars: "x" }
                                     inputs { slot: "Scale" vars: "scale" }
                                     inputs { slot: "Bias" vars: "bias" }
                                     outputs { slot: "Y" vars: "y" }
                                     outputs { slot: "Mean" vars: "mean" }
                                     outputs {
                                       slot: "InvStdDev"
                                       vars: "inv_std"
                                     })pb"),
                   {{"x", MakeTensor<float>({rows, n}, x)},
                    {"scale", MakeTensor<float>({n}, scale)},
                    {"bias", MakeTensor<float>({n}, bias)}},
                   {"y", "mean", "inv_std"});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<float> y = Values<float>((*out)[0]);
  const std::vector<float> means = Values<float>((*out)[1]);
  const std::vector<float> inv_stds = Values<float>((*out)[2]);
  ASSERT_EQ(y.size(), x.size());
  ASSERT_EQ(means.size(), static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0;
    for (int64_t i = 0; i < n; ++i) mean += x[r * n + i];
    mean /= n;
    double variance = 0;
    for (int64_t i = 0; i < n; ++i) {
      variance += (x[r * n + i] - mean) * (x[r * n + i] - mean);
    }
    const double inv_std = 1 / std::sqrt(variance / n + 1e-5);
    ASSERT_NEAR(means[r], mean, 1e-6 * (1 + std::fabs(mean))) << "row " << r;
    ASSERT_NEAR(inv_stds[r], inv_std, 1e-6 * inv_std) << "row " << r;
    for (int64_t i = 0; i < n; ++i) {
      const double expected =
          (x[r * n + i] - mean) * inv_std * scale[i] + bias[i];
      ASSERT_NEAR(y[r * n + i], expected, 1e-6 * (1 + std::fabs(expected)))
          << "row " << r << ", element " << i;
    }
  }
}

TEST(LayerNormTest, BeginNormAxis) {
  const Tensor x = MakeTensor<float>({2, 2, 2}, {0, 2, 4, 6, 1, 5, 9, 3});
  // Axis 1: rows of 4. [0, 2, 4, 6]: mean 3, variance 5.
  auto rows =
      RunOp(absl::StrCat(kLayerNorm, "attrs { name: \"epsilon\" f: 0 }"),
            {{"x", x}}, {"y"});
  ASSERT_TRUE(rows.ok()) << rows.status();
  const float s5 = std::sqrt(5.0f);
  // [1, 5, 9, 3]: mean 4.5, variance (12.25 + 0.25 + 20.25 + 2.25) / 4.
  const float s2 = std::sqrt(35.0f / 4);
  EXPECT_THAT(
      Values<float>((*rows)[0]),
      Pointwise(FloatNear(1e-6),
                std::vector<float>{-3 / s5, -1 / s5, 1 / s5, 3 / s5, -3.5f / s2,
                                   0.5f / s2, 4.5f / s2, -1.5f / s2}));
  // Axis 2 (or -1): pairs, each normalized to [-1, 1] or [1, -1].
  for (const char* axis : {"2", "-1"}) {
    auto pairs = RunOp(absl::StrCat(kLayerNorm,
                                    "attrs { name: \"epsilon\" f: 0 } attrs { "
                                    "name: \"begin_norm_axis\" i: ",
                                    axis, " }"),
                       {{"x", x}}, {"y"});
    ASSERT_TRUE(pairs.ok()) << pairs.status();
    EXPECT_THAT(Values<float>((*pairs)[0]),
                Pointwise(FloatNear(1e-6),
                          std::vector<float>{-1, 1, -1, 1, -1, 1, 1, -1}))
        << "begin_norm_axis " << axis;
  }
}

TEST(LayerNormTest, MatchesDefinitionFloat64) {
  std::mt19937 engine(5);
  std::normal_distribution<double> dist(3.0, 2.0);
  std::vector<double> x(3 * 4 * 5), scale(20), bias(20);
  for (double& v : x) v = dist(engine);
  for (double& v : scale) v = dist(engine);
  for (double& v : bias) v = dist(engine);
  auto out = RunOp(kLayerNormAffine,
                   {{"x", MakeTensor<double>({3, 4, 5}, x)},
                    {"scale", MakeTensor<double>({20}, scale)},
                    {"bias", MakeTensor<double>({20}, bias)}},
                   {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<double> expected(x.size());
  for (int r = 0; r < 3; ++r) {
    double mean = 0, var = 0;
    for (int i = 0; i < 20; ++i) mean += x[r * 20 + i] / 20;
    for (int i = 0; i < 20; ++i) {
      var += (x[r * 20 + i] - mean) * (x[r * 20 + i] - mean) / 20;
    }
    for (int i = 0; i < 20; ++i) {
      expected[r * 20 + i] = (x[r * 20 + i] - mean) /
                                 std::sqrt(var + static_cast<double>(1e-5f)) *
                                 scale[i] +
                             bias[i];
    }
  }
  EXPECT_THAT(Values<double>((*out)[0]),
              Pointwise(DoubleNear(1e-12), expected));
}

TEST(LayerNormTest, InfersUnknownDimensions) {
  auto y = InferAtPrepare(kLayerNormAffine,
                          {{"x", kFloat32, {-1, 4, 5}},
                           {"scale", kFloat32, {20}},
                           {"bias", kFloat32, {}}},
                          "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims, ElementsAre(-1, 4, 5));
  y = InferAtPrepare(kLayerNormAffine,
                     {{"x", kFloat32, {-1, 4, 5}},
                      {"scale", kFloat32, {4}},
                      {"bias", kFloat32, {20}}},
                     "y");
  EXPECT_THAT(y.status().message(),
              HasSubstr("op 0 (layer_norm): input \"Scale\" (variable "
                        "\"scale\") has shape [4]: expected [20]"));
}

TEST(LayerNormErrorTest, ScaleSizeNamesVariable) {
  absl::Status status =
      PrepareOp(kLayerNormAffine, {{"x", MakeTensor<float>({2, 3}, {})},
                                   {"scale", MakeTensor<float>({3}, {})},
                                   {"bias", MakeTensor<float>({6}, {})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (layer_norm): input \"Bias\" (variable \"bias\") "
                        "has shape [6]: expected [3], the number of elements "
                        "of \"X\" (variable \"x\", shape [2, 3]) from "
                        "begin_norm_axis = 1 on"));
}

TEST(LayerNormErrorTest, AxisOutOfRange) {
  absl::Status status = PrepareOp(
      absl::StrCat(kLayerNorm, "attrs { name: \"begin_norm_axis\" i: 2 }"),
      {{"x", MakeTensor<float>({2, 3}, {})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (layer_norm): input \"X\" (variable \"x\") has "
                        "shape [2, 3]: attribute \"begin_norm_axis\" = 2 is "
                        "out of range for rank 2"));
}

TEST(LayerNormErrorTest, DtypeAndRank) {
  absl::Status dtype =
      PrepareOp(kLayerNormAffine, {{"x", MakeTensor<float>({2, 3}, {})},
                                   {"scale", MakeTensor<double>({3}, {})},
                                   {"bias", MakeTensor<float>({3}, {})}});
  EXPECT_THAT(dtype.message(),
              HasSubstr("op 0 (layer_norm): inputs \"X\" (variable \"x\", "
                        "float32) and \"Scale\" (variable \"scale\", float64) "
                        "must have one dtype"));
  absl::Status rank =
      PrepareOp(kLayerNormAffine, {{"x", MakeTensor<float>({2, 3}, {})},
                                   {"scale", MakeTensor<float>({1, 3}, {})},
                                   {"bias", MakeTensor<float>({3}, {})}});
  EXPECT_THAT(rank.message(),
              HasSubstr("op 0 (layer_norm): input \"Scale\" (variable "
                        "\"scale\") has shape [1, 3]: expected rank 1"));
}

// A layer_norm reading "x" and writing "y", "mean" and "inv_std", with
// begin_norm_axis `axis` and `attrs`.
std::string WithStatistics(int axis, const std::string& attrs = "") {
  return absl::StrCat(
      "type: \"layer_norm\" inputs { slot: \"X\" vars: \"x\" } outputs { "
      "slot: \"Y\" vars: \"y\" } outputs { slot: \"Mean\" vars: \"mean\" "
      "} outputs { slot: \"InvStdDev\" vars: \"inv_std\" } attrs { name: "
      "\"begin_norm_axis\" i: ",
      axis, " } ", attrs);
}

TEST(LayerNormTest, MeanAndInvStdDevPerRow) {
  // As in ScaleAndBias: [1, 2, 3] has mean 2 and variance 2/3, so with
  // epsilon 1/3 inv_std 1; [4, 4, 4] has variance 0, inv_std sqrt(3).
  auto out = RunOp(WithStatistics(1, absl::StrCat("attrs { name: \"epsilon\" "
                                                  "f: ",
                                                  1.0f / 3, " }")),
                   {{"x", MakeTensor<float>({2, 3}, {1, 2, 3, 4, 4, 4})}},
                   {"mean", "inv_std"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), kFloat32);
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 1));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(2, 4));
  EXPECT_THAT((*out)[1].dims(), ElementsAre(2, 1));
  EXPECT_THAT(Values<float>((*out)[1]),
              Pointwise(FloatNear(1e-6), {1.0f, std::sqrt(3.0f)}));
}

TEST(LayerNormTest, StatisticsKeepTheLeadingAxes) {
  const Tensor x = MakeTensor<double>({2, 2, 2}, {0, 2, 4, 6, 1, 5, 9, 3});
  const std::string no_epsilon = "attrs { name: \"epsilon\" f: 0 }";
  // Axis 1: rows [0, 2, 4, 6] (mean 3, variance 5) and [1, 5, 9, 3] (mean
  // 4.5, variance 35/4).
  auto rows =
      RunOp(WithStatistics(1, no_epsilon), {{"x", x}}, {"mean", "inv_std"});
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT((*rows)[0].dims(), ElementsAre(2, 1, 1));
  EXPECT_THAT(Values<double>((*rows)[0]), ElementsAre(3, 4.5));
  EXPECT_THAT(Values<double>((*rows)[1]),
              Pointwise(DoubleNear(1e-12),
                        {1 / std::sqrt(5.0), 1 / std::sqrt(35.0 / 4)}));
  // Axis -1: pairs [0, 2], [4, 6], [1, 5], [9, 3]: variances 1, 1, 4, 9.
  auto pairs =
      RunOp(WithStatistics(-1, no_epsilon), {{"x", x}}, {"mean", "inv_std"});
  ASSERT_TRUE(pairs.ok()) << pairs.status();
  EXPECT_THAT((*pairs)[0].dims(), ElementsAre(2, 2, 1));
  EXPECT_THAT(Values<double>((*pairs)[0]), ElementsAre(1, 5, 3, 6));
  EXPECT_THAT(Values<double>((*pairs)[1]),
              Pointwise(DoubleNear(1e-12), {1.0, 1.0, 0.5, 1.0 / 3}));
  // Axis 0: one row of all eight, mean 30 / 8.
  auto all = RunOp(WithStatistics(0, no_epsilon), {{"x", x}}, {"mean"});
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_THAT((*all)[0].dims(), ElementsAre(1, 1, 1));
  EXPECT_THAT(Values<double>((*all)[0]), ElementsAre(3.75));
}

TEST(LayerNormTest, StatisticsOfEmptyRowsAreNaN) {
  auto out = RunOp(WithStatistics(1), {{"x", MakeTensor<float>({2, 0}, {})}},
                   {"y", "mean", "inv_std"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 0));
  EXPECT_THAT((*out)[1].dims(), ElementsAre(2, 1));
  for (int i : {1, 2}) {
    for (float v : Values<float>((*out)[i])) EXPECT_TRUE(std::isnan(v));
  }
}

TEST(LayerNormTest, InfersStatisticsShapes) {
  auto mean = InferAtPrepare(WithStatistics(2),
                             {{"x", kFloat64, {-1, 3, 4, 5}}}, "mean");
  ASSERT_TRUE(mean.ok()) << mean.status();
  EXPECT_EQ(mean->dtype, kFloat64);
  EXPECT_THAT(mean->dims, ElementsAre(-1, 3, 1, 1));
  auto inv_std = InferAtPrepare(WithStatistics(-3),
                                {{"x", kFloat32, {2, -1, 4}}}, "inv_std");
  ASSERT_TRUE(inv_std.ok()) << inv_std.status();
  EXPECT_THAT(inv_std->dims, ElementsAre(1, 1, 1));
  auto unknown =
      InferAtPrepare(WithStatistics(1), {{"x", kFloat32, {}}}, "mean");
  ASSERT_TRUE(unknown.ok()) << unknown.status();
  EXPECT_FALSE(unknown->has_dims);
}

// Prepare rejects such a declaration; this covers inference run without it.
TEST(LayerNormTest, ElementCountsBeyondInt64AreErrors) {
  EXPECT_THAT(
      InferAlone(kLayerNorm, {{"x", kFloat32, {2, 4611686018427387904, 4}}},
                 "y")
          .status()
          .message(),
      HasSubstr("input \"X\" (variable \"x\") has shape [2, "
                "4611686018427387904, 4]: more elements from begin_norm_axis "
                "= 1 on than int64 holds"));
}

}  // namespace
}  // namespace scopeflow
