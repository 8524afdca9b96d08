// Gradients of the activations: numeric checks in float64 for every op,
// axis and code path, hand-computed float32 values of the gradient ops, the
// float32 blocked loops against a double reference, and what the gradient
// ops read.
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
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

// The op `type` on X = x, Out = out, with `attrs` (AttrDef text).
std::string UnaryOp(const std::string& type, const std::string& attrs = "") {
  return absl::StrFormat(
      "type: \"%s\" inputs { slot: \"X\" vars: \"x\" } outputs { slot: "
      "\"Out\" vars: \"out\" } %s",
      type, attrs);
}

std::string AxisAttr(int axis) {
  return absl::StrFormat("attrs { name: \"axis\" i: %d }", axis);
}

// `n` values drawn uniformly from [lo, hi), negated at odd positions if
// `alternate`.
std::vector<double> RandomValues(int64_t n, double lo, double hi, uint32_t seed,
                                 bool alternate = false) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(lo, hi);
  std::vector<double> values(n);
  for (int64_t i = 0; i < n; ++i) {
    values[i] = uniform(rng) * (alternate && i % 2 == 1 ? -1 : 1);
  }
  return values;
}

Tensor Random(const Dims& dims, double lo, double hi, uint32_t seed,
              bool alternate = false) {
  return MakeTensor<double>(
      dims, RandomValues(NumElements(dims), lo, hi, seed, alternate));
}

struct Case {
  std::string op;
  std::string attrs;
  Tensor x;
};

TEST(ActivationGradTest, NumericCheckOfTheElementwiseOps) {
  const std::vector<Case> cases = {
      // Both signs, away from the kink at 0.
      {"relu", "", Random({2, 3}, 0.1, 2, 1, /*alternate=*/true)},
      // 40 elements: two blocks of the blocked loop and a tail.
      {"relu", "", Random({40}, 0.1, 2, 2, /*alternate=*/true)},
      {"leaky_relu", "", Random({2, 3}, 0.1, 2, 3, /*alternate=*/true)},
      {"leaky_relu", "attrs { name: \"alpha\" f: -0.3 }",
       Random({40}, 0.1, 2, 4, /*alternate=*/true)},
      {"elu", "", Random({2, 3}, 0.1, 2, 5, /*alternate=*/true)},
      {"elu", "attrs { name: \"alpha\" f: 0.5 }",
       Random({40}, 0.1, 4, 6, /*alternate=*/true)},
      {"sigmoid", "", Random({2, 3}, -4, 4, 7)},
      {"sigmoid", "", Random({40}, -4, 4, 8)},
      {"tanh", "", Random({2, 3}, -3, 3, 9)},
      {"tanh", "", Random({40}, -3, 3, 10)},
      {"gelu", "", Random({2, 3}, -3, 3, 11)},
      {"gelu", "", Random({40}, -4, 4, 12)},
      {"gelu", "attrs { name: \"approximate\" b: true }",
       Random({2, 3}, -3, 3, 13)},
      {"gelu", "attrs { name: \"approximate\" b: true }",
       Random({40}, -4, 4, 14)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op + " " + c.attrs + " " + c.x.DebugString());
    absl::Status status = CheckGradient(UnaryOp(c.op, c.attrs), {{"x", c.x}});
    EXPECT_TRUE(status.ok()) << status;
  }
}

