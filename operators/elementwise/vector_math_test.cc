// vector_math.h against double-precision libm: a sweep over every 251st
// float bit pattern (so every exponent, both signs, denormals, and the
// ranges where results saturate, overflow or underflow) plus the special
// values, through loops built as the kernels build them (SF_WIDEST_VECTORS,
// so on this CPU's widest vectors).
#include "operators/elementwise/vector_math.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "platform/vector_clones.h"

namespace scopeflow {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// One loop per function, each cloned for the widest vectors.
#define SF_MAP_LOOP(name, call)                                         \
  SF_WIDEST_VECTORS void name(const float* in, float* out, int64_t n) { \
    for (int64_t i = 0; i < n; ++i) out[i] = call(in[i]);               \
  }
SF_MAP_LOOP(MapExp, vmath::Exp)
SF_MAP_LOOP(MapLog, vmath::Log)
SF_MAP_LOOP(MapLog1p, vmath::Log1p)
SF_MAP_LOOP(MapExpm1, vmath::Expm1)
SF_MAP_LOOP(MapSigmoid, vmath::Sigmoid)
SF_MAP_LOOP(MapTanh, vmath::Tanh)
SF_MAP_LOOP(MapErf, vmath::Erf)
SF_MAP_LOOP(MapNormalCdf, vmath::NormalCdf)
SF_MAP_LOOP(MapSoftplus, vmath::Softplus)
#undef SF_MAP_LOOP

using MapFn = void (*)(const float*, float*, int64_t);
using RefFn = double (*)(double);

// The float's unit in the last place at `ref` (of the float nearest it;
// the denormals' spacing below the normal range).
double Ulp(double ref) {
  const double magnitude = std::fabs(ref);
  if (magnitude < std::ldexp(1.0, -126)) return std::ldexp(1.0, -149);
  int exponent;
  std::frexp(std::min(magnitude, double{std::numeric_limits<float>::max()}),
             &exponent);
  return std::ldexp(1.0, exponent - 24);
}

std::vector<float> SweepInputs() {
  std::vector<float> inputs;
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 251) {
    const uint32_t b = static_cast<uint32_t>(bits);
    float x;
    std::memcpy(&x, &b, sizeof(x));
    inputs.push_back(x);
  }
  for (float x : {0.0f,
                  -0.0f,
                  kInf,
                  -kInf,
                  kNaN,
                  1e-45f,
                  -1e-45f,
                  1.17549435e-38f,
                  -1.17549435e-38f,
                  88.7228317f,
                  88.7228394f,
                  89.0f,
                  -87.3365479f,
                  -103.972f,
                  -104.0f,
                  0.625f,
                  -0.625f,
                  1.0f,
                  -1.0f,
                  3.92f,
                  9.0f,
                  -9.0f,
                  1e30f,
                  -1e30f}) {
    inputs.push_back(x);
  }
  return inputs;
}

// The largest error of `map` in ulps over the sweep, where ref (double)
// is finite; where it is NaN or rounds to +-inf, `map` must give the same.
double MaxUlpError(MapFn map, RefFn ref) {
  static const std::vector<float>* const inputs =
      new std::vector<float>(SweepInputs());
  std::vector<float> out(inputs->size());
  map(inputs->data(), out.data(), static_cast<int64_t>(inputs->size()));
  double worst = 0;
  int mismatches = 0;
  for (size_t i = 0; i < inputs->size(); ++i) {
    const float x = (*inputs)[i];
    const double expected = ref(x);
    const float expected_float = static_cast<float>(expected);
    if (std::isnan(expected) || std::isinf(expected_float)) {
      const bool same =
          std::isnan(expected) ? std::isnan(out[i]) : out[i] == expected_float;
      if (!same && ++mismatches <= 5) {
        ADD_FAILURE() << "at x = " << x << " got " << out[i] << ", expected "
                      << expected;
      }
      continue;
    }
    const double error = std::fabs(out[i] - expected) / Ulp(expected);
    if (!(error <= worst)) {
      worst = error;
      if (std::isnan(error)) return error;
    }
  }
  return worst;
}

double RefSigmoid(double x) {
  const double e = std::exp(-std::fabs(x));
  return (x >= 0 ? 1 : e) / (1 + e);
}

double RefNormalCdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

double RefSoftplus(double x) {
  return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x)));
}

TEST(VectorMathTest, ExpWithinOneUlp) {
  EXPECT_LE(MaxUlpError(MapExp, [](double x) { return std::exp(x); }), 1.0);
}

TEST(VectorMathTest, LogWithinOneUlp) {
  EXPECT_LE(MaxUlpError(MapLog, [](double x) { return std::log(x); }), 1.0);
}

TEST(VectorMathTest, Log1pWithinThreeUlps) {
  EXPECT_LE(MaxUlpError(MapLog1p, [](double x) { return std::log1p(x); }), 3.0);
}

