#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
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

// The op `type` on X = x, Out = out, with `attrs` (AttrDef text).
std::string UnaryOp(const std::string& type, const std::string& attrs = "") {
  return absl::StrFormat(R"pb(type: "%s"
                              inputs { slot: "X" vars: "x" }
                              outputs { slot: "Out" vars: "out" } %s)pb",
                         type, attrs);
}

absl::StatusOr<Tensor> RunUnary(const std::string& type, const Tensor& x,
                                const std::string& attrs = "") {
  absl::StatusOr<std::vector<Tensor>> out =
      RunOp(UnaryOp(type, attrs), {{"x", x}}, {"out"});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

TEST(MathTest, Float32) {
  const Tensor x = MakeTensor<float>({2, 2}, {0, 1, 4, 0.5f});
  struct Case {
    std::string op;
    std::vector<float> expected;
  };
  const std::vector<Case> cases = {
      {"exp", {1, 2.7182818f, 54.598150f, 1.6487213f}},
      {"log",
       {-std::numeric_limits<float>::infinity(), 0, 1.3862944f, -0.6931472f}},
      {"sqrt", {0, 1, 2, 0.7071068f}},
      {"erf", {0, 0.8427008f, 1.0f, 0.5204999f}},
      {"reciprocal", {std::numeric_limits<float>::infinity(), 1, 0.25f, 2}},
      {"sin", {0, 0.8414710f, -0.7568025f, 0.4794255f}},
      {"cos", {1, 0.5403023f, -0.6536436f, 0.8775826f}},
      {"abs", {0, 1, 4, 0.5f}},
      {"neg", {0, -1, -4, -0.5f}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    absl::StatusOr<Tensor> out = RunUnary(c.op, x);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->dtype(), kFloat32);
    EXPECT_THAT(out->dims(), ElementsAre(2, 2));
    const std::vector<float> values = Values<float>(*out);
    for (size_t i = 0; i < values.size(); ++i) {
      if (std::isinf(c.expected[i])) {
        EXPECT_EQ(values[i], c.expected[i]) << "element " << i;
      } else {
        EXPECT_THAT(values[i], FloatNear(c.expected[i],
                                         1e-6f * std::fmax(1, c.expected[i])))
            << "element " << i;
      }
    }
  }
}

TEST(MathTest, Float64) {
  const Tensor x = MakeTensor<double>({3}, {-1, 0.25, 9});
  struct Case {
    std::string op;
    std::vector<double> expected;
  };
  const std::vector<Case> cases = {
      {"exp", {0.36787944117144233, 1.2840254166877414, 8103.083927575384}},
      {"sqrt", {std::nan(""), 0.5, 3}},
      {"erf", {-0.8427007929497149, 0.2763263901682369, 1.0}},
      {"reciprocal", {-1, 4, 1.0 / 9}},
      {"sin", {-0.8414709848078965, 0.24740395925452294, 0.4121184852417566}},
      {"cos", {0.5403023058681398, 0.9689124217106447, -0.9111302618846769}},
      {"abs", {1, 0.25, 9}},
      {"neg", {1, -0.25, -9}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    absl::StatusOr<Tensor> out = RunUnary(c.op, x);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->dtype(), kFloat64);
    const std::vector<double> values = Values<double>(*out);
    for (size_t i = 0; i < values.size(); ++i) {
      if (std::isnan(c.expected[i])) {
        EXPECT_TRUE(std::isnan(values[i])) << "element " << i;
      } else {
        EXPECT_THAT(values[i], DoubleNear(c.expected[i],
                                          1e-12 * std::fmax(1, c.expected[i])))
            << "element " << i;
      }
    }
  }
  auto log = RunUnary("log", MakeTensor<double>({2}, {1, std::exp(2.0)}));
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_THAT(Values<double>(*log),
              Pointwise(DoubleNear(1e-12), std::vector<double>{0, 2}));
}

TEST(MathTest, IntegerAbsAndNeg) {
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  auto abs = RunUnary("abs", MakeTensor<int32_t>({4}, {-3, 0, 5, kMin}));
  ASSERT_TRUE(abs.ok()) << abs.status();
  EXPECT_EQ(abs->dtype(), kInt32);
  // The lowest value has no positive counterpart: it wraps to itself.
  EXPECT_THAT(Values<int32_t>(*abs), ElementsAre(3, 0, 5, kMin));
  auto neg =
      RunUnary("neg", MakeTensor<int64_t>({3}, {-3, 0, int64_t{1} << 40}));
  ASSERT_TRUE(neg.ok()) << neg.status();
  EXPECT_EQ(neg->dtype(), kInt64);
  EXPECT_THAT(Values<int64_t>(*neg), ElementsAre(3, 0, -(int64_t{1} << 40)));
  auto abs64 = RunUnary("abs", MakeTensor<int64_t>({2}, {-7, 7}));
  ASSERT_TRUE(abs64.ok()) << abs64.status();
  EXPECT_THAT(Values<int64_t>(*abs64), ElementsAre(7, 7));
  auto neg32 = RunUnary("neg", MakeTensor<int32_t>({2}, {kMin, 1}));
  ASSERT_TRUE(neg32.ok()) << neg32.status();
  EXPECT_THAT(Values<int32_t>(*neg32), ElementsAre(kMin, -1));
}

TEST(MathTest, FloatOnlyOpsHaveNoIntegerKernel) {
  for (const std::string op :
       {"exp", "log", "sqrt", "erf", "reciprocal", "sin", "cos"}) {
    SCOPED_TRACE(op);
    absl::Status status =
        PrepareOp(UnaryOp(op), {{"x", MakeTensor<int32_t>({1}, {1})}});
    EXPECT_THAT(status.message(),
                HasSubstr(absl::StrFormat("op 0 (%s): no kernel for dtype "
                                          "int32",
                                          op)));
  }
}

TEST(MathTest, MissingInputSlot) {
  absl::Status status = PrepareOp(R"pb(type: "exp"
                                       outputs { slot: "Out" vars: "out" })pb",
                                  {});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (exp): missing required input \"X\""));
}

