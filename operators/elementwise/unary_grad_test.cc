// Gradients of the one-input ops: numeric checks in float64, hand-computed
// float32 values of the gradient ops, and the ops the scale and neg
// gradient makers emit.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/backward.h"
#include "framework/executor.h"
#include "framework/grad_check.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatEq;
using ::testing::HasSubstr;
using ::testing::Pointwise;

// The op `type` on X = x, Out = out, with `attrs` (AttrDef text).
std::string UnaryOp(const std::string& type, const std::string& attrs = "") {
  return absl::StrFormat(
      "type: \"%s\" inputs { slot: \"X\" vars: \"x\" } outputs { slot: "
      "\"Out\" vars: \"out\" } %s",
      type, attrs);
}

// A float64 tensor of `dims` with values drawn uniformly from [lo, hi),
// negated at odd positions if `alternate`.
Tensor Random(const Dims& dims, double lo, double hi, uint32_t seed,
              bool alternate = false) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(lo, hi);
  std::vector<double> values(NumElements(dims));
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = uniform(rng) * (alternate && i % 2 == 1 ? -1 : 1);
  }
  return MakeTensor<double>(dims, values);
}

struct Case {
  std::string op;
  std::string attrs;
  Tensor x;
};

TEST(UnaryGradTest, NumericCheck) {
  const std::vector<Case> cases = {
      {"exp", "", Random({2, 3}, -2, 2, 1)},
      {"log", "", Random({2, 3}, 0.2, 3, 2)},
      {"sqrt", "", Random({2, 3}, 0.2, 3, 3)},
      {"erf", "", Random({2, 3}, -2, 2, 4)},
      {"reciprocal", "", Random({2, 3}, 0.2, 3, 13, /*alternate=*/true)},
      {"sin", "", Random({2, 3}, -3, 3, 5)},
      {"cos", "", Random({2, 3}, -3, 3, 6)},
      // Both signs, away from the kink at 0.
      {"abs", "", Random({2, 3}, 0.1, 2, 7, /*alternate=*/true)},
      {"neg", "", Random({2, 3}, -2, 2, 8)},
      {"scale",
       "attrs { name: \"scale\" f: 2.5 } attrs { name: \"bias\" f: 1 }",
       Random({2, 3}, -2, 2, 9)},
      {"scale",
       "attrs { name: \"scale\" f: -0.5 } attrs { name: \"bias\" f: 3 } attrs "
       "{ name: \"bias_after_scale\" b: false }",
       Random({4}, -2, 2, 10)},
      // Inside, below and above [-0.5, 0.75], away from the bounds.
      {"clip",
       "attrs { name: \"min\" f: -0.5 } attrs { name: \"max\" f: 0.75 }",
       MakeTensor<double>({2, 3}, {-1.2, -0.3, 0.1, 0.5, 0.9, 2.0})},
      {"cast", "attrs { name: \"out_dtype\" i: 2 }", Random({3}, -2, 2, 11)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op + " " + c.attrs);
    absl::Status status = CheckGradient(UnaryOp(c.op, c.attrs), {{"x", c.x}});
    EXPECT_TRUE(status.ok()) << status;
  }
}

TEST(UnaryGradTest, NumericCheckThroughAFloat32Cast) {
  // The float32 output rounds, so the differences need a larger step and
  // tolerance.
  GradCheckOptions options;
  options.delta = 1e-3;
  options.rtol = 1e-3;
  options.atol = 1e-4;
  absl::Status status =
      CheckGradient(UnaryOp("cast", "attrs { name: \"out_dtype\" i: 1 }"),
                    {{"x", Random({2, 2}, -2, 2, 12)}}, options);
  EXPECT_TRUE(status.ok()) << status;
}