TEST(VectorMathTest, Expm1WithinThreeUlps) {
  EXPECT_LE(MaxUlpError(MapExpm1, [](double x) { return std::expm1(x); }), 3.0);
}

TEST(VectorMathTest, SigmoidWithinThreeUlps) {
  EXPECT_LE(MaxUlpError(MapSigmoid, RefSigmoid), 3.0);
}

TEST(VectorMathTest, TanhWithinTwoUlps) {
  EXPECT_LE(MaxUlpError(MapTanh, [](double x) { return std::tanh(x); }), 2.0);
}

TEST(VectorMathTest, ErfWithinThreeUlps) {
  EXPECT_LE(MaxUlpError(MapErf, [](double x) { return std::erf(x); }), 3.0);
}

TEST(VectorMathTest, NormalCdfWithinFiveUlps) {
  EXPECT_LE(MaxUlpError(MapNormalCdf, RefNormalCdf), 5.0);
}

TEST(VectorMathTest, SoftplusWithinThreeUlps) {
  EXPECT_LE(MaxUlpError(MapSoftplus, RefSoftplus), 3.0);
}

// The ends of the ranges exactly, as libm gives them.
TEST(VectorMathTest, SpecialValues) {
  EXPECT_EQ(vmath::Exp(-kInf), 0.0f);
  EXPECT_EQ(vmath::Exp(kInf), kInf);
  EXPECT_EQ(vmath::Exp(89.0f), kInf);
  EXPECT_EQ(vmath::Exp(0.0f), 1.0f);
  EXPECT_EQ(vmath::Exp(-103.0f), std::exp(-103.0f));  // A denormal.
  EXPECT_TRUE(std::isnan(vmath::Exp(kNaN)));
  EXPECT_EQ(vmath::Log(0.0f), -kInf);
  EXPECT_EQ(vmath::Log(-0.0f), -kInf);
  EXPECT_TRUE(std::isnan(vmath::Log(-1.0f)));
  EXPECT_TRUE(std::isnan(vmath::Log(-kInf)));
  EXPECT_EQ(vmath::Log(kInf), kInf);
  EXPECT_EQ(vmath::Log(1.0f), 0.0f);
  EXPECT_EQ(vmath::Log(1e-45f), std::log(1e-45f));  // The least denormal.
  EXPECT_EQ(vmath::Sigmoid(kInf), 1.0f);
  EXPECT_EQ(vmath::Sigmoid(-kInf), 0.0f);
  EXPECT_EQ(vmath::Sigmoid(0.0f), 0.5f);
  EXPECT_GT(vmath::Sigmoid(-100.0f), 0.0f);  // e^-100, a denormal.
  EXPECT_EQ(vmath::Tanh(kInf), 1.0f);
  EXPECT_EQ(vmath::Tanh(-kInf), -1.0f);
  EXPECT_TRUE(std::signbit(vmath::Tanh(-0.0f)));
  EXPECT_EQ(vmath::Tanh(1e-40f), 1e-40f);
  EXPECT_EQ(vmath::Erf(kInf), 1.0f);
  EXPECT_EQ(vmath::Erf(-kInf), -1.0f);
  EXPECT_TRUE(std::signbit(vmath::Erf(-0.0f)));
  EXPECT_EQ(vmath::NormalCdf(-kInf), 0.0f);
  EXPECT_EQ(vmath::NormalCdf(kInf), 1.0f);
  EXPECT_EQ(vmath::Softplus(kInf), kInf);
  EXPECT_EQ(vmath::Softplus(-kInf), 0.0f);
  EXPECT_EQ(vmath::Softplus(1e30f), 1e30f);
  EXPECT_EQ(vmath::Expm1(-kInf), -1.0f);
  EXPECT_EQ(vmath::Expm1(kInf), kInf);
  EXPECT_EQ(vmath::Expm1(1e-30f), 1e-30f);
  EXPECT_EQ(vmath::Log1p(-1.0f), -kInf);
  EXPECT_EQ(vmath::Log1p(kInf), kInf);
  for (float x : {kNaN, -kNaN}) {
    EXPECT_TRUE(std::isnan(vmath::Log1p(x)));
    EXPECT_TRUE(std::isnan(vmath::Expm1(x)));
    EXPECT_TRUE(std::isnan(vmath::Sigmoid(x)));
    EXPECT_TRUE(std::isnan(vmath::Tanh(x)));
    EXPECT_TRUE(std::isnan(vmath::Erf(x)));
    EXPECT_TRUE(std::isnan(vmath::NormalCdf(x)));
    EXPECT_TRUE(std::isnan(vmath::Softplus(x)));
  }
}

}  // namespace
}  // namespace scopeflow
