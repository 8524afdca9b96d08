// roi_align: hand-computed bins over an image whose values are linear in
// the coordinates (X[y][x] = 3y + x, which bilinear sampling reproduces
// exactly) in both coordinate modes, "max", batch indices, samples outside
// the image; X's gradient against central differences; errors.
#include <cstdint>
#include <string>
#include <vector>

#include "framework/grad_check.h"
#include "framework/op_spec.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string RoiAlignOp(const std::string& attrs) {
  return "type: \"roi_align\" inputs { slot: \"X\" vars: \"x\" } inputs { "
         "slot: \"Rois\" vars: \"r\" } inputs { slot: \"BatchIndices\" vars: "
         "\"i\" } outputs { slot: \"Out\" vars: \"y\" } " +
         attrs;
}

std::string Attrs(int64_t out, int64_t sampling, const std::string& mode,
                  const std::string& transform) {
  return "attrs { name: \"output_height\" i64: " + std::to_string(out) +
         " } attrs { name: \"output_width\" i64: " + std::to_string(out) +
         " } attrs { name: \"sampling_ratio\" i64: " +
         std::to_string(sampling) + " } attrs { name: \"mode\" s: \"" + mode +
         "\" } attrs { name: \"coordinate_transformation_mode\" s: \"" +
         transform + "\" }";
}

// [batches, 1, 3, 3] with X[b][0][y][x] = 3y + x + 100b.
Tensor LinearImage(int64_t batches) {
  std::vector<float> values;
  for (int64_t b = 0; b < batches; ++b) {
    for (int v = 0; v < 9; ++v) values.push_back(v + 100.0f * b);
  }
  return MakeTensor<float>({batches, 1, 3, 3}, values);
}

std::vector<float> RoiAlign(const std::string& attrs, const Tensor& x,
                            std::vector<float> roi, int64_t batch = 0) {
  auto out = RunOp(RoiAlignOp(attrs),
                   {{"x", x},
                    {"r", MakeTensor<float>({1, 4}, roi)},
                    {"i", MakeTensor<int64_t>({1}, {batch})}},
                   {"y"});
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  return Values<float>((*out)[0]);
}

TEST(RoiAlignTest, AverageOfBilinearSamples) {
  // half_pixel: (0.5, 0.5, 2.5, 2.5) spans [0, 2] on both axes. One bin of
  // 2 x 2 samples at 0.5 and 1.5 averages to 3 * 1 + 1 = 4; 2 x 2 bins of
  // one sample each are 3y + x at their centers: 2, 3, 5, 6.
  const Tensor x = LinearImage(1);
  EXPECT_THAT(
      RoiAlign(Attrs(1, 2, "avg", "half_pixel"), x, {0.5f, 0.5f, 2.5f, 2.5f}),
      ElementsAre(4));
  EXPECT_THAT(
      RoiAlign(Attrs(2, 1, "avg", "half_pixel"), x, {0.5f, 0.5f, 2.5f, 2.5f}),
      ElementsAre(2, 3, 5, 6));
  // output_half_pixel takes the box unshifted: (0, 0, 2, 2) is the same
  // region; sampling_ratio 0 takes ceil(bin size) = 1 sample a side.
  EXPECT_THAT(
      RoiAlign(Attrs(2, 0, "avg", "output_half_pixel"), x, {0, 0, 2, 2}),
      ElementsAre(2, 3, 5, 6));
  // It makes a region at least 1 x 1: (1, 1, 1.2, 1.2) samples (1.5, 1.5).
  EXPECT_THAT(
      RoiAlign(Attrs(1, 0, "avg", "output_half_pixel"), x, {1, 1, 1.2f, 1.2f}),
      ElementsAre(6));
  // spatial_scale 0.5 maps (0, 0, 4, 4) onto (0, 0, 2, 2).
  EXPECT_THAT(RoiAlign(Attrs(2, 1, "avg", "output_half_pixel") +
                           " attrs { name: \"spatial_scale\" f: 0.5 }",
                       x, {0, 0, 4, 4}),
              ElementsAre(2, 3, 5, 6));
}

