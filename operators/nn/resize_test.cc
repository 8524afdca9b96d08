// resize: hand-computed values for every mode, nearest mode and coordinate
// transformation, output sizes from attributes and from tensors fed at run
// time, and the errors.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

std::string Str(const std::string& name, const std::string& value) {
  return absl::StrCat("attrs { name: \"", name, "\" s: \"", value, "\" } ");
}

std::string Floats(const std::string& name, const std::vector<float>& values) {
  return absl::StrCat("attrs { name: \"", name, "\" floats { values: [",
                      absl::StrJoin(values, ", "), "] } } ");
}

std::string Int64s(const std::string& name,
                   const std::vector<int64_t>& values) {
  return absl::StrCat("attrs { name: \"", name, "\" i64s { values: [",
                      absl::StrJoin(values, ", "), "] } } ");
}

std::string Ints(const std::string& name, const std::vector<int32_t>& values) {
  return absl::StrCat("attrs { name: \"", name, "\" ints { values: [",
                      absl::StrJoin(values, ", "), "] } } ");
}

std::string Bool(const std::string& name) {
  return absl::StrCat("attrs { name: \"", name, "\" b: true } ");
}

// resize of x into y; `inputs` binds more slots, e.g. {"Sizes", "s"}.
std::string Resize(
    const std::string& attrs,
    const std::vector<std::pair<std::string, std::string>>& inputs = {}) {
  std::string op =
      "type: \"resize\" inputs { slot: \"X\" vars: \"x\" } "
      "outputs { slot: \"Out\" vars: \"y\" } ";
  for (const auto& [slot, var] : inputs) {
    absl::StrAppend(&op, "inputs { slot: \"", slot, "\" vars: \"", var,
                    "\" } ");
  }
  return op + attrs;
}