TEST(ScaleTest, BiasAfterScale) {
  auto out = RunUnary("scale", MakeTensor<float>({2, 2}, {1, 2, -3, 0.5f}),
                      R"pb(attrs { name: "scale" f: 2 }
                           attrs { name: "bias" f: 1 })pb");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(out->dims(), ElementsAre(2, 2));
  EXPECT_THAT(Values<float>(*out), ElementsAre(3, 5, -5, 2));
}

TEST(ScaleTest, BiasBeforeScale) {
  auto out = RunUnary("scale", MakeTensor<double>({3}, {1, 2, -3}),
                      R"pb(attrs { name: "scale" f: 2 }
                           attrs { name: "bias" f: 1 }
                           attrs { name: "bias_after_scale" b: false })pb");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->dtype(), kFloat64);
  EXPECT_THAT(Values<double>(*out), ElementsAre(4, 6, -4));
}

TEST(ScaleTest, DefaultsAreIdentity) {
  auto out = RunUnary("scale", MakeTensor<float>({2}, {1.5f, -2}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>(*out), ElementsAre(1.5f, -2));
}

TEST(ScaleTest, Integers) {
  auto out32 = RunUnary("scale", MakeTensor<int32_t>({3}, {1, -2, 10}),
                        R"pb(attrs { name: "scale" f: -3 }
                             attrs { name: "bias" f: 4 })pb");
  ASSERT_TRUE(out32.ok()) << out32.status();
  EXPECT_EQ(out32->dtype(), kInt32);
  EXPECT_THAT(Values<int32_t>(*out32), ElementsAre(1, 10, -26));
  auto out64 = RunUnary("scale", MakeTensor<int64_t>({2}, {1, -2}),
                        R"pb(attrs { name: "scale" f: 3 }
                             attrs { name: "bias" f: 4 }
                             attrs { name: "bias_after_scale" b: false })pb");
  ASSERT_TRUE(out64.ok()) << out64.status();
  EXPECT_EQ(out64->dtype(), kInt64);
  EXPECT_THAT(Values<int64_t>(*out64), ElementsAre(15, 6));
}

TEST(ScaleTest, IntegerInputNeedsWholeAttributes) {
  absl::Status fraction =
      PrepareOp(UnaryOp("scale", R"pb(attrs { name: "scale" f: 0.5 })pb"),
                {{"x", MakeTensor<int32_t>({2}, {1, 2})}});
  EXPECT_THAT(fraction.message(),
              HasSubstr("op 0 (scale): attribute \"scale\" = 0.5 must be a "
                        "whole number in the range of int32, the dtype of "
                        "input \"X\" (variable \"x\")"));
  absl::Status too_big =
      PrepareOp(UnaryOp("scale", R"pb(attrs { name: "bias" f: 1e10 })pb"),
                {{"x", MakeTensor<int32_t>({2}, {1, 2})}});
  EXPECT_THAT(too_big.message(),
              HasSubstr("op 0 (scale): attribute \"bias\" = 1e+10 must be a "
                        "whole number in the range of int32"));
  // int64 holds it.
  auto out = RunUnary("scale", MakeTensor<int64_t>({1}, {1}),
                      R"pb(attrs { name: "bias" f: 1e10 })pb");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>(*out), ElementsAre(10000000001));
}