TEST(RoiAlignTest, MaxOfWeightedCorners) {
  // One sample at (0.5, 0.5): corners 0, 1, 3, 4 weigh 1/4 each; the
  // largest weighted one is 4 / 4 = 1. With 2 x 2 samples, the one at
  // (0.75, 0.75) weighs corner 4 by 0.75 * 0.75: 2.25.
  const Tensor x = LinearImage(1);
  EXPECT_THAT(
      RoiAlign(Attrs(1, 1, "max", "half_pixel"), x, {0.5f, 0.5f, 1.5f, 1.5f}),
      ElementsAre(1));
  EXPECT_THAT(
      RoiAlign(Attrs(1, 2, "max", "half_pixel"), x, {0.5f, 0.5f, 1.5f, 1.5f}),
      ElementsAre(2.25f));
}

TEST(RoiAlignTest, BatchIndicesAndSamplesOutside) {
  const Tensor x = LinearImage(2);
  EXPECT_THAT(RoiAlign(Attrs(1, 2, "avg", "half_pixel"), x,
                       {0.5f, 0.5f, 2.5f, 2.5f}, 1),
              ElementsAre(104));
  // A sample beyond the image (y > H or x > W) is 0.
  EXPECT_THAT(
      RoiAlign(Attrs(1, 1, "avg", "half_pixel"), x, {10, 10, 12, 12}, 1),
      ElementsAre(0));
}

TEST(RoiAlignTest, GradientOfX) {
  const std::vector<double> x = RandomValues(2 * 2 * 5 * 6, 7);
  const std::vector<Feed> feeds = {
      {"x", MakeTensor<double>({2, 2, 5, 6}, x)},
      {"r", MakeTensor<double>({3, 4}, {0.3, 0.2, 4.1, 3.7, 1.2, 0.4, 2.9, 4.6,
                                        -0.6, 2.2, 5.8, 5.3})},
      {"i", MakeTensor<int64_t>({3}, {1, 0, 1})}};
  GradCheckOptions options;
  options.wrt = {"x"};
  for (const char* mode : {"avg", "max"}) {
    for (const char* transform : {"half_pixel", "output_half_pixel"}) {
      EXPECT_TRUE(CheckGradient(RoiAlignOp(Attrs(2, 0, mode, transform)), feeds,
                                options)
                      .ok())
          << mode << " " << transform;
      EXPECT_TRUE(CheckGradient(RoiAlignOp(Attrs(3, 2, mode, transform)), feeds,
                                options)
                      .ok())
          << mode << " " << transform;
    }
  }
}

TEST(RoiAlignTest, BadInputsAreRefused) {
  const std::string op = RoiAlignOp(Attrs(2, 0, "avg", "half_pixel"));
  auto prepare = [&op](std::vector<int64_t> x, std::vector<int64_t> rois,
                       std::vector<int64_t> indices) {
    return InferAtPrepare(
        op, {{"x", kFloat32, x}, {"r", kFloat32, rois}, {"i", kInt64, indices}},
        "y");
  };
  auto info = prepare({2, 3, 8, 8}, {5, 4}, {5});
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(5, 3, 2, 2));
  absl::Status status = prepare({3, 8, 8}, {5, 4}, {5}).status();
  EXPECT_THAT(status.message(), HasSubstr("roi_align"));
  EXPECT_THAT(status.message(), HasSubstr("input \"X\" (variable \"x\""));
  status = prepare({2, 3, 8, 8}, {5, 5}, {5}).status();
  EXPECT_THAT(status.message(),
              HasSubstr("expected [num_rois, 4], (x1, y1, x2, y2) a region"));
  status = prepare({2, 3, 8, 8}, {5, 4}, {4}).status();
  EXPECT_THAT(status.message(), HasSubstr("expected one batch index a region"));
  auto out = RunOp(op,
                   {{"x", LinearImage(1)},
                    {"r", MakeTensor<float>({1, 4}, {0, 0, 1, 1})},
                    {"i", MakeTensor<int64_t>({1}, {1})}},
                   {"y"});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(),
              HasSubstr("input \"BatchIndices\" (variable \"i\") holds 1 for "
                        "region 0: expected a batch index of input \"X\" "
                        "(variable \"x\"), within [0, 1)"));
  out = RunOp(RoiAlignOp(Attrs(1, 0, "min", "half_pixel")),
              {{"x", LinearImage(1)},
               {"r", MakeTensor<float>({1, 4}, {0, 0, 1, 1})},
               {"i", MakeTensor<int64_t>({1}, {0})}},
              {"y"});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("mode"));
}

}  // namespace
}  // namespace scopeflow
