#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::DoubleEq;
using ::testing::ElementsAre;
using ::testing::FloatEq;
using ::testing::HasSubstr;
using ::testing::Pointwise;

constexpr char kBatchNorm[] = R"pb(type: "batch_norm"
                                   inputs { slot: "X" vars: "x" }
                                   inputs { slot: "Scale" vars: "scale" }
                                   inputs { slot: "Bias" vars: "bias" }
                                   inputs { slot: "Mean" vars: "mean" }
                                   inputs { slot: "Variance" vars: "var" }
                                   outputs { slot: "Y" vars: "y" })pb";

template <typename T>
std::vector<Feed> Channels(std::vector<T> scale, std::vector<T> bias,
                           std::vector<T> mean, std::vector<T> var) {
  const int64_t c = scale.size();
  return {{"scale", MakeTensor<T>({c}, scale)},
          {"bias", MakeTensor<T>({c}, bias)},
          {"mean", MakeTensor<T>({c}, mean)},
          {"var", MakeTensor<T>({c}, var)}};
}

TEST(BatchNormTest, NormalizesEachChannel) {
  // Channel 0: (x - 4) / 2 * 2 + 1 = x - 3. Channel 1: (x - 5) / 4 * 0.5 - 1.
  std::vector<Feed> feeds = Channels<float>({2, 0.5}, {1, -1}, {4, 5}, {4, 16});
  feeds.push_back(
      {"x", MakeTensor<float>({2, 2, 1, 2}, {1, 3, 2, 4, 5, 7, 6, 8})});
  auto out = RunOp(absl::StrCat(kBatchNorm, "attrs { name: \"epsilon\" f: 0 }"),
                   feeds, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 2, 1, 2));
  EXPECT_THAT(Values<float>((*out)[0]),
              Pointwise(FloatEq(), std::vector<float>{-2, 0, -1.375, -1.125, 2,
                                                      4, -0.875, -0.625}));
}

TEST(BatchNormTest, EpsilonAndRankTwo) {
  // (3 - 1) / sqrt(3 + 1) = 1; (7 - 1) / sqrt(8 + 1) * 3 + 0.5 = 6.5.
  std::vector<Feed> feeds = Channels<float>({1, 3}, {0, 0.5}, {1, 1}, {3, 8});
  feeds.push_back({"x", MakeTensor<float>({1, 2}, {3, 7})});
  auto out = RunOp(absl::StrCat(kBatchNorm, "attrs { name: \"epsilon\" f: 1 }"),
                   feeds, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]),
              Pointwise(FloatEq(), std::vector<float>{1, 6.5}));
}

TEST(BatchNormTest, DefaultEpsilonFloat64) {
  std::vector<Feed> feeds = Channels<double>({1}, {0}, {0}, {1});
  feeds.push_back({"x", MakeTensor<double>({3, 1}, {1, -2, 0})});
  auto out = RunOp(kBatchNorm, feeds, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), kFloat64);
  const double inv_std = 1 / std::sqrt(1 + static_cast<double>(1e-5f));
  EXPECT_THAT(
      Values<double>((*out)[0]),
      Pointwise(DoubleEq(), std::vector<double>{inv_std, -2 * inv_std, 0}));
}

TEST(BatchNormTest, InfersUnknownDimensions) {
  auto y = InferAtPrepare(kBatchNorm,
                          {{"x", kFloat32, {-1, 3, -1}},
                           {"scale", kFloat32, {3}},
                           {"bias", kFloat32, {-1}},
                           {"mean", kFloat32, {}},
                           {"var", kFloat32, {3}}},
                          "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims, ElementsAre(-1, 3, -1));
  y = InferAtPrepare(kBatchNorm,
                     {{"x", kFloat32, {-1, 3}},
                      {"scale", kFloat32, {3}},
                      {"bias", kFloat32, {-1}},
                      {"mean", kFloat32, {4}},
                      {"var", kFloat32, {3}}},
                     "y");
  EXPECT_THAT(y.status().message(),
              HasSubstr("op 0 (batch_norm): input \"Mean\" (variable \"mean\") "
                        "has shape [4]: expected [3]"));
}

TEST(BatchNormTest, NormalizesChannelsLast) {
  // NormalizesEachChannel's images as [N, H, W, C].
  std::vector<Feed> feeds = Channels<float>({2, 0.5}, {1, -1}, {4, 5}, {4, 16});
  feeds.push_back(
      {"x", MakeTensor<float>({2, 1, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8})});
  auto out = RunOp(absl::StrCat(kBatchNorm,
                                "attrs { name: \"epsilon\" f: 0 } attrs { "
                                "name: \"data_format\" s: \"NHWC\" }"),
                   feeds, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 1, 2, 2));
  EXPECT_THAT(Values<float>((*out)[0]),
              Pointwise(FloatEq(), std::vector<float>{-2, -1.375, 0, -1.125, 2,
                                                      -0.875, 4, -0.625}));
}

