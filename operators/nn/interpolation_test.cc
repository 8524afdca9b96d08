// The per-axis maps of resizing: their taps for hand-computed cases, and
// Apply and ApplyTransposed as adjoint linear maps.
#include "operators/nn/interpolation.h"

#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace interpolation {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::Pointwise;

AxisResize Axis(int64_t in, int64_t out, double scale) {
  AxisResize axis;
  axis.in = in;
  axis.out = out;
  axis.scale = scale;
  return axis;
}

TEST(InterpolationTest, SameSizeHalfPixelIsTheIdentity) {
  for (Mode mode : {Mode::kNearest, Mode::kLinear, Mode::kCubic}) {
    Method method;
    method.mode = mode;
    EXPECT_TRUE(MapOf(method, Axis(5, 5, 1.0)).IsIdentity());
  }
  Method method;
  method.coordinate_mode = CoordinateMode::kTfHalfPixelForNn;
  method.mode = Mode::kLinear;
  // Samples half a cell to the right: a blend, not the identity.
  EXPECT_FALSE(MapOf(method, Axis(5, 5, 1.0)).IsIdentity());
}

// Linear from 2 to 4 cells, half_pixel: samples at -0.25, 0.25, 0.75 and
// 1.25, the outer ones clamped to the edge cells.
TEST(InterpolationTest, LinearTaps) {
  Method method;
  method.mode = Mode::kLinear;
  const AxisMap map = MapOf(method, Axis(2, 4, 2.0));
  ASSERT_THAT(map.begin, ElementsAre(0, 2, 4, 6, 8));
  EXPECT_THAT(map.index, ElementsAre(0, 0, 0, 1, 0, 1, 1, 1));
  EXPECT_THAT(map.weight,
              Pointwise(DoubleNear(1e-12),
                        std::vector<double>{0.25, 0.75, 0.75, 0.25, 0.25, 0.75,
                                            0.75, 0.25}));
  EXPECT_FALSE(map.AnyOutside());
}

TEST(InterpolationTest, CropMarksSamplesOutsideTheInput) {
  Method method;
  method.mode = Mode::kLinear;
  method.coordinate_mode = CoordinateMode::kTfCropAndResize;
  AxisResize axis = Axis(4, 3, 0.75);
  axis.roi_start = -0.5;
  axis.roi_end = 1.0;
  // Samples at -1.5, 0.75 and 3.
  const AxisMap map = MapOf(method, axis);
  EXPECT_THAT(map.outside, ElementsAre(true, false, false));
  EXPECT_THAT(map.begin, ElementsAre(0, 0, 2, 3));
  EXPECT_TRUE(map.AnyOutside());
}

// Antialiased linear at scale 1/3 spans six cells.
TEST(InterpolationTest, AntialiasWidensTheWindowAndNormalises) {
  Method method;
  method.mode = Mode::kLinear;
  method.antialias = true;
  const AxisMap map = MapOf(method, Axis(9, 3, 1.0 / 3));
  // Output 1 samples cell 4 itself: weights 1/9 (1, 2, 3, 2, 1) over cells
  // 2 to 6 (the cells at distance 3 weigh 0).
  EXPECT_THAT(std::vector<int64_t>(map.index.begin() + map.begin[1],
                                   map.index.begin() + map.begin[2]),
              ElementsAre(2, 3, 4, 5, 6));
  EXPECT_THAT(std::vector<double>(map.weight.begin() + map.begin[1],
                                  map.weight.begin() + map.begin[2]),
              Pointwise(DoubleNear(1e-12),
                        std::vector<double>{1.0 / 9, 2.0 / 9, 3.0 / 9, 2.0 / 9,
                                            1.0 / 9}));
}

// <Apply(x), y> = <x, ApplyTransposed(y)> along a middle axis, for every
// mode with antialiasing and cropping.
TEST(InterpolationTest, TransposeIsTheAdjoint) {
  std::mt19937 engine(3);
  std::uniform_real_distribution<double> dist(-1, 1);
  const Dims dims = {2, 5, 3};
  for (Mode mode : {Mode::kNearest, Mode::kLinear, Mode::kCubic}) {
    for (int64_t out : {2, 9}) {
      Method method;
      method.mode = mode;
      method.antialias = mode != Mode::kNearest;
      method.coordinate_mode = CoordinateMode::kTfCropAndResize;
      AxisResize axis = Axis(5, out, static_cast<double>(out) / 5);
      axis.roi_start = 0.1;
      axis.roi_end = 1.3;
      const AxisMap map = MapOf(method, axis);
      std::vector<double> x(2 * 5 * 3);
      std::vector<double> y(2 * out * 3);
      for (double& v : x) v = dist(engine);
      for (double& v : y) v = dist(engine);
      const std::vector<double> ax = Apply(map, x, dims, 1);
      const std::vector<double> aty =
          ApplyTransposed(map, y, {2, out, 3}, 1, 5);
      ASSERT_EQ(ax.size(), y.size());
      ASSERT_EQ(aty.size(), x.size());
      EXPECT_NEAR(std::inner_product(ax.begin(), ax.end(), y.begin(), 0.0),
                  std::inner_product(x.begin(), x.end(), aty.begin(), 0.0),
                  1e-12);
    }
  }
}

}  // namespace
}  // namespace interpolation
}  // namespace scopeflow
