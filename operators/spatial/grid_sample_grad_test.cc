// grid_sample's gradients: numeric checks of X@GRAD and Grid@GRAD in every
// mode and padding mode, 2-D and 3-D, a hand-computed linear case, and
// grid_sample_grad's errors.
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
using ::testing::HasSubstr;

std::string Attrs(const std::string& mode, const std::string& padding,
                  bool align_corners) {
  return absl::StrCat("attrs { name: \"mode\" s: \"", mode, "\" } ",
                      "attrs { name: \"padding_mode\" s: \"", padding, "\" } ",
                      "attrs { name: \"align_corners\" b: ",
                      align_corners ? "true" : "false", " }");
}

std::string GridSample(const std::string& attrs) {
  return absl::StrCat(
      "type: \"grid_sample\" inputs { slot: \"X\" vars: \"x\" } "
      "inputs { slot: \"Grid\" vars: \"grid\" } "
      "outputs { slot: \"Out\" vars: \"y\" } ",
      attrs);
}

Tensor Random(const Dims& dims, double low, double high, uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<double> dist(low, high);
  std::vector<double> values(NumElements(dims));
  for (double& v : values) v = dist(engine);
  return MakeTensor<double>(dims, values);
}

// Grid values reach past both borders, so every padding mode's outside is
// crossed; random points sit off the tap boundaries (where the linear and
// cubic weights have kinks) with probability 1.
TEST(GridSampleGradTest, MatchesCentralDifferences) {
  for (const char* mode : {"linear", "cubic", "nearest"}) {
    for (const char* padding : {"zeros", "border", "reflection"}) {
      for (bool align : {false, true}) {
        SCOPED_TRACE(absl::StrCat(mode, " ", padding, " ", align));
        GradCheckOptions options;
        options.rtol = 1e-4;
        absl::Status status = CheckGradientTogetherAndAlone(
            GridSample(Attrs(mode, padding, align)),
            {{"x", Random({2, 2, 3, 4}, -1, 1, 3)},
             {"grid", Random({2, 3, 2, 2}, -1.6, 1.6, 4)}},
            {"x", "grid"}, options);
        EXPECT_TRUE(status.ok()) << status;
      }
    }
  }
}

TEST(GridSampleGradTest, MatchesCentralDifferences3d) {
  for (const char* mode : {"linear", "cubic"}) {
    for (const char* padding : {"zeros", "reflection"}) {
      SCOPED_TRACE(absl::StrCat(mode, " ", padding));
      GradCheckOptions options;
      options.rtol = 1e-4;
      absl::Status status =
          CheckGradient(GridSample(Attrs(mode, padding, false)),
                        {{"x", Random({1, 2, 2, 3, 3}, -1, 1, 5)},
                         {"grid", Random({1, 2, 1, 2, 3}, -1.4, 1.4, 6)}},
                        options);
      EXPECT_TRUE(status.ok()) << status;
    }
  }
}

// One point at x = 0.25 between cells 0 and 1 of [a, b] (align_corners,
// g = -0.5): Out = 0.75 a + 0.25 b, so X@GRAD = 0.75 dy, 0.25 dy; the
// unnormalized x = (g + 1) / 2 * (W - 1) moves 0.5 cell per unit of g, so
// dOut/dg = (b - a) * 0.5.
TEST(GridSampleGradTest, HandComputedLinear) {
  auto grads =
      RunOp(absl::StrCat("type: \"grid_sample_grad\" "
                         "inputs { slot: \"X\" vars: \"x\" } "
                         "inputs { slot: \"Grid\" vars: \"grid\" } "
                         "inputs { slot: \"Out@GRAD\" vars: \"dy\" } "
                         "outputs { slot: \"X@GRAD\" vars: \"dx\" } "
                         "outputs { slot: \"Grid@GRAD\" vars: \"dgrid\" } ",
                         Attrs("linear", "zeros", true)),
            {{"x", MakeTensor<float>({1, 1, 1, 2}, {2, 10})},
             {"grid", MakeTensor<float>({1, 1, 1, 2}, {-0.5f, 0})},
             {"dy", MakeTensor<float>({1, 1, 1, 1}, {4})}},
            {"dx", "dgrid"});
  ASSERT_TRUE(grads.ok()) << grads.status();
  EXPECT_THAT(Values<float>((*grads)[0]), ElementsAre(3, 1));
  // d/dg: 4 * (10 - 2) * 0.5; the y coordinate of a 1-cell axis does not
  // move (align_corners: (H - 1) / 2 = 0).
  EXPECT_THAT(Values<float>((*grads)[1]), ElementsAre(16, 0));
}

TEST(GridSampleGradTest, OutputGradShapeIsChecked) {
  absl::Status status = PrepareOp(
      absl::StrCat("type: \"grid_sample_grad\" "
                   "inputs { slot: \"X\" vars: \"x\" } "
                   "inputs { slot: \"Grid\" vars: \"grid\" } "
                   "inputs { slot: \"Out@GRAD\" vars: \"dy\" } "
                   "outputs { slot: \"X@GRAD\" vars: \"dx\" } ",
                   Attrs("linear", "zeros", false)),
      {{"x", MakeTensor<float>({1, 1, 2, 2}, {0, 0, 0, 0})},
       {"grid", MakeTensor<float>({1, 1, 3, 2}, std::vector<float>(6))},
       {"dy", MakeTensor<float>({1, 1, 3, 1}, {0, 0, 0})}});
  EXPECT_THAT(status.message(),
              HasSubstr("input \"Out@GRAD\" (variable \"dy\") is float32 [1, "
                        "1, 3, 1]: expected float32 [1, 1, 1, 3]"));
}

}  // namespace
}  // namespace scopeflow