TEST(BatchNormTest, NormalizesChannelBlocks) {
  // 16 channels of 2 pixels, as [1, 16, 1, 2] and as NCHW8c [1, 2, 1, 2, 8]:
  // channel c of pixel w at [0, c / 8, 0, w, c % 8].
  std::vector<float> scale, bias, mean, var, nchw(32), blocked(32);
  for (int c = 0; c < 16; ++c) {
    scale.push_back(0.5f + c);
    bias.push_back(c - 8.0f);
    mean.push_back(0.25f * c);
    var.push_back(1.0f + c);
    for (int w = 0; w < 2; ++w) {
      nchw[c * 2 + w] = blocked[(c / 8) * 16 + w * 8 + c % 8] = c * 3.0f - w;
    }
  }
  std::vector<Feed> feeds = Channels<float>(scale, bias, mean, var);
  feeds.push_back({"x", MakeTensor<float>({1, 16, 1, 2}, nchw)});
  auto expected = RunOp(kBatchNorm, feeds, {"y"});
  ASSERT_TRUE(expected.ok()) << expected.status();
  feeds.back() = {"x", MakeTensor<float>({1, 2, 1, 2, 8}, blocked)};
  auto out = RunOp(absl::StrCat(kBatchNorm,
                                "attrs { name: \"data_format\" "
                                "s: \"NCHW8c\" }"),
                   feeds, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<float> want = Values<float>((*expected)[0]);
  const std::vector<float> got = Values<float>((*out)[0]);
  for (int c = 0; c < 16; ++c) {
    for (int w = 0; w < 2; ++w) {
      EXPECT_FLOAT_EQ(got[(c / 8) * 16 + w * 8 + c % 8], want[c * 2 + w])
          << "channel " << c << ", pixel " << w;
    }
  }
}

TEST(BatchNormTest, FusesARelu) {
  // NormalizesEachChannel's values, the negative ones clamped to 0.
  std::vector<Feed> feeds = Channels<float>({2, 0.5}, {1, -1}, {4, 5}, {4, 16});
  feeds.push_back(
      {"x", MakeTensor<float>({2, 2, 1, 2}, {1, 3, 2, 4, 5, 7, 6, 8})});
  auto out = RunOp(absl::StrCat(kBatchNorm,
                                "attrs { name: \"epsilon\" f: 0 } attrs { "
                                "name: \"fuse_relu\" b: true } attrs { name: "
                                "\"data_format\" s: \"NHWC\" }"),
                   feeds, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  // As NHWC [2, 2, 1, 2], channel = index % 2: channel 0 is x - 3 (-2, -1,
  // 2, 3), channel 1 (x - 5) / 4 * 0.5 - 1 (all below 0).
  EXPECT_THAT(Values<float>((*out)[0]),
              Pointwise(FloatEq(), std::vector<float>{0, 0, 0, 0, 2, 0, 3, 0}));
  feeds.back() = {"x", MakeTensor<float>({1, 2, 1, 1}, {9, 25})};
  auto nchw = RunOp(absl::StrCat(kBatchNorm,
                                 "attrs { name: \"epsilon\" f: 0 } attrs { "
                                 "name: \"fuse_relu\" b: true }"),
                    feeds, {"y"});
  ASSERT_TRUE(nchw.ok()) << nchw.status();
  // (9 - 4) / 2 * 2 + 1 = 6; (25 - 5) / 4 * 0.5 - 1 = 1.5.
  EXPECT_THAT(Values<float>((*nchw)[0]),
              Pointwise(FloatEq(), std::vector<float>{6, 1.5}));
}

TEST(BatchNormErrorTest, FusedReluInInferenceOnly) {
  std::vector<Feed> feeds = Channels<float>({1}, {0}, {0}, {1});
  feeds.push_back({"x", MakeTensor<float>({2, 1}, {1, 2})});
  absl::Status status = PrepareOp(
      absl::StrCat(kBatchNorm,
                   "attrs { name: \"is_test\" b: false } attrs { name: "
                   "\"fuse_relu\" b: true } outputs { slot: \"MeanOut\" "
                   "vars: \"mean\" } outputs { slot: \"VarianceOut\" vars: "
                   "\"var\" }"),
      feeds);
  EXPECT_THAT(status.message(),
              HasSubstr("fuse_relu applies in inference (is_test) only"));
}

TEST(BatchNormErrorTest, OtherLayoutsNormalizeInInferenceOnly) {
  std::vector<Feed> feeds = Channels<float>({1}, {0}, {0}, {1});
  feeds.push_back({"x", MakeTensor<float>({1, 2, 2, 1}, {1, 2, 3, 4})});
  absl::Status training = PrepareOp(
      absl::StrCat(kBatchNorm,
                   "attrs { name: \"is_test\" b: false } attrs { name: "
                   "\"data_format\" s: \"NHWC\" }"),
      feeds);
  EXPECT_THAT(training.message(),
              HasSubstr("op 0 (batch_norm): data_format \"NHWC\" normalizes "
                        "in inference (is_test) only"));
  feeds.back() = {"x", MakeTensor<float>({1, 1, 2, 2, 4}, {})};
  absl::Status block =
      PrepareOp(absl::StrCat(kBatchNorm,
                             "attrs { name: \"data_format\" s: "
                             "\"NCHW8c\" }"),
                feeds);
  EXPECT_THAT(block.message(),
              HasSubstr("data_format \"NCHW8c\" expects blocks of 8 "
                        "channels in its last axis"));
}

TEST(BatchNormErrorTest, TrainingNeedsTheRunningStatisticsOutputs) {
  std::vector<Feed> feeds = Channels<float>({1}, {0}, {0}, {1});
  feeds.push_back({"x", MakeTensor<float>({1, 1}, {1})});
  absl::Status status = PrepareOp(
      absl::StrCat(kBatchNorm, "attrs { name: \"is_test\" b: false }"), feeds);
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (batch_norm): training (is_test = false) "
                        "updates the running statistics: bind output "
                        "\"MeanOut\" (usually to the variable of \"Mean\")"));
}

