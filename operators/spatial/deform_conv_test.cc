// deform_conv against torchvision 0.14's ops.deform_conv2d (groups,
// offset groups, mask, bias, strides, pads, dilations), a hand-computed
// shift, its gradients by central differences, and its errors.
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

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pointwise;

std::string DeformConv(const std::string& attrs, bool bias_and_mask) {
  return absl::StrCat(
      "type: \"deform_conv\" inputs { slot: \"X\" vars: \"x\" } "
      "inputs { slot: \"W\" vars: \"w\" } "
      "inputs { slot: \"Offset\" vars: \"offset\" } ",
      bias_and_mask ? "inputs { slot: \"B\" vars: \"b\" } "
                      "inputs { slot: \"Mask\" vars: \"mask\" } "
                    : "",
      "outputs { slot: \"Out\" vars: \"y\" } ", attrs);
}

const char kTorchAttrs[] =
    "attrs { name: \"strides\" i64s { values: [1, 2] } } "
    "attrs { name: \"pads\" i64s { values: [1, 1, 1, 1] } } "
    "attrs { name: \"dilations\" i64s { values: [1, 2] } } "
    "attrs { name: \"group\" i64: 2 } attrs { name: \"offset_group\" i64: 2 }";

// Values rounded to 2 decimals, from torch.manual_seed(0); torchvision
// infers groups (2) and offset groups (2) from the shapes.
std::vector<Feed> TorchFeeds() {
  return {
      {"x",
       MakeTensor<double>(
           {1, 4, 3, 4},
           {0.94,  0.42,  -0.08, 0.84,  0.29,  0.58,  -0.64, -0.3,  0.16, -0.42,
            -0.09, -0.65, -0.29, 0.24,  -0.04, -0.12, -0.19, -0.59, 0.33, 0.57,
            -0.58, 0.35,  -0.78, 0.05,  -0.55, 0.12,  0.18,  0.36,  0.49, -0.54,
            0.62,  0.26,  -0.61, -0.69, -0.04, 0.84,  0.14,  -0.04, 0.59, -0.26,
            -0.46, -0.92, 0.5,   -0.32, 0.08,  -0.07, 0.73,  -0.92})},
      {"w", MakeTensor<double>(
                {6, 2, 2, 2},
                {0.99,  0.76,  0.53,  -0.49, -0.62, 0.98,  0.56,  -0.28,
                 0.13,  0.48,  -0.99, 0.17,  0.14,  -0.9,  -0.67, 1,
                 0.2,   -0.7,  -0.21, 0.73,  -0.78, 0.62,  0.58,  0.6,
                 -0.19, 0.45,  -0.98, -0.49, -0.62, -0.67, -0.01, -0.69,
                 -0.54, -0.18, -0.25, -0.63, -0.2,  0.04,  0.22,  -0.22,
                 0.08,  -0.6,  -0.14, 0.71,  0.84,  -0.92, 0.41,  -0.65})},
      {"offset",
       MakeTensor<double>(
           {1, 16, 4, 2},
           {-0.96, -0.96, 0.51,  0.35,  -1,    1.43,  0.53,  0.19,  -0.16,
            1.41,  0.01,  1.42,  1.11,  -0.81, 0.64,  -0.17, 0.1,   -1.05,
            0.47,  -1.37, 0,     -0.16, 0.88,  -0.59, -0.54, 0.64,  -1.32,
            1.18,  -1.33, 1.18,  -0.58, 0.38,  -1.39, -1.26, 0.59,  -1.15,
            -0.15, 1.15,  -0.64, -1.18, -0.85, 0.77,  0.02,  0.13,  -1.12,
            0.8,   0.45,  0.48,  -1.24, 0.19,  -0.71, -1.2,  0.8,   0.42,
            -1.29, 1.27,  0.86,  0.5,   0.25,  0.66,  -0.33, 0.05,  1.23,
            0.46,  -0.5,  1.07,  0.81,  -0.45, 1.1,   0.56,  1.47,  -0.79,
            -1.44, -0.01, -1.25, -0.65, 0.28,  1.3,   -0.02, 0.29,  -0.66,
            0.63,  0.42,  -0.88, -0.62, 0.86,  -1.01, -0.89, -0.69, -0.29,
            1.43,  -1.09, -0.63, 1.09,  0.17,  0.78,  -0.53, -1.28, 0.3,
            -0.12, 0.74,  1.27,  1.03,  0.56,  0.17,  -1.17, 0.41,  0.98,
            0.13,  0.68,  -0.31, -0.99, 1.24,  -0.35, -0.86, -0.88, 1.45,
            -0.65, -0.62, -1.02, -0.31, -0.5,  1.12,  1.46,  -1.04, -0.93,
            -0.86, -0.3})},
      {"mask",
       MakeTensor<double>(
           {1, 8, 4, 2},
           {0.18, 0.32, 0.98, 0.36, 0.21, 0.79, 0.07, 0.86, 0.28, 0.56, 0.9,
            0.76, 0.3,  0.4,  0.58, 0.73, 0.18, 0.71, 0.59, 0.48, 0.13, 0.13,
            0.98, 0.36, 0.65, 0.54, 0.29, 0,    0.39, 0.26, 0.82, 0.85, 0.89,
            0.01, 0.05, 0.32, 0.22, 0.4,  0.65, 0.68, 0.99, 0.99, 0.98, 0.97,
            0.98, 0.57, 0.91, 0.08, 0.55, 0.3,  0.52, 0.2,  0.94, 0.77, 0.16,
            0.54, 0.11, 0.64, 0.41, 0.11, 0.13, 0.39, 0.79, 0.7})},
      {"b", MakeTensor<double>({6}, {0.1, -0.2, 0.3, 0, 0.5, -1})},
  };
}