TEST(ActivationGradTest, NumericCheckOfSoftmaxAlongEveryAxis) {
  struct AxisCase {
    Dims dims;
    int axis;
  };
  const std::vector<AxisCase> cases = {
      // Rows (inner 1), short and over two blocks plus a tail.
      {{2, 3, 4}, -1},
      {{2, 3, 4}, 2},
      {{2, 37}, 1},
      // Strided slices (inner > 1), with inner over a block too.
      {{2, 3, 4}, 0},
      {{2, 3, 4}, 1},
      {{2, 3, 4}, -3},
      {{2, 3, 17}, 1},
      {{5}, 0},
  };
  uint32_t seed = 20;
  for (const char* op : {"softmax", "log_softmax"}) {
    for (const AxisCase& c : cases) {
      SCOPED_TRACE(absl::StrFormat("%s axis %d of %s", op, c.axis,
                                   DimsToString(c.dims)));
      absl::Status status =
          CheckGradient(UnaryOp(op, AxisAttr(c.axis)),
                        {{"x", Random(c.dims, -2, 2, ++seed)}});
      EXPECT_TRUE(status.ok()) << status;
    }
  }
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

TEST(ActivationGradTest, Float32ValuesOfTheElementwiseGrads) {
  const Tensor g = MakeTensor<float>({3}, {2, -1, 0.5f});
  struct ValueCase {
    std::string op;
    std::string reads;
    std::string attrs;
    std::vector<float> v;
    std::vector<float> expected;
  };
  // Phi(1) + phi(1), the exact gelu's derivative at 1.
  const float gelu_at_1 = 0.8413447f + 0.2419707f;
  const std::vector<ValueCase> cases = {
      // g where Out > 0; 0 where relu gave 0.
      {"relu_grad", "Out", "", {0, 3, 0.25f}, {0, -1, 0.5f}},
      // g for x >= 0, alpha g below.
      {"leaky_relu_grad",
       "X",
       "attrs { name: \"alpha\" f: 0.25 }",
       {-2, 0, 1},
       {0.5f, -1, 0.5f}},
      // g for x > 0, g alpha exp(x) otherwise.
      {"elu_grad",
       "X",
       "attrs { name: \"alpha\" f: 2 }",
       {-1, 0, 3},
       {2 * 2 * std::exp(-1.0f), -2, 0.5f}},
      // g out (1 - out).
      {"sigmoid_grad", "Out", "", {0.5f, 0.25f, 1}, {0.5f, -0.1875f, 0}},
      // g (1 - out^2).
      {"tanh_grad", "Out", "", {0, 0.5f, -1}, {2, -0.75f, 0}},
      {"gelu_grad", "X", "", {0, 1, -8}, {1, -gelu_at_1, 0}},
      // The tanh approximation: 0.5 at 0; at 1,
      // 0.5 (1 + tanh z) + 0.5 (1 - tanh^2 z) sqrt(2 / pi) (1 + 0.134145)
      // with z = sqrt(2 / pi) 1.044715.
      {"gelu_grad",
       "X",
       "attrs { name: \"approximate\" b: true }",
       {0, 1, 8},
       {1, -1.0829640f, 0.5f}},
  };
  for (const ValueCase& c : cases) {
    SCOPED_TRACE(c.op + " " + c.attrs);
    absl::StatusOr<Tensor> dx =
        RunGrad(c.op, c.reads, MakeTensor<float>({3}, c.v), g, c.attrs);
    ASSERT_TRUE(dx.ok()) << dx.status();
    EXPECT_EQ(dx->dtype(), kFloat32);
    EXPECT_THAT(dx->dims(), ElementsAre(3));
    EXPECT_THAT(Values<float>(*dx), Pointwise(FloatNear(1e-6), c.expected));
  }
}

TEST(ActivationGradTest, Float32ValuesOfTheSoftmaxGrads) {
  // y * (g - sum(g y)): sum(g y) = 0.2 in row 0 and -0.5 in row 1.
  auto softmax =
      RunGrad("softmax_grad", "Out",
              MakeTensor<float>({2, 3}, {0.2f, 0.3f, 0.5f, 0.5f, 0.25f, 0.25f}),
              MakeTensor<float>({2, 3}, {1, 0, 0, -1, 0, 0}));
  ASSERT_TRUE(softmax.ok()) << softmax.status();
  EXPECT_THAT(Values<float>(*softmax),
              Pointwise(FloatNear(1e-7),
                        {0.16f, -0.06f, -0.1f, -0.25f, 0.125f, 0.125f}));
  // Along axis 0 of [2, 2]: columns {0.2, 0.8} and {0.5, 0.5}.
  auto columns = RunGrad("softmax_grad", "Out",
                         MakeTensor<float>({2, 2}, {0.2f, 0.5f, 0.8f, 0.5f}),
                         MakeTensor<float>({2, 2}, {1, 2, 0, 0}), AxisAttr(0));
  ASSERT_TRUE(columns.ok()) << columns.status();
  EXPECT_THAT(Values<float>(*columns),
              Pointwise(FloatNear(1e-7), {0.16f, 0.5f, -0.16f, -0.5f}));
  // g - exp(out) * sum(g): sum(g) = 6, exp(out) = {0.25, 0.25, 0.5}.
  auto log_softmax =
      RunGrad("log_softmax_grad", "Out",
              MakeTensor<float>(
                  {1, 3}, {std::log(0.25f), std::log(0.25f), std::log(0.5f)}),
              MakeTensor<float>({1, 3}, {1, 2, 3}));
  ASSERT_TRUE(log_softmax.ok()) << log_softmax.status();
  EXPECT_THAT(Values<float>(*log_softmax),
              Pointwise(FloatNear(1e-6), {-0.5f, 0.5f, 0.0f}));
}

// The float32 softmax gradients of [outer, size, inner] along axis 1 (the
// blocked float exp included) against the formulas in double.
TEST(ActivationGradTest, Float32SoftmaxGradsAgreeWithADoubleReference) {
  struct ShapeCase {
    int64_t outer, size, inner;
  };
  // The last two are large enough to be spread over threads, where more
  // than one is available.
  for (const ShapeCase& c :
       {ShapeCase{3, 37, 1}, ShapeCase{2, 5, 19}, ShapeCase{1, 100, 1},
        ShapeCase{2, 3, 33}, ShapeCase{1200, 30, 1}, ShapeCase{40, 30, 60}}) {
    SCOPED_TRACE(absl::StrFormat("[%d, %d, %d]", c.outer, c.size, c.inner));
    const int64_t n = c.outer * c.size * c.inner;
    const std::vector<double> x = RandomValues(n, -4, 4, 50);
    const std::vector<double> g = RandomValues(n, -1, 1, 51);
    // The softmax and log-softmax in double, and both gradients.
    std::vector<double> y(n), log_y(n), dx(n), log_dx(n);
    for (int64_t o = 0; o < c.outer; ++o) {
      for (int64_t i = 0; i < c.inner; ++i) {
        auto at = [&](int64_t k) { return (o * c.size + k) * c.inner + i; };
        double sum = 0;
        for (int64_t k = 0; k < c.size; ++k) sum += std::exp(x[at(k)]);
        double dot = 0;
        double g_sum = 0;
        for (int64_t k = 0; k < c.size; ++k) {
          y[at(k)] = std::exp(x[at(k)]) / sum;
          log_y[at(k)] = x[at(k)] - std::log(sum);
          dot += g[at(k)] * y[at(k)];
          g_sum += g[at(k)];
        }
        for (int64_t k = 0; k < c.size; ++k) {
          dx[at(k)] = y[at(k)] * (g[at(k)] - dot);
          log_dx[at(k)] = g[at(k)] - y[at(k)] * g_sum;
        }
      }
    }
    const Dims dims = {c.outer, c.size, c.inner};
    auto to_float = [&](const std::vector<double>& v) {
      return MakeTensor<float>(dims, std::vector<float>(v.begin(), v.end()));
    };
    auto softmax =
        RunGrad("softmax_grad", "Out", to_float(y), to_float(g), AxisAttr(1));
    ASSERT_TRUE(softmax.ok()) << softmax.status();
    EXPECT_THAT(
        Values<float>(*softmax),
        Pointwise(FloatNear(1e-6), std::vector<float>(dx.begin(), dx.end())));
    auto log_softmax = RunGrad("log_softmax_grad", "Out", to_float(log_y),
                               to_float(g), AxisAttr(1));
    ASSERT_TRUE(log_softmax.ok()) << log_softmax.status();
    EXPECT_THAT(Values<float>(*log_softmax),
                Pointwise(FloatNear(1e-5),
                          std::vector<float>(log_dx.begin(), log_dx.end())));
  }
}

// The gradient ops that AppendGradients makes for x -> `op` -> out.
std::vector<OpDef> GradientOps(const std::string& op_text) {
  NetDef net;
  const std::string text =
      "format_version: 1 name: \"net\" blocks { vars { name: \"x\" dtype: "
      "DATA_TYPE_FLOAT32 shape: [2, 3] } vars { name: \"seed\" dtype: "
      "DATA_TYPE_FLOAT32 shape: [2, 3] } ops { " +
      op_text + " } }";
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &net))
      << text;
  auto grads = AppendGradients(net, {"out"}, {"seed"}, {"x"});
  EXPECT_TRUE(grads.ok()) << grads.status();
  const auto& ops = net.blocks(0).ops();
  return std::vector<OpDef>(ops.begin() + 1, ops.end());
}

