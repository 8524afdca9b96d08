// grid_sample against PyTorch 1.13's torch.nn.functional.grid_sample (every
// mode, padding mode and align_corners, 2-D and 3-D), hand-computed values
// where ONNX and PyTorch part (cubic with border padding), and its errors.
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
using ::testing::HasSubstr;
using ::testing::Pointwise;

std::string GridSample(const std::string& mode, const std::string& padding,
                       bool align_corners) {
  return absl::StrCat(
      "type: \"grid_sample\" inputs { slot: \"X\" vars: \"x\" } "
      "inputs { slot: \"Grid\" vars: \"grid\" } "
      "outputs { slot: \"Out\" vars: \"y\" } "
      "attrs { name: \"mode\" s: \"",
      mode,
      "\" } "
      "attrs { name: \"padding_mode\" s: \"",
      padding,
      "\" } "
      "attrs { name: \"align_corners\" b: ",
      align_corners ? "true" : "false", " }");
}

struct TorchCase {
  std::string mode;  // ours; PyTorch's bilinear and bicubic
  std::string padding;
  bool align_corners;
  std::vector<double> expected;
};

// x = arange(12).reshape(1, 1, 3, 4) * 0.5 - 1 with x[0, 0, 1, 2] = 3;
// points inside, outside and on both sides of the borders.
Tensor Image2d() {
  return MakeTensor<double>({1, 1, 3, 4},
                            {-1, -0.5, 0, 0.5, 1, 1.5, 3, 2.5, 3, 3.5, 4, 4.5});
}

Tensor Grid2d() {
  return MakeTensor<double>({1, 2, 3, 2}, {-1.3, -0.9, -0.4, 0.15, 0.35, -0.6,
                                           0.9, 0.7, 1.2, 1.45, 0.05, -1.15});
}

TEST(GridSampleTest, MatchesTorch2d) {
  const std::vector<TorchCase> cases = {
      {"linear", "zeros", false, {0, 1.8, 0.38, 2.9925, 0, -0.055}},
      {"linear", "zeros", true, {-0.44, 1.75, 1.2025, 3.87, 1.7325, -0.180625}},
      {"linear", "border", false, {-1, 1.8, 0.38, 4.5, 4.5, -0.2}},
      {"linear", "border", true, {-0.8, 1.75, 1.2025, 3.87, 4.5, -0.2125}},
      {"linear", "reflection", false, {-0.95, 1.8, 0.38, 4.5, 4.15, -0.2}},
      {"linear",
       "reflection",
       true,
       {-0.575, 1.75, 1.2025, 3.87, 3.585, 0.17375}},
      {"nearest", "zeros", false, {0, 1.5, 0, 4.5, 0, 0}},
      {"nearest", "zeros", true, {-1, 1.5, 0, 4.5, 4.5, 0}},
      {"nearest", "border", false, {-1, 1.5, 0, 4.5, 4.5, 0}},
      {"nearest", "border", true, {-1, 1.5, 0, 4.5, 4.5, 0}},
      {"nearest", "reflection", false, {-1, 1.5, 0, 4.5, 4.5, 0}},
      {"nearest", "reflection", true, {-1, 1.5, 0, 4.5, 4.5, 0}},
      {"cubic",
       "zeros",
       false,
       {0.0539991563, 1.98813036, 0.392753, 3.22244245, -0.0332650151,
        -0.165394281}},
      {"cubic",
       "zeros",
       true,
       {-0.560417645, 1.84767256, 1.11242163, 4.88446017, 1.9936852,
        -0.411970382}},
      {"cubic",
       "reflection",
       false,
       {-1.30247328, 1.81087121, 0.36815, 4.65561094, 4.25706235, -0.618725}},
      {"cubic",
       "reflection",
       true,
       {-0.844245125, 1.81481556, 0.786097094, 4.25409075, 4.014729,
        -0.115648853}},
  };
  for (const TorchCase& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.mode, " ", c.padding, " ", c.align_corners));
    auto y = RunOp(GridSample(c.mode, c.padding, c.align_corners),
                   {{"x", Image2d()}, {"grid", Grid2d()}}, {"y"});
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ((*y)[0].dims(), Dims({1, 1, 2, 3}));
    EXPECT_THAT(Values<double>((*y)[0]),
                Pointwise(DoubleNear(1e-8), c.expected));
  }
}