TEST(DeformConvTest, MatchesTorchvision) {
  auto y = RunOp(DeformConv(kTorchAttrs, true), TorchFeeds(), {"y"});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)[0].dims(), Dims({1, 6, 4, 2}));
  EXPECT_THAT(
      Values<double>((*y)[0]),
      Pointwise(DoubleNear(1e-8),
                std::vector<double>{
                    0.113645296,  0.01668502,    0.212871868,   0.209267416,
                    0.328371448,  0.278419074,   0.224094162,   -0.277136256,
                    -0.189417008, -0.16838894,   0.140496541,   -0.392682968,
                    -0.120030776, -0.231176826,  -0.422969325,  -0.330770982,
                    0.285462288,  0.42467034,    -0.0003480258, 0.290668032,
                    0.299549856,  0.38245859,    -0.139669768,  0.36935999,
                    0.0865422316, -0.0098805527, -0.192624544,  -0.138407404,
                    0.0856522248, -0.29762986,   0.399905707,   0.202167464,
                    0.544517806,  0.379075769,   0.315656984,   0.52007657,
                    0.540916056,  0.264788417,   0.716274826,   0.45859781,
                    -0.977014994, -1.0730894,    -1.45955929,   -1.0379563,
                    -0.734541945, -0.925310486,  -0.48834396,   -0.747154895}));
}

// A 1x1 kernel shifted by (0.5, -0.25) from output (0, 1) reads
// 0.5 * (0.25 * x[0, 0] + 0.75 * x[0, 1]) + 0.5 * (0.25 * x[1, 0] + 0.75 *
// x[1, 1]); a shift past the border reads zeros.
TEST(DeformConvTest, HandComputedShift) {
  auto y = RunOp(DeformConv("", false),
                 {{"x", MakeTensor<float>({1, 1, 2, 2}, {1, 2, 3, 4})},
                  {"w", MakeTensor<float>({1, 1, 1, 1}, {2})},
                  {"offset", MakeTensor<float>({1, 2, 2, 2}, {0, 0.5f, 0, 5, 0,
                                                              -0.25f, 0, 0})}},
                 {"y"});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(Values<float>((*y)[0]),
              ElementsAre(2, 2 * (0.5f * (0.25f + 1.5f) + 0.5f * (0.75f + 3)),
                          2 * 3, 0));
}

Tensor Random(const Dims& dims, double scale, uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<double> dist(-scale, scale);
  std::vector<double> values(NumElements(dims));
  for (double& v : values) v = dist(engine);
  return MakeTensor<double>(dims, values);
}

TEST(DeformConvTest, GradientsMatchCentralDifferences) {
  GradCheckOptions options;
  options.rtol = 1e-4;
  options.wrt = {"x", "w", "offset", "mask", "b"};
  absl::Status status =
      CheckGradientTogetherAndAlone(DeformConv(kTorchAttrs, true),
                                    {{"x", Random({2, 4, 3, 4}, 1, 1)},
                                     {"w", Random({6, 2, 2, 2}, 1, 2)},
                                     {"offset", Random({2, 16, 4, 2}, 1.5, 3)},
                                     {"mask", Random({2, 8, 4, 2}, 1, 4)},
                                     {"b", Random({6}, 1, 5)}},
                                    options.wrt, options);
  EXPECT_TRUE(status.ok()) << status;
}

TEST(DeformConvTest, ShapeErrorsNameTheInputs) {
  const std::vector<Feed> feeds = {
      {"x", MakeTensor<float>({1, 2, 3, 3}, std::vector<float>(18))},
      {"w", MakeTensor<float>({2, 2, 2, 2}, std::vector<float>(16))},
      {"offset", MakeTensor<float>({1, 8, 3, 2}, std::vector<float>(48))}};
  EXPECT_THAT(PrepareOp(DeformConv("", false), feeds).message(),
              HasSubstr("input \"Offset\" (variable \"offset\", shape [1, 8, "
                        "3, 2]): expected [1, 8, 2, 2] (N, offset_group * kH "
                        "* kW * 2, oH, oW)"));
  EXPECT_THAT(
      PrepareOp(DeformConv("attrs { name: \"group\" i64: 2 }", false), feeds)
          .message(),
      HasSubstr("with group 2: expected (oC, C / group, kH, kW)"));
  EXPECT_THAT(
      PrepareOp(DeformConv("attrs { name: \"offset_group\" i64: 3 }", false),
                feeds)
          .message(),
      HasSubstr("offset_group 3 does not divide the 2 channels"));
  EXPECT_THAT(PrepareOp(DeformConv("attrs { name: \"kernel_shape\" i64s { "
                                   "values: [3, 3] } }",
                                   false),
                        feeds)
                  .message(),
              HasSubstr("attribute \"kernel_shape\" = [3, 3]: expected the "
                        "kernel of input \"W\""));
  EXPECT_THAT(PrepareOp(DeformConv("attrs { name: \"pads\" i64s { values: "
                                   "[1, 1] } }",
                                   false),
                        feeds)
                  .message(),
              HasSubstr("attribute \"pads\" = [1, 1]: expected 4 values"));
}

}  // namespace
}  // namespace scopeflow