TEST(ActivationGradTest, GradientOpsReadOutOrXAndGetTheAttributes) {
  for (const char* op : {"relu", "sigmoid", "tanh"}) {
    SCOPED_TRACE(op);
    const std::vector<OpDef> ops = GradientOps(UnaryOp(op));
    ASSERT_EQ(ops.size(), 1u);
    EXPECT_EQ(ops[0].type(), std::string(op) + "_grad");
    EXPECT_THAT(Bindings(ops[0].inputs()),
                ElementsAre("Out: out", "Out@GRAD: seed"));
    EXPECT_THAT(Bindings(ops[0].outputs()), ElementsAre("X@GRAD: x@GRAD"));
  }
  for (const char* op : {"softmax", "log_softmax"}) {
    SCOPED_TRACE(op);
    const std::vector<OpDef> ops = GradientOps(UnaryOp(op, AxisAttr(0)));
    ASSERT_EQ(ops.size(), 1u);
    EXPECT_THAT(Bindings(ops[0].inputs()),
                ElementsAre("Out: out", "Out@GRAD: seed"));
    ASSERT_EQ(ops[0].attrs_size(), 1);
    EXPECT_EQ(ops[0].attrs(0).name(), "axis");
    EXPECT_EQ(ops[0].attrs(0).i(), 0);
  }
  for (const char* op : {"leaky_relu", "elu", "gelu"}) {
    SCOPED_TRACE(op);
    const std::vector<OpDef> ops = GradientOps(UnaryOp(op));
    ASSERT_EQ(ops.size(), 1u);
    EXPECT_THAT(Bindings(ops[0].inputs()),
                ElementsAre("X: x", "Out@GRAD: seed"));
  }
}