TEST(ClipTest, Floats) {
  auto out =
      RunUnary("clip", MakeTensor<float>({2, 3}, {-5, -1, 0, 0.5f, 2, 7}),
               R"pb(attrs { name: "min" f: -1 }
                    attrs { name: "max" f: 2 })pb");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(out->dims(), ElementsAre(2, 3));
  EXPECT_THAT(Values<float>(*out), ElementsAre(-1, -1, 0, 0.5f, 2, 2));
  const double nan = std::nan("");
  auto out64 = RunUnary("clip", MakeTensor<double>({3}, {nan, -0.75, 3}),
                        R"pb(attrs { name: "min" f: -0.5 }
                             attrs { name: "max" f: 0.5 })pb");
  ASSERT_TRUE(out64.ok()) << out64.status();
  const std::vector<double> values = Values<double>(*out64);
  EXPECT_TRUE(std::isnan(values[0]));  // NaN stays NaN.
  EXPECT_EQ(values[1], -0.5);
  EXPECT_EQ(values[2], 0.5);
}

TEST(ClipTest, IntegersRoundBoundsInward) {
  auto out = RunUnary("clip", MakeTensor<int32_t>({5}, {-5, -1, 0, 2, 7}),
                      R"pb(attrs { name: "min" f: -1.5 }
                           attrs { name: "max" f: 2.5 })pb");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->dtype(), kInt32);
  EXPECT_THAT(Values<int32_t>(*out), ElementsAre(-1, -1, 0, 2, 2));
  // Bounds beyond the type's range saturate.
  auto out64 =
      RunUnary("clip", MakeTensor<int64_t>({3}, {-4, 0, int64_t{1} << 62}),
               R"pb(attrs { name: "min" f: -3 }
                    attrs { name: "max" f: 1e30 })pb");
  ASSERT_TRUE(out64.ok()) << out64.status();
  EXPECT_THAT(Values<int64_t>(*out64), ElementsAre(-3, 0, int64_t{1} << 62));
}

TEST(ClipTest, MinAboveMax) {
  absl::Status status =
      PrepareOp(UnaryOp("clip", R"pb(attrs { name: "min" f: 3 }
                                     attrs { name: "max" f: 2 })pb"),
                {{"x", MakeTensor<float>({1}, {1})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (clip): attribute \"min\" (3) must not exceed "
                        "\"max\" (2)"));
}

TEST(ClipTest, NoIntegerBetweenBounds) {
  absl::Status status =
      PrepareOp(UnaryOp("clip", R"pb(attrs { name: "min" f: 0.25 }
                                     attrs { name: "max" f: 0.75 })pb"),
                {{"x", MakeTensor<int64_t>({1}, {1})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (clip): attributes \"min\" (0.25) and \"max\" "
                        "(0.75) enclose no int64 value, the dtype of input "
                        "\"X\" (variable \"x\")"));
}

// A bound left out is no bound, as in ONNX's Clip.
TEST(ClipTest, BoundsAreOptional) {
  absl::Status status =
      PrepareOp(UnaryOp("clip", R"pb(attrs { name: "min" f: 0 })pb"),
                {{"x", MakeTensor<float>({1}, {1})}});
  EXPECT_TRUE(status.ok()) << status;
  absl::StatusOr<Tensor> out =
      RunUnary("clip", MakeTensor<float>({3}, {-2, 0.5f, 1e30f}),
               R"pb(attrs { name: "min" f: 0 })pb");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>(*out), ElementsAre(0, 0.5f, 1e30f));
}

// clip of x with inputs "Min" (variable lo) and/or "Max" (hi), then
// `attrs`.
std::string ClipWithInputs(bool min, bool max, const std::string& attrs = "") {
  return absl::StrFormat(
      R"pb(type: "clip"
           inputs { slot: "X" vars: "x" } %s %s
           outputs { slot: "Out" vars: "out" } %s)pb",
      min ? R"pb(inputs { slot: "Min" vars: "lo" })pb" : "",
      max ? R"pb(inputs { slot: "Max" vars: "hi" })pb" : "", attrs);
}