// x = arange(12).reshape(1, 1, 2, 3, 2) * 0.25 with x[0, 0, 1, 1, 0] = -2.
TEST(GridSampleTest, MatchesTorch3d) {
  const Tensor x = MakeTensor<double>(
      {1, 1, 2, 3, 2},
      {0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, -2, 2.25, 2.5, 2.75});
  const Tensor grid = MakeTensor<double>(
      {1, 1, 2, 2, 3},
      {-0.8, 0.3, -1.1, 0.6, -0.7, 0.9, 1.3, 0.2, 0.4, -0.2, -0.45, 0.1});
  const std::vector<TorchCase> cases = {
      {"linear", "zeros", false, {0.203, 0.89775, 0.45, 0.5915}},
      {"linear", "zeros", true, {0.64125, 1.547, 1.615, 0.474}},
      {"linear", "border", false, {0.725, 1.75, 2.25, 0.5915}},
      {"linear", "border", true, {0.675, 1.547, 1.9, 0.474}},
      {"linear", "reflection", false, {0.725, 1.75, 2.25, 0.5915}},
      {"linear", "reflection", true, {0.624, 1.547, 1.5265, 0.474}},
      {"nearest", "zeros", false, {0, 1.75, 0, 1.5}},
      {"nearest", "zeros", true, {0.5, 1.75, 2.25, -2}},
      {"nearest", "border", false, {0.5, 1.75, 2.25, 1.5}},
      {"nearest", "reflection", true, {0.5, 1.75, 2.25, -2}},
  };
  for (const TorchCase& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.mode, " ", c.padding, " ", c.align_corners));
    auto y = RunOp(GridSample(c.mode, c.padding, c.align_corners),
                   {{"x", x}, {"grid", grid}}, {"y"});
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ((*y)[0].dims(), Dims({1, 1, 1, 2, 2}));
    EXPECT_THAT(Values<double>((*y)[0]),
                Pointwise(DoubleNear(1e-8), c.expected));
  }
}

// ONNX clamps a coordinate outside the image into it before the cubic taps
// (PyTorch clamps each tap instead): 4 cells wide, x = -0.7 becomes 0,
// whose fraction 0 gives the tap at 0 weight 1. Inside (x = 1.5, half way
// between cells 1 and 2) the taps weigh -0.09375, 0.59375, 0.59375 and
// -0.09375, the first reading cell 0.
TEST(GridSampleTest, CubicBorderClampsTheCoordinate) {
  const Tensor x = MakeTensor<float>({1, 1, 1, 4}, {2, 10, 20, 50});
  // Unnormalized (align_corners false): ((g + 1) * 4 - 1) / 2.
  const Tensor grid = MakeTensor<float>({1, 1, 2, 2}, {-1.1f, 0, 0, 0});
  auto y = RunOp(GridSample("cubic", "border", false),
                 {{"x", x}, {"grid", grid}}, {"y"});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(Values<float>((*y)[0]),
              ElementsAre(2, -0.09375f * 2 + 0.59375f * 10 + 0.59375f * 20 -
                                 0.09375f * 50));
}