TEST(ActivationGradTest, AnUnboundXGradIsNotWritten) {
  // The gradient ops run with no X@GRAD bound (nobody wants it).
  for (const char* op : {"relu_grad", "softmax_grad", "log_softmax_grad"}) {
    SCOPED_TRACE(op);
    auto out = RunOp(absl::StrFormat("type: \"%s\" inputs { slot: \"Out\" "
                                     "vars: \"v\" } inputs { slot: "
                                     "\"Out@GRAD\" vars: \"g\" }",
                                     op),
                     {{"v", MakeTensor<float>({2}, {0.5f, 0.5f})},
                      {"g", MakeTensor<float>({2}, {1, 2})}},
                     {});
    EXPECT_TRUE(out.ok()) << out.status();
  }
}

TEST(ActivationGradTest, GradientOpInputsMustAgree) {
  auto shape = RunGrad("sigmoid_grad", "Out", MakeTensor<float>({3}, {1, 2, 3}),
                       MakeTensor<float>({2}, {1, 2}));
  ASSERT_FALSE(shape.ok());
  EXPECT_THAT(shape.status().message(),
              HasSubstr("op 0 (sigmoid_grad): inputs \"Out\" (variable \"v\", "
                        "shape [3]) and \"Out@GRAD\" (variable \"g\", shape "
                        "[2]) must have one shape"));
  auto dtype = RunGrad("gelu_grad", "X", MakeTensor<float>({2}, {1, 2}),
                       MakeTensor<double>({2}, {1, 2}));
  ASSERT_FALSE(dtype.ok());
  EXPECT_THAT(dtype.status().message(),
              HasSubstr("inputs \"X\" (variable \"v\", float32) and "
                        "\"Out@GRAD\" (variable \"g\", float64) must have one "
                        "dtype"));
  auto integer = RunGrad("relu_grad", "Out", MakeTensor<int32_t>({2}, {1, 2}),
                         MakeTensor<int32_t>({2}, {1, 2}));
  ASSERT_FALSE(integer.ok());
  EXPECT_THAT(integer.status().message(), HasSubstr("int32"));
  auto axis = RunGrad("softmax_grad", "Out", MakeTensor<float>({2}, {1, 2}),
                      MakeTensor<float>({2}, {1, 2}), AxisAttr(1));
  ASSERT_FALSE(axis.ok());
  EXPECT_THAT(axis.status().message(),
              HasSubstr("input \"Out\" (variable \"v\", shape [2])"));
}

