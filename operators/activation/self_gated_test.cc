// softplus, hard_sigmoid, hard_swish, silu, mish and their gradients:
// hand-computed values, the ends of the float range, large float32 inputs
// (the vectorized kernels over threads) against double references, numeric
// gradient checks in float64, and errors.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/grad_check.h"
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

constexpr float kInf = std::numeric_limits<float>::infinity();

std::string UnaryOp(const std::string& type, const std::string& attrs = "") {
  return absl::StrFormat(
      "type: \"%s\" inputs { slot: \"X\" vars: \"x\" } outputs { slot: "
      "\"Out\" vars: \"out\" } %s",
      type, attrs);
}

template <typename T>
absl::StatusOr<std::vector<T>> RunOn(const std::string& type,
                                     const std::vector<T>& x,
                                     const std::string& attrs = "") {
  auto out = RunOp(UnaryOp(type, attrs),
                   {{"x", MakeTensor<T>({static_cast<int64_t>(x.size())}, x)}},
                   {"out"});
  if (!out.ok()) return out.status();
  return Values<T>((*out)[0]);
}

absl::StatusOr<std::vector<float>> RunGrad(const std::string& type,
                                           const std::vector<float>& x,
                                           const std::vector<float>& g,
                                           const std::string& attrs = "") {
  const Dims dims = {static_cast<int64_t>(x.size())};
  auto out = RunOp(
      absl::StrFormat(
          "type: \"%s\" inputs { slot: \"X\" vars: \"x\" } inputs { slot: "
          "\"Out@GRAD\" vars: \"g\" } outputs { slot: \"X@GRAD\" vars: "
          "\"dx\" } %s",
          type, attrs),
      {{"x", MakeTensor<float>(dims, x)}, {"g", MakeTensor<float>(dims, g)}},
      {"dx"});
  if (!out.ok()) return out.status();
  return Values<float>((*out)[0]);
}

const char kHardSigmoidAttrs[] =
    "attrs { name: \"alpha\" f: 0.25 } attrs { name: \"beta\" f: 0.4 }";

// Values worked out by hand (and checked against PyTorch's definitions).
TEST(SelfGatedTest, HandValues) {
  auto softplus = RunOn<float>("softplus", {0, 1, -1, 30, -30});
  ASSERT_TRUE(softplus.ok()) << softplus.status();
  // log 2, log(1 + e), log(1 + 1/e), 30 + e^-30, e^-30.
  EXPECT_THAT(*softplus,
              Pointwise(FloatNear(1e-6), {0.6931472f, 1.3132616f, 0.3132617f,
                                          30.0f, 9.357623e-14f}));
  auto hard_sigmoid = RunOn<float>("hard_sigmoid", {-3, 0, 1, 2, 10});
  ASSERT_TRUE(hard_sigmoid.ok()) << hard_sigmoid.status();
  // ONNX's defaults: 0.2 x + 0.5 clamped to [0, 1].
  EXPECT_THAT(*hard_sigmoid,
              Pointwise(FloatNear(1e-7), {0.0f, 0.5f, 0.7f, 0.9f, 1.0f}));
  auto given = RunOn<float>("hard_sigmoid", {-2, 0, 1, 3}, kHardSigmoidAttrs);
  ASSERT_TRUE(given.ok()) << given.status();
  EXPECT_THAT(*given, Pointwise(FloatNear(1e-7), {0.0f, 0.4f, 0.65f, 1.0f}));
  auto hard_swish = RunOn<float>("hard_swish", {-4, -3, -1, 0, 1.5f, 3, 5});
  ASSERT_TRUE(hard_swish.ok()) << hard_swish.status();
  // x (x + 3) / 6 between -3 and 3.
  EXPECT_THAT(*hard_swish,
              Pointwise(FloatNear(1e-7),
                        {0.0f, 0.0f, -1.0f / 3, 0.0f, 1.125f, 3.0f, 5.0f}));
  auto silu = RunOn<float>("silu", {0, 1, -1, 20, -20});
  ASSERT_TRUE(silu.ok()) << silu.status();
  // x / (1 + e^-x).
  EXPECT_THAT(*silu, Pointwise(FloatNear(1e-6), {0.0f, 0.7310586f, -0.2689414f,
                                                 20.0f, -4.1223073e-08f}));
  auto mish = RunOn<float>("mish", {0, 1, -1, 25, -20});
  ASSERT_TRUE(mish.ok()) << mish.status();
  // x tanh(log(1 + e^x)).
  EXPECT_THAT(*mish, Pointwise(FloatNear(1e-6), {0.0f, 0.8650984f, -0.3034015f,
                                                 25.0f, -4.1223073e-08f}));
  auto mish64 = RunOn<double>("mish", {1, -1});
  ASSERT_TRUE(mish64.ok()) << mish64.status();
  EXPECT_THAT(*mish64, Pointwise(DoubleNear(1e-15),
                                 {0.8650983882673103, -0.30340146137410895}));
}