absl::StatusOr<Tensor> RunResize(const std::string& op, const Tensor& x,
                                 std::vector<Feed> more = {}) {
  std::vector<Feed> feeds = {{"x", x}};
  for (Feed& feed : more) feeds.push_back(std::move(feed));
  absl::StatusOr<std::vector<Tensor>> out = RunOp(op, feeds, {"y"});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

Tensor Row(const std::vector<float>& values) {
  return MakeTensor<float>({1, static_cast<int64_t>(values.size())}, values);
}

TEST(ResizeTest, NearestUpsampleRepeatsCells) {
  auto y = RunResize(Resize(Floats("scales", {1, 1, 2, 3})),
                     MakeTensor<float>({1, 1, 2, 2}, {1, 2, 3, 4}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims(), ElementsAre(1, 1, 4, 6));
  EXPECT_THAT(Values<float>(*y),
              ElementsAreArray<float>({1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2,
                                       3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}));
}

// Nearest modes over the asymmetric coordinates x / scale: scale 2 puts
// samples on halves (ties), 2.5 between cells.
TEST(ResizeTest, NearestModes) {
  struct Case {
    std::string mode;
    float scale;
    std::vector<float> want;
  };
  const std::vector<Case> cases = {
      {"round_prefer_floor", 2, {1, 1, 2, 2, 3, 3, 4, 4}},
      {"round_prefer_ceil", 2, {1, 2, 2, 3, 3, 4, 4, 4}},
      {"round_prefer_floor", 2.5, {1, 1, 2, 2, 3, 3, 3, 4, 4, 4}},
      {"floor", 2.5, {1, 1, 1, 2, 2, 3, 3, 3, 4, 4}},
      {"ceil", 2.5, {1, 2, 2, 3, 3, 3, 4, 4, 4, 4}},
      // Scaled up: floor. Scaled down: ceil, samples at 0, 1.67 and 3.33.
      {"floor_up_ceil_down", 2.5, {1, 1, 1, 2, 2, 3, 3, 3, 4, 4}},
      {"floor_up_ceil_down", 0.6, {1, 3}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.mode, " ", c.scale));
    auto y =
        RunResize(Resize(Str("nearest_mode", c.mode) +
                         Str("coordinate_transformation_mode", "asymmetric") +
                         Floats("scales", {1, c.scale})),
                  Row({1, 2, 3, 4}));
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_THAT(Values<float>(*y), ElementsAreArray(c.want));
  }
}

TEST(ResizeTest, BilinearHalfPixelClampsAtTheEdges) {
  auto y = RunResize(Resize(Str("mode", "linear") + Floats("scales", {2, 2})),
                     MakeTensor<float>({2, 2}, {1, 2, 3, 4}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(Values<float>(*y), ElementsAreArray<float>(
                                     {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5,
                                      2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4}));
}

// Linear resizing of [1, 2, 3, 4] under each coordinate transformation.
TEST(ResizeTest, CoordinateTransformations) {
  struct Case {
    std::string mode;
    std::string attrs;
    std::vector<float> want;
  };
  const std::vector<Case> cases = {
      // Samples at x * 3 / 6.
      {"align_corners",
       Floats("scales", {1, 1.75f}),
       {1, 1.5, 2, 2.5, 3, 3.5, 4}},
      // Two samples of the unrounded length 2.4: at 0 and 3 / 1.4.
      {"align_corners", Floats("scales", {1, 0.6f}), {1, 3.142857f}},
      {"asymmetric", Floats("scales", {1, 2}), {1, 1.5, 2, 2.5, 3, 3.5, 4, 4}},
      // (x + 0.5) / 0.6 - 0.5 shifted by 2 * (1 - 2 / 2.4).
      {"half_pixel_symmetric",
       Floats("scales", {1, 0.6f}),
       {1.6666666f, 3.3333333f}},
      // One output cell samples the first input cell.
      {"pytorch_half_pixel", Int64s("sizes", {1, 1}), {1}},
      // ... where half_pixel samples the centre.
      {"half_pixel", Int64s("sizes", {1, 1}), {2.5}},
      {"tf_half_pixel_for_nn",
       Floats("scales", {1, 2}),
       {1.25, 1.75, 2.25, 2.75, 3.25, 3.75, 4, 4}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.mode);
    auto y = RunResize(
        Resize(Str("mode", "linear") +
               Str("coordinate_transformation_mode", c.mode) + c.attrs),
        Row({1, 2, 3, 4}));
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_THAT(Values<float>(*y), Pointwise(FloatNear(1e-5), c.want));
  }
}

// A single bump upsampled with Keys' kernel (a = -0.75): the samples
// between cells weigh their neighbours 0.59375 and -0.09375.
TEST(ResizeTest, CubicAsymmetric) {
  auto y =
      RunResize(Resize(Str("mode", "cubic") +
                       Str("coordinate_transformation_mode", "asymmetric") +
                       Floats("scales", {1, 2})),
                Row({0, 0, 10, 0}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(
      Values<float>(*y),
      Pointwise(FloatNear(1e-5), std::vector<float>{0, -0.9375, 0, 5.9375, 10,
                                                    5.9375, 0, -0.9375}));
}

// exclude_outside drops the weight of the cell left of the first (-0.09375
// for a = -0.75) and renormalises: the first sample sees only the bump.
TEST(ResizeTest, CubicExcludeOutsideAndCoefficient) {
  auto y =
      RunResize(Resize(Str("mode", "cubic") +
                       Str("coordinate_transformation_mode", "asymmetric") +
                       Bool("exclude_outside") + Floats("scales", {1, 2})),
                Row({0, 10, 0, 0}));
  ASSERT_TRUE(y.ok()) << y.status();
  // x = 0.5 reads cells 0, 1, 2 with weights 0.59375, 0.59375, -0.09375
  // over their sum 1.09375.
  EXPECT_NEAR(Values<float>(*y)[1], 10 * 0.59375 / 1.09375, 1e-5);
  // a = -0.5: K(0.5) = 0.5625, K(1.5) = -0.0625.
  y = RunResize(Resize(Str("mode", "cubic") +
                       Str("coordinate_transformation_mode", "asymmetric") +
                       "attrs { name: \"cubic_coeff_a\" f: -0.5 } " +
                       Floats("scales", {1, 2})),
                Row({0, 0, 10, 0}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_NEAR(Values<float>(*y)[3], 5.625, 1e-5);
  EXPECT_NEAR(Values<float>(*y)[1], -0.625, 1e-5);
}

// Halving with antialiasing: a triangle twice as wide, weights 1/8, 3/8,
// 3/8, 1/8 over the four nearest cells.
TEST(ResizeTest, LinearAntialiasDownsample) {
  auto y = RunResize(Resize(Str("mode", "linear") + Bool("antialias") +
                            Floats("scales", {1, 0.5})),
                     Row({1, 2, 3, 4, 5, 6, 7, 8}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(
      Values<float>(*y),
      Pointwise(FloatNear(1e-5), std::vector<float>{1.625, 3.5, 5.5, 7.375}));
  // Without: plain interpolation at 0.5, 2.5, 4.5 and 6.5.
  y = RunResize(Resize(Str("mode", "linear") + Floats("scales", {1, 0.5})),
                Row({1, 2, 3, 4, 5, 6, 7, 8}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(Values<float>(*y), ElementsAre(1.5, 3.5, 5.5, 7.5));
}

// Cubic antialiasing at scale 1/2 spans eight cells; a constant stays
// constant because the weights are renormalised.
TEST(ResizeTest, CubicAntialiasKeepsConstants) {
  auto y = RunResize(Resize(Str("mode", "cubic") + Bool("antialias") +
                            Floats("scales", {1, 0.5})),
                     Row({3, 3, 3, 3, 3, 3, 3, 3}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(Values<float>(*y),
              Pointwise(FloatNear(1e-5), std::vector<float>{3, 3, 3, 3}));
}

// The crop [0.4, 1.2] of [0, 10, 20, 30] in three samples: 1.2 + 1.2 x,
// the last beyond the input.
TEST(ResizeTest, TfCropAndResizeExtrapolates) {
  const std::string crop =
      Str("mode", "linear") +
      Str("coordinate_transformation_mode", "tf_crop_and_resize") +
      "attrs { name: \"extrapolation_value\" f: 99 } ";
  auto y = RunResize(Resize(crop + Floats("roi", {0, 0.4f, 1, 1.2f}) +
                            Int64s("sizes", {1, 3})),
                     Row({0, 10, 20, 30}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(Values<float>(*y),
              Pointwise(FloatNear(1e-4), std::vector<float>{12, 24, 99}));
  // The same roi fed as a tensor, on axis 1 only.
  y = RunResize(
      Resize(crop + Int64s("sizes", {3}) + Ints("axes", {1}), {{"Roi", "r"}}),
      Row({0, 10, 20, 30}), {{"r", MakeTensor<float>({2}, {0.4f, 1.2f})}});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(Values<float>(*y),
              Pointwise(FloatNear(1e-4), std::vector<float>{12, 24, 99}));
}

TEST(ResizeTest, AxesSelectWhatIsResized) {
  const Tensor x = MakeTensor<float>({2, 2, 1}, {1, 2, 3, 4});
  auto y = RunResize(Resize(Int64s("sizes", {4}) + Ints("axes", {-2})), x);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims(), ElementsAre(2, 4, 1));
  EXPECT_THAT(Values<float>(*y), ElementsAre(1, 1, 2, 2, 3, 3, 4, 4));
  // The axes' order is the order of the sizes.
  y = RunResize(Resize(Int64s("sizes", {3, 4}) + Ints("axes", {2, 1})), x);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims(), ElementsAre(2, 4, 3));
}

TEST(ResizeTest, KeepAspectRatioPolicies) {
  const Tensor x = MakeTensor<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  const std::string sizes = Int64s("sizes", {7, 8}) + Ints("axes", {2, 3});
  // Scales 3.5 and 4: not_larger takes 3.5 for both, not_smaller 4.
  auto y = RunResize(
      Resize(sizes + Str("keep_aspect_ratio_policy", "not_larger")), x);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims(), ElementsAre(1, 1, 7, 7));
  y = RunResize(Resize(sizes + Str("keep_aspect_ratio_policy", "not_smaller")),
                x);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims(), ElementsAre(1, 1, 8, 8));
  // Scale 2.25: 2 * 2.25 = 4.5 rounds half up.
  y = RunResize(Resize(Int64s("sizes", {5, 9}) + Ints("axes", {2, 3}) +
                       Str("keep_aspect_ratio_policy", "not_larger")),
                MakeTensor<float>({1, 1, 2, 4}, std::vector<float>(8, 1)));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims(), ElementsAre(1, 1, 5, 9));
}

TEST(ResizeTest, Float64) {
  auto y =
      RunResize(Resize(Str("mode", "linear") + Floats("scales", {1, 2}) +
                       Str("coordinate_transformation_mode", "align_corners")),
                MakeTensor<double>({1, 2}, {0, 3}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(Values<double>(*y),
              Pointwise(DoubleNear(1e-12), std::vector<double>{0, 1, 2, 3}));
}

TEST(ResizeTest, EmptyBatch) {
  auto y = RunResize(Resize(Floats("scales", {1, 1, 2, 2})),
                     MakeTensor<float>({0, 1, 2, 2}, {}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims(), ElementsAre(0, 1, 4, 4));
}

// Sizes and scales fed at run time: Prepare cannot tell the resized dims,
// the run computes them from the values.
TEST(ResizeTest, SizesFedAtRunTime) {
  const std::string op = Resize("", {{"Sizes", "s"}});
  const std::vector<VarDecl> vars = {{"x", kFloat32, {1, 1, 2, 2}},
                                     {"s", kInt64, {4}}};
  auto prepared = InferAtPrepare(op, vars, "y");
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  // Sizes cover every axis here: none is known before the values.
  EXPECT_THAT(prepared->dims, ElementsAre(-1, -1, -1, -1));
  const Tensor x = MakeTensor<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  for (const std::vector<int64_t>& sizes :
       {std::vector<int64_t>{1, 1, 4, 2}, std::vector<int64_t>{1, 1, 1, 3}}) {
    auto y = RunDeclared(
        op, vars, {{"x", x}, {"s", MakeTensor<int64_t>({4}, sizes)}}, {"y"});
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_THAT((*y)[0].dims(), ElementsAreArray(sizes));
  }
  auto y = RunDeclared(
      op, vars, {{"x", x}, {"s", MakeTensor<int64_t>({4}, {1, 1, 4, 2})}},
      {"y"});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(Values<float>((*y)[0]), ElementsAre(1, 2, 1, 2, 3, 4, 3, 4));
}

TEST(ResizeTest, ScalesFedAtRunTime) {
  const std::string op = Resize(Str("mode", "linear"), {{"Scales", "s"}});
  auto y = RunResize(op, MakeTensor<float>({1, 2}, {1, 2}),
                     {{"s", MakeTensor<float>({2}, {1, 2})}});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(Values<float>(*y), ElementsAre(1, 1.25, 1.75, 2));
  // Scales alone tell each dim once X's is known.
  auto prepared =
      InferAtPrepare(op, {{"x", kFloat32, {-1, 2}}, {"s", kFloat32, {2}}}, "y");
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_THAT(prepared->dims, ElementsAre(-1, -1));
  prepared = InferAtPrepare(Resize(Floats("scales", {1, 2.5})),
                            {{"x", kFloat32, {-1, 3}}}, "y");
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_THAT(prepared->dims, ElementsAre(-1, 7));
}

TEST(ResizeTest, KeepAspectRatioWithSizesFedAtRunTime) {
  const std::string op = Resize(
      Ints("axes", {2, 3}) + Str("keep_aspect_ratio_policy", "not_larger"),
      {{"Sizes", "s"}});
  auto y = RunResize(op, MakeTensor<float>({1, 1, 2, 2}, {1, 2, 3, 4}),
                     {{"s", MakeTensor<int64_t>({2}, {7, 8})}});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims(), ElementsAre(1, 1, 7, 7));
}

absl::Status PrepareResize(const std::string& op, std::vector<Feed> more = {}) {
  std::vector<Feed> feeds = {
      {"x", MakeTensor<float>({1, 1, 2, 2}, {1, 2, 3, 4})}};
  for (Feed& feed : more) feeds.push_back(std::move(feed));
  return PrepareOp(op, feeds);
}

TEST(ResizeErrorTest, NeedsExactlyOneOutputSize) {
  EXPECT_THAT(PrepareResize(Resize("")).message(),
              HasSubstr("op 0 (resize): expected the output size: attribute "
                        "\"scales\" or \"sizes\", or input \"Scales\" or "
                        "\"Sizes\""));
  EXPECT_THAT(
      PrepareResize(Resize(Floats("scales", {1, 1, 2, 2}), {{"Sizes", "s"}}),
                    {{"s", MakeTensor<int64_t>({4}, {1, 1, 4, 4})}})
          .message(),
      HasSubstr("attribute \"scales\" and input \"Sizes\" (variable \"s\") "
                "both give the output size: expected one of them"));
}

// An input bound for values known at run time wins over the attribute.
TEST(ResizeTest, InputWinsOverAttribute) {
  auto y = RunResize(Resize(Floats("scales", {1, 3}), {{"Scales", "s"}}),
                     MakeTensor<float>({1, 2}, {1, 2}),
                     {{"s", MakeTensor<float>({2}, {1, 2})}});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(Values<float>(*y), ElementsAre(1, 1, 2, 2));
}

TEST(ResizeErrorTest, CountsAndValues) {
  EXPECT_THAT(PrepareResize(Resize(Floats("scales", {2, 2}))).message(),
              HasSubstr("attribute \"scales\" holds 2 values: expected 4, one "
                        "per resized axis"));
  EXPECT_THAT(PrepareResize(Resize(Int64s("sizes", {2}) + Ints("axes", {1, 2})))
                  .message(),
              HasSubstr("attribute \"sizes\" holds 1 values: expected 2"));
  EXPECT_THAT(PrepareResize(Resize(Floats("scales", {1, 1, -2, 2}))).message(),
              HasSubstr("attribute \"scales\" must be positive, got -2"));
  // Values fed at run time are checked at run time.
  auto y = RunResize(Resize("", {{"Scales", "s"}}),
                     MakeTensor<float>({1, 1, 2, 2}, {1, 2, 3, 4}),
                     {{"s", MakeTensor<float>({4}, {1, 1, 0, 2})}});
  EXPECT_THAT(y.status().message(),
              HasSubstr("op 0 (resize): input \"Scales\" (variable \"s\") = "
                        "[1, 1, 0, 2]: expected positive values"));
  y = RunResize(Resize("", {{"Scales", "s"}}),
                MakeTensor<float>({1, 1, 2, 2}, {1, 2, 3, 4}),
                {{"s", MakeTensor<float>({4}, {1, 1, 1e30f, 2})}});
  EXPECT_THAT(y.status().message(),
              HasSubstr("input \"Scales\" (variable \"s\") makes axis 2 "
                        "2e+30 cells long: expected at most 2^53"));
  y = RunResize(Resize("", {{"Sizes", "s"}}),
                MakeTensor<float>({1, 1, 2, 2}, {1, 2, 3, 4}),
                {{"s", MakeTensor<int64_t>({3}, {1, 2, 2})}});
  EXPECT_THAT(y.status().message(),
              HasSubstr("input \"Sizes\" (variable \"s\") holds 3 values: "
                        "expected 4, one per resized axis"));
}

TEST(ResizeErrorTest, InputDtypesAndRanks) {
  EXPECT_THAT(PrepareResize(Resize("", {{"Scales", "s"}}),
                            {{"s", MakeTensor<int64_t>({4}, {1, 1, 2, 2})}})
                  .message(),
              HasSubstr("input \"Scales\" (variable \"s\") has dtype int64: "
                        "expected float32 or float64"));
  EXPECT_THAT(
      PrepareResize(Resize("", {{"Sizes", "s"}}),
                    {{"s", MakeTensor<int64_t>({2, 2}, {1, 1, 2, 2})}})
          .message(),
      HasSubstr("input \"Sizes\" (variable \"s\") has shape [2, 2]: expected "
                "rank 1"));
  EXPECT_THAT(PrepareOp(Resize(Floats("scales", {2})),
                        {{"x", MakeTensor<int32_t>({2}, {1, 2})}})
                  .message(),
              HasSubstr("input \"X\" (variable \"x\") has dtype int32"));
}

TEST(ResizeErrorTest, Axes) {
  EXPECT_THAT(
      PrepareResize(Resize(Floats("scales", {2, 2}) + Ints("axes", {2, -2})))
          .message(),
      HasSubstr("attribute \"axes\" = [2, -2] names axis 2 twice"));
  EXPECT_THAT(PrepareResize(Resize(Floats("scales", {2}) + Ints("axes", {4})))
                  .message(),
              HasSubstr("axes"));
}

TEST(ResizeErrorTest, ModeCombinations) {
  EXPECT_THAT(
      PrepareResize(Resize(Bool("antialias") + Floats("scales", {1, 1, 2, 2})))
          .message(),
      HasSubstr("attribute \"antialias\" is true but mode is \"nearest\""));
  EXPECT_THAT(
      PrepareResize(Resize(Floats("roi", {0, 0, 0, 0, 1, 1, 1, 1}) +
                           Floats("scales", {1, 1, 2, 2})))
          .message(),
      HasSubstr("attribute \"roi\" gives a region of interest, which only "
                "coordinate_transformation_mode \"tf_crop_and_resize\" "
                "reads"));
  EXPECT_THAT(PrepareResize(Resize(Str("coordinate_transformation_mode",
                                       "tf_crop_and_resize") +
                                   Floats("scales", {1, 1, 2, 2})))
                  .message(),
              HasSubstr("coordinate_transformation_mode "
                        "\"tf_crop_and_resize\" needs the region of interest"));
  EXPECT_THAT(
      PrepareResize(
          Resize(Str("coordinate_transformation_mode", "tf_crop_and_resize") +
                 Floats("roi", {0, 1}) + Floats("scales", {1, 1, 2, 2})))
          .message(),
      HasSubstr("attribute \"roi\" holds 2 values: expected 8, a "
                "start and an end per resized axis"));
  EXPECT_THAT(PrepareResize(Resize(Str("mode", "bilinear") +
                                   Floats("scales", {1, 1, 2, 2})))
                  .message(),
              HasSubstr("must be one of nearest, linear, cubic"));
}

TEST(ResizeErrorTest, EmptyAxes) {
  EXPECT_THAT(PrepareOp(Resize(Int64s("sizes", {1, 3})),
                        {{"x", MakeTensor<float>({1, 0}, {})}})
                  .message(),
              HasSubstr("X has shape [1, 0]: cannot resize empty axis 1 to 3 "
                        "cells"));
  EXPECT_THAT(PrepareOp(Resize(Int64s("sizes", {1, 3}) +
                               Str("keep_aspect_ratio_policy", "not_larger")),
                        {{"x", MakeTensor<float>({1, 0}, {})}})
                  .message(),
              HasSubstr("keep_aspect_ratio_policy \"not_larger\" cannot keep "
                        "the ratio of empty axis 1"));
}

}  // namespace
}  // namespace scopeflow