// Inputs of 3 x 40001 elements, several times the 16 Ki elements the
// kernels give each thread, and odd, so that the ranges split over threads
// begin and end inside the kernels' 16-element blocks.
TEST(ActivationGradTest, LargeInputsSplitOverThreadsMatchScalarLoops) {
  const Dims dims = {3, 40001};
  const int64_t n = NumElements(dims);
  const std::vector<double> x64 = RandomValues(n, -6, 6, 60);
  const std::vector<double> g64 = RandomValues(n, -2, 2, 61);
  const std::vector<float> x(x64.begin(), x64.end());
  const std::vector<float> g(g64.begin(), g64.end());
  // The forward outputs the gradients read, as float32 inputs: relu's
  // (zero for about half the elements) and sigmoid's.
  std::vector<float> relu(n);
  std::vector<float> sigmoid(n);
  for (int64_t i = 0; i < n; ++i) {
    relu[i] = std::max(x[i], 0.0f);
    sigmoid[i] = static_cast<float>(1 / (1 + std::exp(-x64[i])));
  }
  struct Case {
    std::string op;
    std::string reads;
    std::string attrs;
    const std::vector<float>* v;
    double (*reference)(double v, double g);
    // 0 where the kernel computes the reference's expression exactly.
    double rel_tol;
  };
  const std::vector<Case> cases = {
      {"relu_grad", "Out", "", &relu,
       [](double out, double g) { return out > 0 ? g : 0.0; }, 0},
      {"leaky_relu_grad", "X", "attrs { name: \"alpha\" f: 0.25 }", &x,
       [](double x, double g) { return x < 0 ? 0.25 * g : g; }, 0},
      {"sigmoid_grad", "Out", "", &sigmoid,
       [](double out, double g) { return g * out * (1 - out); }, 1e-6},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op + " " + c.attrs);
    absl::StatusOr<Tensor> dx =
        RunGrad(c.op, c.reads, MakeTensor<float>(dims, *c.v),
                MakeTensor<float>(dims, g), c.attrs);
    ASSERT_TRUE(dx.ok()) << dx.status();
    std::vector<double> expected(n);
    for (int64_t i = 0; i < n; ++i) expected[i] = c.reference((*c.v)[i], g[i]);
    std::string first;
    EXPECT_EQ(CountMismatches(Values<float>(*dx), expected, c.rel_tol, &first),
              0)
        << first;
  }
}

}  // namespace
}  // namespace scopeflow