TEST(GridSampleTest, ChannelsAndBatchesShareTheGridOfTheirItem) {
  // Two batch items, two channels; each item's single point reads cell
  // (0, 1) of item 0 and cell (1, 0) of item 1 (align_corners).
  const Tensor x = MakeTensor<float>(
      {2, 2, 2, 2}, {1, 2, 3, 4, 10, 20, 30, 40, 5, 6, 7, 8, 50, 60, 70, 80});
  const Tensor grid = MakeTensor<float>({2, 1, 1, 2}, {1, -1, -1, 1});
  auto y = RunOp(GridSample("nearest", "zeros", true),
                 {{"x", x}, {"grid", grid}}, {"y"});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)[0].dims(), Dims({2, 2, 1, 1}));
  EXPECT_THAT(Values<float>((*y)[0]), ElementsAre(2, 20, 7, 70));
}

TEST(GridSampleTest, NearestRoundsHalfToEven) {
  // 4 cells, align_corners: g = -1/3 is 1 cell, g = 0 is 1.5 -> 2, g = 2/3
  // is 2.5 -> 2 (half to even).
  const Tensor x = MakeTensor<double>({1, 1, 1, 4}, {0, 1, 2, 3});
  const Tensor grid =
      MakeTensor<double>({1, 1, 3, 2}, {-1.0 / 3, 0, 0, 0, 2.0 / 3, 0});
  auto y = RunOp(GridSample("nearest", "zeros", true),
                 {{"x", x}, {"grid", grid}}, {"y"});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(Values<double>((*y)[0]), ElementsAre(1, 2, 2));
}

TEST(GridSampleTest, ShapeErrorsNameTheInputs) {
  const std::string op = GridSample("linear", "zeros", false);
  absl::Status status =
      PrepareOp(op, {{"x", MakeTensor<float>({1, 1, 2, 2}, {0, 0, 0, 0})},
                     {"grid", MakeTensor<float>({1, 1, 1, 3}, {0, 0, 0})}});
  EXPECT_THAT(status.message(),
              HasSubstr("input \"Grid\" (variable \"grid\", shape [1, 1, 1, "
                        "3]): expected its last axis to hold 2 coordinates"));
  status = PrepareOp(
      op, {{"x", MakeTensor<float>({2, 1, 2, 2}, std::vector<float>(8))},
           {"grid", MakeTensor<float>({1, 1, 1, 2}, {0, 0})}});
  EXPECT_THAT(status.message(), HasSubstr("expected the batch of input \"X\""));
  status =
      PrepareOp(op, {{"x", MakeTensor<float>({1, 1, 2, 2}, {0, 0, 0, 0})},
                     {"grid", MakeTensor<float>({1, 2, 2}, {0, 0, 0, 0})}});
  EXPECT_THAT(status.message(), HasSubstr("input \"Grid\""));
  status = PrepareOp(op, {{"x", MakeTensor<float>({1, 1, 2, 2}, {0, 0, 0, 0})},
                          {"grid", MakeTensor<double>({1, 1, 1, 2}, {0, 0})}});
  EXPECT_THAT(status.message(), HasSubstr("\"grid\""));
  status = PrepareOp(op, {{"x", MakeTensor<float>({1, 1, 0, 2}, {})},
                          {"grid", MakeTensor<float>({1, 1, 1, 2}, {0, 0})}});
  EXPECT_THAT(status.message(),
              HasSubstr("has an empty spatial axis 2: no cell to sample"));
  status = PrepareOp(op, {{"x", MakeTensor<int32_t>({1, 1, 1, 1}, {0})},
                          {"grid", MakeTensor<float>({1, 1, 1, 2}, {0, 0})}});
  EXPECT_THAT(status.message(), HasSubstr("expected float32 or float64"));
}

TEST(GridSampleTest, UnknownModeIsRefused) {
  absl::Status status =
      PrepareOp(GridSample("bilinear", "zeros", false),
                {{"x", MakeTensor<float>({1, 1, 1, 1}, {0})},
                 {"grid", MakeTensor<float>({1, 1, 1, 2}, {0, 0})}});
  EXPECT_THAT(status.message(), HasSubstr("mode"));
}

}  // namespace
}  // namespace scopeflow