// Runs gradient op `type` reading `reads` ("X" or "Out") = v and
// Out@GRAD = g; returns X@GRAD.
absl::StatusOr<Tensor> RunGrad(const std::string& type,
                               const std::string& reads, const Tensor& v,
                               const Tensor& g, const std::string& attrs = "") {
  auto out = RunOp(
      absl::StrFormat(
          "type: \"%s\" inputs { slot: \"%s\" vars: \"v\" } inputs { slot: "
          "\"Out@GRAD\" vars: \"g\" } outputs { slot: \"X@GRAD\" vars: "
          "\"dx\" } %s",
          type, reads, attrs),
      {{"v", v}, {"g", g}}, {"dx"});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

TEST(UnaryGradTest, Float32Values) {
  const Tensor g = MakeTensor<float>({3}, {2, -1, 0.5f});
  struct ValueCase {
    std::string op;
    std::string reads;
    std::vector<float> v;
    std::vector<float> expected;
  };
  const std::vector<ValueCase> cases = {
      // g * out.
      {"exp_grad", "Out", {1, 2, 4}, {2, -2, 2}},
      // g / x.
      {"log_grad", "X", {1, 2, 0.25f}, {2, -0.5f, 2}},
      // g / (2 out).
      {"sqrt_grad", "Out", {1, 0.5f, 2}, {1, -1, 0.125f}},
      // g * 2 / sqrt(pi) * exp(-x^2).
      {"erf_grad",
       "X",
       {0, 1, -2},
       {2 * 1.1283792f, -1.1283792f * std::exp(-1.0f),
        0.5f * 1.1283792f * std::exp(-4.0f)}},
      // -g out^2.
      {"reciprocal_grad", "Out", {1, -2, 4}, {-2, 4, -8}},
      {"sin_grad", "X", {0, 3.14159265f, 1}, {2, 1, 0.5f * std::cos(1.0f)}},
      {"cos_grad", "X", {0, 1.57079633f, -1}, {0, 1, 0.5f * std::sin(1.0f)}},
      // The sign of x; 0 at 0.
      {"abs_grad", "X", {-3, 0, 0.25f}, {-2, 0, 0.5f}},
  };
  for (const ValueCase& c : cases) {
    SCOPED_TRACE(c.op);
    absl::StatusOr<Tensor> dx =
        RunGrad(c.op, c.reads, MakeTensor<float>({3}, c.v), g);
    ASSERT_TRUE(dx.ok()) << dx.status();
    EXPECT_EQ(dx->dtype(), kFloat32);
    EXPECT_THAT(dx->dims(), ElementsAre(3));
    EXPECT_THAT(Values<float>(*dx), Pointwise(FloatEq(), c.expected));
  }
}

TEST(UnaryGradTest, ClipPassesTheGradientInsideAndAtTheBounds) {
  auto dx = RunGrad(
      "clip_grad", "X", MakeTensor<float>({6}, {-2, -1, 0, 1, 1.5f, NAN}),
      MakeTensor<float>({6}, {1, 2, 3, 4, 5, 6}),
      "attrs { name: \"min\" f: -1 } attrs { name: \"max\" f: 1 }");
  ASSERT_TRUE(dx.ok()) << dx.status();
  // NaN passes through clip unchanged, and so does its gradient.
  EXPECT_THAT(Values<float>(*dx), ElementsAre(0, 2, 3, 4, 0, 6));
}

TEST(UnaryGradTest, CastGradConvertsBackToTheInputDtype) {
  auto out = RunOp(
      "type: \"cast_grad\" inputs { slot: \"X\" vars: \"x\" } inputs { slot: "
      "\"Out@GRAD\" vars: \"g\" } outputs { slot: \"X@GRAD\" vars: \"dx\" } "
      "attrs { name: \"out_dtype\" i: 1 }",
      {{"x", MakeTensor<double>({3}, {7, 8, 9})},
       {"g", MakeTensor<float>({3}, {0.5f, -2, 3})}},
      {"dx"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), kFloat64);
  EXPECT_THAT(Values<double>((*out)[0]), ElementsAre(0.5, -2, 3));
}

TEST(UnaryGradTest, GradientOpInputsMustAgree) {
  auto shape = RunGrad("exp_grad", "Out", MakeTensor<float>({3}, {1, 2, 3}),
                       MakeTensor<float>({2}, {1, 2}));
  ASSERT_FALSE(shape.ok());
  EXPECT_THAT(shape.status().message(),
              HasSubstr("op 0 (exp_grad): inputs \"Out\" (variable \"v\", "
                        "shape [3]) and \"Out@GRAD\" (variable \"g\", shape "
                        "[2]) must have one shape"));
  auto cast = RunOp(
      "type: \"cast_grad\" inputs { slot: \"X\" vars: \"x\" } inputs { slot: "
      "\"Out@GRAD\" vars: \"g\" } outputs { slot: \"X@GRAD\" vars: \"dx\" } "
      "attrs { name: \"out_dtype\" i: 2 }",
      {{"x", MakeTensor<double>({1}, {7})},
       {"g", MakeTensor<float>({1}, {0.5f})}},
      {"dx"});
  ASSERT_FALSE(cast.ok());
  EXPECT_THAT(cast.status().message(),
              HasSubstr("op 0 (cast_grad): input \"Out@GRAD\" (variable "
                        "\"g\") has dtype float32: expected float64, the "
                        "attribute \"out_dtype\" of the cast"));
}

// The net x -> `op` -> out, differentiated with respect to x given the
// gradient `seed` of out; returns its ops after the forward one.
std::vector<OpDef> GradientOps(const std::string& op_text, NetDef& net) {
  const std::string text =
      "format_version: 1 name: \"net\" blocks { vars { name: \"x\" dtype: "
      "DATA_TYPE_FLOAT32 shape: 3 } vars { name: \"seed\" dtype: "
      "DATA_TYPE_FLOAT32 shape: 3 } ops { " +
      op_text + " } }";
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &net))
      << text;
  auto grads = AppendGradients(net, {"out"}, {"seed"}, {"x"});
  EXPECT_TRUE(grads.ok()) << grads.status();
  const auto& ops = net.blocks(0).ops();
  return std::vector<OpDef>(ops.begin() + 1, ops.end());
}