// Inputs "Min" and "Max" (one element of X's dtype) replace the
// attributes; each wins over its attribute.
TEST(ClipTest, BoundsFromInputs) {
  auto out = RunOp(ClipWithInputs(true, true),
                   {{"x", MakeTensor<float>({3}, {-2, 0.5f, 3})},
                    {"lo", MakeTensor<float>({}, {0})},
                    {"hi", MakeTensor<float>({1}, {1})}},
                   {"out"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(0, 0.5f, 1));
  out = RunOp(ClipWithInputs(true, false, R"pb(attrs { name: "min" f: 0.75 }
                                               attrs { name: "max" f: 4 })pb"),
              {{"x", MakeTensor<int32_t>({3}, {-5, 2, 9})},
               {"lo", MakeTensor<int32_t>({}, {-1})}},
              {"out"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int32_t>((*out)[0]), ElementsAre(-1, 2, 4));
  // An int64 bound float32 would round applies exactly.
  const int64_t big = (int64_t{1} << 60) + 1;
  out = RunOp(ClipWithInputs(false, true),
              {{"x", MakeTensor<int64_t>({2}, {big + 4, -7})},
               {"hi", MakeTensor<int64_t>({}, {big})}},
              {"out"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(big, -7));
}

TEST(ClipTest, BoundInputErrorsNameOpAndVariable) {
  const Tensor x = MakeTensor<float>({2}, {1, 2});
  EXPECT_THAT(PrepareOp(ClipWithInputs(true, false),
                        {{"x", x}, {"lo", MakeTensor<double>({1}, {0})}})
                  .message(),
              HasSubstr("op 0 (clip): input \"Min\" (variable \"lo\") is "
                        "float64 [1]: expected one float32 element (a "
                        "scalar)"));
  EXPECT_THAT(PrepareOp(ClipWithInputs(false, true),
                        {{"x", x}, {"hi", MakeTensor<float>({2}, {0, 1})}})
                  .message(),
              HasSubstr("op 0 (clip): input \"Max\" (variable \"hi\") is "
                        "float32 [2]: expected one float32 element (a "
                        "scalar)"));
  // The order of bounds known only at run time is checked then.
  auto out =
      RunOp(ClipWithInputs(true, false, R"pb(attrs { name: "max" f: 1 })pb"),
            {{"x", x}, {"lo", MakeTensor<float>({}, {3})}}, {"out"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (clip): the lower bound 3 (input \"Min\" "
                        "(variable \"lo\")) exceeds the upper bound 1 "
                        "(attribute \"max\"): expected min <= max"));
}

// Inputs of 3 x 40001 elements: several times the 16 Ki elements the
// kernels give each thread, and odd, so that the ranges split over threads
// are not all of one length.
constexpr int64_t kRows = 3;
constexpr int64_t kCols = 40001;

// kRows x kCols values of both signs over [-scale, scale], not in order,
// with zeros, NaNs and clip's bounds -1.5 and 2 scattered among them.
std::vector<float> LargeInput(float scale) {
  std::vector<float> x(kRows * kCols);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = scale * std::sin(0.37f * static_cast<float>(i) + 0.1f);
  }
  for (int64_t i : {int64_t{0}, int64_t{77777}, kRows * kCols - 1}) x[i] = 0;
  for (int64_t i : {int64_t{7}, int64_t{54321}, kRows * kCols - 2}) {
    x[i] = std::numeric_limits<float>::quiet_NaN();
  }
  x[12345] = -1.5f;
  x[98765] = 2;
  return x;
}

TEST(UnaryTest, LargeInputsSplitOverThreadsMatchScalarLoops) {
  const std::vector<float> x = LargeInput(6);
  const Tensor input = MakeTensor<float>({kRows, kCols}, x);
  struct Case {
    std::string op;
    std::string attrs;
    // In float where the kernel computes the same expression (rel_tol 0),
    // in double for the transcendental functions.
    double (*reference)(float);
    double rel_tol;
  };
  const std::vector<Case> cases = {
      {"exp", "", [](float v) { return std::exp(static_cast<double>(v)); },
       1e-6},
      {"erf", "", [](float v) { return std::erf(static_cast<double>(v)); },
       4e-7},
      {"abs", "", [](float v) { return std::fabs(static_cast<double>(v)); }, 0},
      {"neg", "", [](float v) { return -static_cast<double>(v); }, 0},
      {"scale",
       R"pb(attrs { name: "scale" f: 2.5 }
            attrs { name: "bias" f: -1.25 })pb",
       [](float v) -> double {
         const float scaled = 2.5f * v;
         return scaled + -1.25f;
       },
       0},
      {"scale",
       R"pb(attrs { name: "scale" f: 2.5 }
            attrs { name: "bias" f: -1.25 }
            attrs { name: "bias_after_scale" b: false })pb",
       [](float v) -> double {
         const float shifted = v + -1.25f;
         return 2.5f * shifted;
       },
       0},
      {"clip",
       R"pb(attrs { name: "min" f: -1.5 }
            attrs { name: "max" f: 2 })pb",
       [](float v) {
         return std::min(std::max(static_cast<double>(v), -1.5), 2.0);
       },
       0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op + " " + c.attrs);
    absl::StatusOr<Tensor> out = RunUnary(c.op, input, c.attrs);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT(out->dims(), ElementsAre(kRows, kCols));
    std::vector<double> expected(x.size());
    for (size_t i = 0; i < x.size(); ++i) expected[i] = c.reference(x[i]);
    std::string first;
    EXPECT_EQ(CountMismatches(Values<float>(*out), expected, c.rel_tol, &first),
              0)
        << first;
  }
}

}  // namespace
}  // namespace scopeflow