// +-inf and NaN, and tiny results that keep their digits.
TEST(SelfGatedTest, EndsOfTheRange) {
  const std::vector<float> x = {kInf, -kInf,
                                std::numeric_limits<float>::quiet_NaN()};
  auto softplus = RunOn<float>("softplus", x);
  ASSERT_TRUE(softplus.ok()) << softplus.status();
  EXPECT_EQ((*softplus)[0], kInf);
  EXPECT_EQ((*softplus)[1], 0.0f);
  EXPECT_TRUE(std::isnan((*softplus)[2]));
  for (const char* op : {"silu", "mish", "hard_swish"}) {
    SCOPED_TRACE(op);
    auto y = RunOn<float>(op, x);
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ((*y)[0], kInf);
    EXPECT_TRUE(std::isnan((*y)[2]));
  }
  auto hard_sigmoid = RunOn<float>("hard_sigmoid", x);
  ASSERT_TRUE(hard_sigmoid.ok()) << hard_sigmoid.status();
  EXPECT_THAT(
      std::vector<float>(hard_sigmoid->begin(), hard_sigmoid->begin() + 2),
      ElementsAre(1.0f, 0.0f));
  EXPECT_TRUE(std::isnan((*hard_sigmoid)[2]));
  // e^-100 is a float32 denormal: -100 e^-100 and log1p(e^-100) keep it.
  auto silu = RunOn<float>("silu", {-100});
  ASSERT_TRUE(silu.ok()) << silu.status();
  // Sigmoid's denormal e^-100 holds 5 bits; times 100, its rounding.
  EXPECT_NEAR((*silu)[0], -100 * std::exp(-100.0), 100 * 0.7e-45);
  EXPECT_LT((*silu)[0], 0.0f);
  auto tiny = RunOn<float>("softplus", {-100});
  ASSERT_TRUE(tiny.ok()) << tiny.status();
  EXPECT_NEAR((*tiny)[0], std::exp(-100.0), 1e-45);
  EXPECT_GT((*tiny)[0], 0.0f);
}

// References in double, for the large-input tests.
double RefSigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double RefSoftplus(double x) {
  return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x)));
}
double RefMish(double x) { return x * std::tanh(RefSoftplus(x)); }

struct LargeCase {
  std::string op;
  double (*forward)(double);
  double (*derivative)(double);
};

// 3 x 40001 float32 elements over [-30, 30]: several threads' ranges,
// split inside the vector blocks, through saturation on both sides.
TEST(SelfGatedTest, LargeFloat32InputsMatchDoubleReferences) {
  const std::vector<LargeCase> cases = {
      {"softplus", RefSoftplus, RefSigmoid},
      {"silu", [](double x) { return x * RefSigmoid(x); },
       [](double x) {
         const double s = RefSigmoid(x);
         return s * (1 + x * (1 - s));
       }},
      {"mish", RefMish,
       [](double x) {
         const double t = std::tanh(RefSoftplus(x));
         return t + x * (1 - t * t) * RefSigmoid(x);
       }},
      {"hard_swish",
       [](double x) { return x * std::clamp(x + 3, 0.0, 6.0) / 6; },
       [](double x) { return x < -3 ? 0 : (x > 3 ? 1 : x / 3 + 0.5); }},
      // In float, as the kernel: 0.2 x + 0.5 cancels near x = -2.5.
      {"hard_sigmoid",
       [](double x) -> double {
         return std::clamp(0.2f * static_cast<float>(x) + 0.5f, 0.0f, 1.0f);
       },
       [](double x) { return std::fabs(x) < 2.5 ? 0.2 : 0.0; }},
  };
  const Dims dims = {3, 40001};
  const int64_t n = NumElements(dims);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-30, 30);
  std::vector<float> x(n);
  for (float& v : x) v = uniform(rng);
  const std::vector<float> g(n, 1.0f);
  for (const LargeCase& c : cases) {
    SCOPED_TRACE(c.op);
    auto out =
        RunOp(UnaryOp(c.op), {{"x", MakeTensor<float>(dims, x)}}, {"out"});
    ASSERT_TRUE(out.ok()) << out.status();
    std::vector<double> expected(n);
    for (int64_t i = 0; i < n; ++i) expected[i] = c.forward(x[i]);
    std::string first;
    // A few ulps, with the tails' tiny values included.
    EXPECT_EQ(CountMismatches(Values<float>((*out)[0]), expected, 6e-7, &first),
              0)
        << first;
    // The derivatives cross 0 (silu's and mish's near -1.2): an absolute
    // part in the tolerance.
    auto dx = RunGrad(c.op + "_grad", x, g);
    ASSERT_TRUE(dx.ok()) << dx.status();
    int64_t mismatches = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double d = c.derivative(x[i]);
      if (!(std::fabs((*dx)[i] - d) <= 1e-6 * (std::fabs(d) + 1))) {
        if (++mismatches == 1) {
          ADD_FAILURE() << "at x = " << x[i] << ": " << (*dx)[i]
                        << ", expected " << d;
        }
      }
    }
    EXPECT_EQ(mismatches, 0);
  }
}