absl::StatusOr<std::vector<float>> RunGradientNet(const NetDef& net) {
  Executor executor;
  auto prepared = executor.Prepare(net, 0, CPUPlace());
  if (!prepared.ok()) return prepared.status();
  Scope scope;
  auto out = executor.Run(*prepared, scope,
                          {{"x", MakeTensor<float>({3}, {1, 2, 3})},
                           {"seed", MakeTensor<float>({3}, {1, -2, 4})}},
                          {"x@GRAD"});
  if (!out.ok()) return out.status();
  return Values<float>((*out)[0]);
}

TEST(UnaryGradMakerTest, ScaleGradIsAScaleWithoutBias) {
  NetDef net;
  const std::vector<OpDef> ops = GradientOps(
      UnaryOp("scale",
              "attrs { name: \"scale\" f: 3 } attrs { name: \"bias\" f: 2 } "
              "attrs { name: \"bias_after_scale\" b: false }"),
      net);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].type(), "scale");
  ASSERT_EQ(ops[0].attrs_size(), 1);
  EXPECT_EQ(ops[0].attrs(0).name(), "scale");
  EXPECT_EQ(ops[0].attrs(0).f(), 3);
  ASSERT_EQ(ops[0].inputs_size(), 1);
  EXPECT_EQ(ops[0].inputs(0).vars(0), "seed");
  auto dx = RunGradientNet(net);
  ASSERT_TRUE(dx.ok()) << dx.status();
  EXPECT_THAT(*dx, ElementsAre(3, -6, 12));
}

TEST(UnaryGradMakerTest, ScaleGradWithDefaultScaleIsTheIdentity) {
  NetDef net;
  const std::vector<OpDef> ops =
      GradientOps(UnaryOp("scale", "attrs { name: \"bias\" f: 2 }"), net);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].attrs_size(), 0);
  auto dx = RunGradientNet(net);
  ASSERT_TRUE(dx.ok()) << dx.status();
  EXPECT_THAT(*dx, ElementsAre(1, -2, 4));
}

TEST(UnaryGradMakerTest, NegGradIsANeg) {
  NetDef net;
  const std::vector<OpDef> ops = GradientOps(UnaryOp("neg"), net);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].type(), "neg");
  auto dx = RunGradientNet(net);
  ASSERT_TRUE(dx.ok()) << dx.status();
  EXPECT_THAT(*dx, ElementsAre(-1, 2, -4));
}