TEST(BatchNormErrorTest, ChannelMismatchNamesVariable) {
  std::vector<Feed> feeds = Channels<float>({1, 1}, {0, 0}, {0, 0}, {1, 1});
  feeds[0] = {"scale", MakeTensor<float>({3}, {1, 1, 1})};
  feeds.push_back({"x", MakeTensor<float>({4, 2, 3}, {})});
  absl::Status status = PrepareOp(kBatchNorm, feeds);
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (batch_norm): input \"Scale\" (variable "
                        "\"scale\") has shape [3]: expected [2], one value per "
                        "channel of \"X\" (variable \"x\", shape [4, 2, 3])"));
}

TEST(BatchNormErrorTest, RankDtypeAndEpsilon) {
  std::vector<Feed> feeds = Channels<float>({1}, {0}, {0}, {1});
  feeds.push_back({"x", MakeTensor<float>({3}, {1, 2, 3})});
  absl::Status rank = PrepareOp(kBatchNorm, feeds);
  EXPECT_THAT(rank.message(),
              HasSubstr("op 0 (batch_norm): input \"X\" (variable \"x\") has "
                        "shape [3]: expected rank 2 to"));
  feeds.back() = {"x", MakeTensor<float>({3, 1}, {1, 2, 3})};
  feeds[3] = {"var", MakeTensor<double>({1}, {1})};
  absl::Status dtype = PrepareOp(kBatchNorm, feeds);
  EXPECT_THAT(dtype.message(),
              HasSubstr("op 0 (batch_norm): inputs \"X\" (variable \"x\", "
                        "float32) and \"Variance\" (variable \"var\", float64) "
                        "must have one dtype"));
  feeds[3] = {"var", MakeTensor<float>({1}, {1})};
  absl::Status epsilon = PrepareOp(
      absl::StrCat(kBatchNorm, "attrs { name: \"epsilon\" f: -1 }"), feeds);
  EXPECT_THAT(epsilon.message(),
              HasSubstr("op 0 (batch_norm): attribute \"epsilon\" must be "
                        "non-negative, got -1"));
}

}  // namespace
}  // namespace scopeflow