TEST(SelfGatedTest, Float32GradientValues) {
  const std::vector<float> g = {2, -1, 0.5f};
  struct Case {
    std::string op;
    std::string attrs;
    std::vector<float> x;
    std::vector<float> expected;
  };
  const std::vector<Case> cases = {
      // g sigmoid(x).
      {"softplus_grad", "", {0, 1, -40}, {1, -0.7310586f, 2.1242e-18f}},
      // alpha g inside (0, 1), 0 outside.
      {"hard_sigmoid_grad", kHardSigmoidAttrs, {0, -2, 3}, {0.5f, 0, 0}},
      // 0 below -3, g (x / 3 + 1 / 2) between, g above 3.
      {"hard_swish_grad", "", {-4, 1.5f, 4}, {0, -1, 0.5f}},
      // s (1 + x (1 - s)): 0.5 at 0.
      {"silu_grad", "", {0, 1, 30}, {1, -0.9276705f, 0.5f}},
      // tanh(log 2) = 0.6 at 0; 1 far out.
      {"mish_grad", "", {0, 1, 30}, {1.2f, -1.0490362f, 0.5f}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    auto dx = RunGrad(c.op, c.x, g, c.attrs);
    ASSERT_TRUE(dx.ok()) << dx.status();
    EXPECT_THAT(*dx, Pointwise(FloatNear(1e-6), c.expected));
  }
}

TEST(SelfGatedTest, NumericGradientChecks) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> uniform(-5, 5);
  std::vector<double> values(40);
  for (double& v : values) v = uniform(rng);
  // Keep the hard ops' inputs off their kinks (hard_sigmoid's at -2.5 and
  // 2.5, hard_swish's at -3 and 3).
  for (double& v : values) {
    for (double kink : {-3.0, -2.5, 2.5, 3.0}) {
      if (std::fabs(v - kink) < 0.01) v += 0.05;
    }
  }
  const Tensor x = MakeTensor<double>({5, 8}, values);
  for (const char* op :
       {"softplus", "hard_sigmoid", "hard_swish", "silu", "mish"}) {
    SCOPED_TRACE(op);
    absl::Status status = CheckGradient(UnaryOp(op), {{"x", x}});
    EXPECT_TRUE(status.ok()) << status;
  }
  absl::Status given =
      CheckGradient(UnaryOp("hard_sigmoid", kHardSigmoidAttrs), {{"x", x}});
  EXPECT_TRUE(given.ok()) << given;
}

TEST(SelfGatedTest, IntegerInputsNameOpAndVariable) {
  for (const char* op :
       {"softplus", "hard_sigmoid", "hard_swish", "silu", "mish"}) {
    absl::Status status =
        PrepareOp(UnaryOp(op), {{"x", MakeTensor<int32_t>({2}, {1, 2})}});
    EXPECT_THAT(status.message(),
                HasSubstr(absl::StrFormat(
                    "op 0 (%s): input \"X\" (variable \"x\") has dtype int32: "
                    "expected float32 or float64",
                    op)));
  }
}

}  // namespace
}  // namespace scopeflow