// clip_grad reads the bounds clip read from its inputs, which get no
// gradient themselves.
TEST(UnaryGradTest, ClipWithBoundInputs) {
  GradCheckOptions options;
  options.wrt = {"x"};
  absl::Status status = CheckGradient(
      R"pb(type: "clip"
           inputs { slot: "X" vars: "x" }
           inputs { slot: "Min" vars: "lo" }
           inputs { slot: "Max" vars: "hi" }
           outputs { slot: "Out" vars: "out" })pb",
      {{"x", MakeTensor<double>({2, 3}, {-1.2, -0.3, 0.1, 0.5, 0.9, 2.0})},
       {"lo", MakeTensor<double>({}, {-0.5})},
       {"hi", MakeTensor<double>({1}, {0.75})}},
      options);
  EXPECT_TRUE(status.ok()) << status;
  // By hand: the gradient passes where x lies within the fed bounds.
  absl::StatusOr<std::vector<Tensor>> dx =
      RunOp(R"pb(type: "clip_grad"
                 inputs { slot: "X" vars: "x" }
                 inputs { slot: "Min" vars: "lo" }
                 inputs { slot: "Max" vars: "hi" }
                 inputs { slot: "Out@GRAD" vars: "g" }
                 outputs { slot: "X@GRAD" vars: "dx" })pb",
            {{"x", MakeTensor<float>({4}, {-1, 0, 1, 2})},
             {"lo", MakeTensor<float>({}, {0})},
             {"hi", MakeTensor<float>({}, {1})},
             {"g", MakeTensor<float>({4}, {1, 2, 3, 4})}},
            {"dx"});
  ASSERT_TRUE(dx.ok()) << dx.status();
  EXPECT_THAT(Values<float>((*dx)[0]), ElementsAre(0, 2, 3, 0));
  // Asked for the gradient of a bound: it has none.
  NetDef net;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(format_version: 1
           name: "net"
           blocks {
             vars { name: "x" dtype: DATA_TYPE_FLOAT32 shape: 3 }
             vars { name: "lo" dtype: DATA_TYPE_FLOAT32 shape: 1 }
             ops {
               type: "clip"
               inputs { slot: "X" vars: "x" }
               inputs { slot: "Min" vars: "lo" }
               outputs { slot: "Out" vars: "out" }
             }
           })pb",
      &net));
  auto grads = AppendGradients(net, {"out"}, {}, {"lo"});
  EXPECT_THAT(grads.status().message(),
              HasSubstr("differentiate: no target depends on variable \"lo\" "
                        "(out) through differentiable ops"));
}

// Inputs of 3 x 40001 elements, several times the 16 Ki elements the
// kernels give each thread, and odd, so that the ranges split over threads
// are not all of one length.
TEST(UnaryGradTest, LargeInputsSplitOverThreadsMatchScalarLoops) {
  const Dims dims = {3, 40001};
  const int64_t n = NumElements(dims);
  std::mt19937 rng(70);
  std::uniform_real_distribution<float> uniform_x(-4, 4);
  std::uniform_real_distribution<float> uniform_g(-2, 2);
  std::vector<float> x(n);
  std::vector<float> g(n);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = uniform_x(rng);
    g[i] = uniform_g(rng);
  }
  // Zeros (abs's kink), clip's bounds -1.5 and 2 and NaNs scattered among
  // them.
  for (int64_t i : {int64_t{0}, int64_t{77777}, n - 1}) x[i] = 0;
  for (int64_t i : {int64_t{3}, int64_t{12345}}) x[i] = -1.5f;
  for (int64_t i : {int64_t{4}, int64_t{98765}}) x[i] = 2;
  for (int64_t i : {int64_t{5}, int64_t{54321}, n - 2}) x[i] = NAN;
  std::vector<float> exp_out(n);
  for (int64_t i = 0; i < n; ++i) exp_out[i] = std::exp(x[i]);
  struct Case {
    std::string op;
    std::string reads;
    std::string attrs;
    const std::vector<float>* v;
    float (*reference)(float v, float g);
  };
  const std::vector<Case> cases = {
      {"exp_grad", "Out", "", &exp_out,
       [](float out, float g) { return g * out; }},
      {"abs_grad", "X", "", &x,
       // sign(x) g: 0 at 0, NaN at NaN.
       [](float x, float g) {
         return x == 0 || std::isnan(x) ? x : std::copysign(1.0f, x) * g;
       }},
      {"clip_grad", "X",
       "attrs { name: \"min\" f: -1.5 } attrs { name: \"max\" f: 2 }", &x,
       [](float x, float g) {
         return std::isnan(x) || (-1.5f <= x && x <= 2) ? g : 0.0f;
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op + " " + c.attrs);
    absl::StatusOr<Tensor> dx =
        RunGrad(c.op, c.reads, MakeTensor<float>(dims, *c.v),
                MakeTensor<float>(dims, g), c.attrs);
    ASSERT_TRUE(dx.ok()) << dx.status();
    std::vector<float> expected(n);
    for (int64_t i = 0; i < n; ++i) expected[i] = c.reference((*c.v)[i], g[i]);
    std::string first;
    EXPECT_EQ(
        CountMismatches(Values<float>(*dx),
                        std::vector<double>(expected.begin(), expected.end()),
                        0, &first),
        0)
        << first;
  }
}

}  // namespace
}  // namespace scopeflow
