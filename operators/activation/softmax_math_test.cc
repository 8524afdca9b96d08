#include "operators/activation/softmax_math.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace softmax_math {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::Pointwise;

TEST(ExpOfClampedTest, RelativeErrorBelow1e7) {
  double worst = 0;
  for (float x = -87.3f; x <= 0; x += 0.00093f) {
    const double expected = std::exp(static_cast<double>(x));
    worst = std::max(worst, std::abs(ExpOfClamped(x) - expected) / expected);
  }
  EXPECT_LT(worst, 1e-7);
  EXPECT_EQ(ExpOfClamped(0.0f), 1.0f);
  EXPECT_EQ(ExpOfClamped(-0.0f), 1.0f);
  // Also right above 0, though softmax never asks.
  EXPECT_NEAR(ExpOfClamped(10.0f), std::exp(10.0), 2e-7 * std::exp(10.0));
}

TEST(ExpOfClampedTest, ClampedArgumentsGiveZeroAndNaNStaysNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(ExpOfClamped(ClampExpArg(-88.0f)), 0.0f);
  EXPECT_EQ(ExpOfClamped(ClampExpArg(-1000.0f)), 0.0f);
  EXPECT_EQ(ExpOfClamped(ClampExpArg(-inf)), 0.0f);
  EXPECT_TRUE(std::isnan(ExpOfClamped(ClampExpArg(nan))));
  // Double takes std::exp, unclamped.
  EXPECT_EQ(ExpOfClamped(ClampExpArg(-1000.0)), 0.0);
  EXPECT_EQ(ExpOfClamped(ClampExpArg(-700.0)), std::exp(-700.0));
}

TEST(SoftmaxMathTest, MaxOverBlocksAndTail) {
  std::vector<float> x(41);
  for (int i = 0; i < 41; ++i) x[i] = static_cast<float>((i * 17) % 41);
  EXPECT_EQ(Max(x.data(), 41), 40.0f);
  EXPECT_EQ(Max(x.data(), 1), 0.0f);
  x[40] = 100;  // in the tail
  EXPECT_EQ(Max(x.data(), 41), 100.0f);
  const std::vector<double> y = {-3, -1, -2};
  EXPECT_EQ(Max(y.data(), 3), -1.0);
}

TEST(SoftmaxMathTest, ExpShiftedStoresAndSums) {
  std::vector<float> x = {0, -1, -2};
  std::vector<float> y(3);
  const float sum = ExpShifted(x.data(), 0.0f, y.data(), 3);
  EXPECT_THAT(y, Pointwise(FloatNear(1e-7), {1.0f, 0.3678794f, 0.1353353f}));
  EXPECT_NEAR(sum, 1.5032147f, 1e-6);
  EXPECT_NEAR(SumExpShifted(x.data(), 0.0f, 3), 1.5032147f, 1e-6);
}

TEST(SoftmaxMathTest, RowsInPlace) {
  std::vector<double> x = {1, 2, 3, 5, 5, 5};
  SoftmaxRows(x.data(), x.data(), 2, 3);
  EXPECT_THAT(x, Pointwise(DoubleNear(1e-15),
                           {0.09003057317038046, 0.24472847105479764,
                            0.6652409557748218, 1.0 / 3, 1.0 / 3, 1.0 / 3}));
  std::vector<float> z = {1, 2, 3};
  LogSoftmaxRows(z.data(), z.data(), 1, 3);
  EXPECT_THAT(
      z, Pointwise(FloatNear(1e-6), {-2.4076059f, -1.4076059f, -0.4076059f}));
  std::vector<float> one = {-5};
  SoftmaxRows(one.data(), one.data(), 1, 1);
  EXPECT_THAT(one, ElementsAre(1.0f));
}

TEST(SoftmaxMathTest, SumAndDotOverBlocksAndTail) {
  std::vector<float> x(41);
  std::vector<float> y(41);
  for (int i = 0; i < 41; ++i) {
    x[i] = static_cast<float>(i);
    y[i] = static_cast<float>(i % 3 - 1);
  }
  // Whole numbers, so every order of the additions is exact.
  EXPECT_EQ(Sum(x.data(), 41), 820.0f);
  EXPECT_EQ(Sum(x.data(), 5), 10.0f);
  float dot = 0;
  for (int i = 0; i < 41; ++i) dot += x[i] * y[i];
  EXPECT_EQ(Dot(x.data(), y.data(), 41), dot);
  EXPECT_EQ(Dot(x.data(), y.data(), 3), 2.0f);
}

TEST(SoftmaxMathTest, GradRowsInPlace) {
  // Softmax rows {0.2, 0.3, 0.5} and {1}; the gradient is written over g.
  const std::vector<double> y = {0.2, 0.3, 0.5, 1};
  std::vector<double> g = {1, 0, 0, 5};
  SoftmaxGradRows(y.data(), g.data(), g.data(), 1, 3);
  SoftmaxGradRows(y.data() + 3, g.data() + 3, g.data() + 3, 1, 1);
  EXPECT_THAT(g, Pointwise(DoubleNear(1e-15), {0.16, -0.06, -0.1, 0.0}));
  const std::vector<float> log_y = {std::log(0.25f), std::log(0.25f),
                                    std::log(0.5f)};
  std::vector<float> h = {1, 2, 3};
  LogSoftmaxGradRows(log_y.data(), h.data(), h.data(), 1, 3);
  EXPECT_THAT(h, Pointwise(FloatNear(1e-6), {-0.5f, 0.5f, 0.0f}));
}

}  // namespace
}  // namespace softmax_math
}  // namespace scopeflow
