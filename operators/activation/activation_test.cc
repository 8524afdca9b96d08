#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/executor.h"
#include "framework/net_io.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::DoubleNear;
using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::IsNan;
using ::testing::Pointwise;

// `type` reading "X" from x and writing "Out" to y, with `attrs` (AttrDefs
// in text format) appended.
std::string UnaryOp(const std::string& type, const std::string& attrs = "") {
  return absl::StrCat("type: \"", type,
                      "\" inputs { slot: \"X\" vars: \"x\" } outputs { slot: "
                      "\"Out\" vars: \"y\" } ",
                      attrs);
}

// Runs `type` on x and returns y.
template <typename T>
absl::StatusOr<std::vector<T>> RunUnary(const std::string& type,
                                        const Tensor& x,
                                        const std::string& attrs = "") {
  auto out = RunOp(UnaryOp(type, attrs), {{"x", x}}, {"y"});
  if (!out.ok()) return out.status();
  EXPECT_EQ((*out)[0].dtype(), x.dtype());
  EXPECT_EQ((*out)[0].dims(), x.dims());
  return Values<T>((*out)[0]);
}

// Runs the ops of `op_texts` in one block that declares variable "x" with
// `dtype` and `shape` (empty: rank unknown), feeding `x` and fetching
// `fetch`. Unlike RunOp, inference at Prepare sees the declared shape, not
// the fed one.
absl::StatusOr<Tensor> RunNet(const std::vector<std::string>& op_texts,
                              DataType dtype, const std::vector<int64_t>& shape,
                              const Tensor& x, const std::string& fetch) {
  NetDef net;
  net.set_format_version(kNetFormatVersion);
  net.set_name("test");
  BlockDef* block = net.add_blocks();
  VarDef* var = block->add_vars();
  var->set_name("x");
  var->set_dtype(dtype);
  for (int64_t d : shape) var->add_shape(d);
  for (const std::string& text : op_texts) {
    if (!google::protobuf::TextFormat::ParseFromString(text,
                                                       block->add_ops())) {
      return absl::InvalidArgumentError(absl::StrCat("bad op: ", text));
    }
  }
  Executor executor;
  absl::StatusOr<PreparedNet> prepared = executor.Prepare(net, 0, CPUPlace());
  if (!prepared.ok()) return prepared.status();
  Scope scope;
  absl::StatusOr<std::vector<Tensor>> out =
      executor.Run(*prepared, scope, {Feed{"x", x}}, {fetch});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

// `n` values spread over [-scale, scale], not in order.
std::vector<float> Spread(int n, float scale) {
  std::vector<float> values(n);
  for (int i = 0; i < n; ++i) {
    values[i] = scale * std::sin(0.37f * static_cast<float>(i) + 0.1f);
  }
  return values;
}

// Softmax of `x` along its last axis of size n, in double.
std::vector<double> ReferenceSoftmax(const std::vector<float>& x, int n) {
  std::vector<double> out(x.size());
  for (size_t row = 0; row < x.size(); row += n) {
    double max = x[row];
    for (int i = 0; i < n; ++i) max = std::max<double>(max, x[row + i]);
    double sum = 0;
    for (int i = 0; i < n; ++i) sum += std::exp(x[row + i] - max);
    for (int i = 0; i < n; ++i) out[row + i] = std::exp(x[row + i] - max) / sum;
  }
  return out;
}

TEST(ReluTest, ClampsNegativesToZero) {
  auto y = RunUnary<float>(
      "relu", MakeTensor<float>({2, 3}, {-2, -0.5f, 0, 0.5f, 3, -1e30f}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(*y, ElementsAre(0, 0, 0, 0.5f, 3, 0));
  auto y64 =
      RunUnary<double>("relu", MakeTensor<double>({3}, {-1e-300, 2.5, 0}));
  ASSERT_TRUE(y64.ok()) << y64.status();
  EXPECT_THAT(*y64, ElementsAre(0, 2.5, 0));
}

TEST(ReluTest, LongInputAndNaN) {
  // 16-element blocks and a tail of 5.
  std::vector<float> x = Spread(37, 4);
  x[20] = std::numeric_limits<float>::quiet_NaN();
  auto y = RunUnary<float>("relu", MakeTensor<float>({37}, x));
  ASSERT_TRUE(y.ok()) << y.status();
  for (int i = 0; i < 37; ++i) {
    if (i == 20) {
      EXPECT_THAT((*y)[i], IsNan());
    } else {
      EXPECT_EQ((*y)[i], x[i] > 0 ? x[i] : 0) << i;
    }
  }
}

TEST(LeakyReluTest, DefaultAndGivenAlpha) {
  Tensor x = MakeTensor<float>({4}, {-2, -0.5f, 0, 3});
  auto y = RunUnary<float>("leaky_relu", x);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(*y, Pointwise(FloatNear(1e-7), {-0.04f, -0.01f, 0.0f, 3.0f}));
  auto y2 =
      RunUnary<float>("leaky_relu", x, R"pb(attrs { name: "alpha" f: 0.5 })pb");
  ASSERT_TRUE(y2.ok()) << y2.status();
  EXPECT_THAT(*y2, ElementsAre(-1, -0.25f, 0, 3));
  auto y64 = RunUnary<double>("leaky_relu", MakeTensor<double>({2}, {-100, 1}));
  ASSERT_TRUE(y64.ok()) << y64.status();
  // alpha is a float attribute: 0.02f, not 0.02, even for float64.
  EXPECT_THAT(*y64, Pointwise(DoubleNear(1e-12),
                              {-100 * static_cast<double>(0.02f), 1.0}));
}

TEST(EluTest, DefaultAndGivenAlpha) {
  Tensor x = MakeTensor<float>({4}, {-1, -0.5f, 0, 2});
  auto y = RunUnary<float>("elu", x);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(
      *y, Pointwise(FloatNear(1e-6), {-0.6321206f, -0.3934693f, 0.0f, 2.0f}));
  auto y2 = RunUnary<float>("elu", x, R"pb(attrs { name: "alpha" f: 2 })pb");
  ASSERT_TRUE(y2.ok()) << y2.status();
  EXPECT_THAT(
      *y2, Pointwise(FloatNear(1e-6), {-1.2642411f, -0.7869387f, 0.0f, 2.0f}));
  auto y64 = RunUnary<double>("elu", MakeTensor<double>({2}, {-1, -1000}));
  ASSERT_TRUE(y64.ok()) << y64.status();
  EXPECT_THAT(*y64, Pointwise(DoubleNear(1e-12), {-0.6321205588285577, -1.0}));
}

TEST(SigmoidTest, ValuesAndSaturation) {
  auto y = RunUnary<float>("sigmoid",
                           MakeTensor<float>({6}, {0, 1, -1, 4, 1000, -1000}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(*y, Pointwise(FloatNear(1e-6), {0.5f, 0.7310586f, 0.2689414f,
                                              0.9820138f, 1.0f, 0.0f}));
  auto y64 = RunUnary<double>("sigmoid", MakeTensor<double>({2}, {1, -800}));
  ASSERT_TRUE(y64.ok()) << y64.status();
  EXPECT_THAT(*y64, Pointwise(DoubleNear(1e-15), {0.7310585786300049, 0.0}));
}

TEST(TanhTest, Values) {
  auto y = RunUnary<float>("tanh", MakeTensor<float>({4}, {0, 0.5f, -2, 50}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(
      *y, Pointwise(FloatNear(1e-6), {0.0f, 0.4621172f, -0.9640276f, 1.0f}));
  auto y64 = RunUnary<double>("tanh", MakeTensor<double>({1}, {0.5}));
  ASSERT_TRUE(y64.ok()) << y64.status();
  EXPECT_THAT(*y64, Pointwise(DoubleNear(1e-15), {0.46211715726000974}));
}

TEST(GeluTest, ExactUsesErf) {
  Tensor x = MakeTensor<float>({5}, {1, -1, 2, -3, 0});
  auto y = RunUnary<float>("gelu", x);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(*y, Pointwise(FloatNear(1e-6), {0.8413447f, -0.1586553f,
                                              1.9544997f, -0.0040497f, 0.0f}));
  auto y64 = RunUnary<double>("gelu", MakeTensor<double>({2}, {1, -1}));
  ASSERT_TRUE(y64.ok()) << y64.status();
  EXPECT_THAT(*y64, Pointwise(DoubleNear(1e-12),
                              {0.8413447460685429, -0.15865525393145707}));
}

TEST(GeluTest, ApproximateUsesTanh) {
  const std::string approximate =
      R"pb(attrs { name: "approximate" b: true })pb";
  auto y = RunUnary<float>("gelu", MakeTensor<float>({5}, {1, -1, 2, -3, 0}),
                           approximate);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(*y, Pointwise(FloatNear(1e-6), {0.8411920f, -0.1588080f,
                                              1.9545977f, -0.0036374f, 0.0f}));
  auto y64 =
      RunUnary<double>("gelu", MakeTensor<double>({2}, {1, -1}), approximate);
  ASSERT_TRUE(y64.ok()) << y64.status();
  EXPECT_THAT(*y64, Pointwise(DoubleNear(1e-12),
                              {0.8411919906082768, -0.15880800939172324}));
}

TEST(ActivationTest, OtherDtypesNameOpAndVariable) {
  for (const char* type : {"relu", "leaky_relu", "elu", "sigmoid", "tanh",
                           "gelu", "softmax", "log_softmax"}) {
    absl::Status status =
        PrepareOp(UnaryOp(type), {{"x", MakeTensor<int32_t>({2}, {1, 2})}});
    EXPECT_THAT(status.message(),
                HasSubstr(absl::StrCat("op 0 (", type,
                                       "): input \"X\" (variable \"x\") has "
                                       "dtype int32: expected float32 or "
                                       "float64")));
  }
}

TEST(ActivationTest, WrongAttributeType) {
  absl::Status status =
      PrepareOp(UnaryOp("gelu", R"pb(attrs { name: "approximate" i: 1 })pb"),
                {{"x", MakeTensor<float>({1}, {1})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (gelu): attribute \"approximate\": expected "
                        "bool, got int"));
}

// Float softmax is within a few ulp (3e-7 near 1) of the exact values.
TEST(SoftmaxTest, LastAxis) {
  auto y = RunUnary<float>("softmax", MakeTensor<float>({3}, {1, 2, 3}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(*y,
              Pointwise(FloatNear(3e-7), {0.0900306f, 0.2447285f, 0.6652410f}));
  auto y64 = RunUnary<double>("softmax",
                              MakeTensor<double>({2, 3}, {1, 2, 3, 0, 0, 0}),
                              R"pb(attrs { name: "axis" i: 1 })pb");
  ASSERT_TRUE(y64.ok()) << y64.status();
  EXPECT_THAT(*y64, Pointwise(DoubleNear(1e-15),
                              {0.09003057317038046, 0.24472847105479764,
                               0.6652409557748218, 1.0 / 3, 1.0 / 3, 1.0 / 3}));
}

TEST(SoftmaxTest, LargeMagnitudesDoNotOverflow) {
  // A naive exp would give inf / inf = NaN for all of these.
  auto y = RunUnary<float>("softmax",
                           MakeTensor<float>({3, 3}, {1000, 1001, 1002,     //
                                                      -1002, -1001, -1000,  //
                                                      3e38f, 0, -3e38f}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(
      *y, Pointwise(FloatNear(3e-7), {0.0900306f, 0.2447285f, 0.6652410f,  //
                                      0.0900306f, 0.2447285f, 0.6652410f,  //
                                      1.0f, 0.0f, 0.0f}));
  auto y64 =
      RunUnary<double>("softmax", MakeTensor<double>({2}, {1e300, -1e300}));
  ASSERT_TRUE(y64.ok()) << y64.status();
  EXPECT_THAT(*y64, ElementsAre(1.0, 0.0));
}

TEST(SoftmaxTest, LongRowsMatchReference) {
  // Row lengths around the 16-element blocks; values spread over [-30, 30].
  for (int n : {1, 15, 16, 17, 100, 1000}) {
    std::vector<float> x = Spread(3 * n, 30);
    auto y = RunUnary<float>("softmax", MakeTensor<float>({3, n}, x));
    ASSERT_TRUE(y.ok()) << y.status();
    std::vector<double> expected = ReferenceSoftmax(x, n);
    for (int i = 0; i < 3 * n; ++i) {
      EXPECT_NEAR((*y)[i], expected[i], 1e-7 + 1e-6 * expected[i])
          << "n " << n << " element " << i;
    }
  }
}

TEST(SoftmaxTest, OtherAxes) {
  auto y =
      RunUnary<float>("softmax", MakeTensor<float>({2, 3}, {1, 2, 3, 4, 6, 8}),
                      R"pb(attrs { name: "axis" i: 0 })pb");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(
      *y, Pointwise(FloatNear(3e-7), {0.0474259f, 0.0179862f, 0.0066929f,  //
                                      0.9525741f, 0.9820138f, 0.9933071f}));
  // The middle axis of [2, 4, 37]: strided slices, 37 spanning blocks.
  const int outer = 2, size = 4, inner = 37;
  std::vector<float> x = Spread(outer * size * inner, 20);
  auto z =
      RunUnary<float>("softmax", MakeTensor<float>({outer, size, inner}, x),
                      R"pb(attrs { name: "axis" i: -2 })pb");
  ASSERT_TRUE(z.ok()) << z.status();
  for (int o = 0; o < outer; ++o) {
    for (int i = 0; i < inner; ++i) {
      std::vector<float> slice;
      for (int k = 0; k < size; ++k) {
        slice.push_back(x[(o * size + k) * inner + i]);
      }
      std::vector<double> expected = ReferenceSoftmax(slice, size);
      for (int k = 0; k < size; ++k) {
        EXPECT_NEAR((*z)[(o * size + k) * inner + i], expected[k], 1e-6);
      }
    }
  }
}

TEST(SoftmaxTest, NaNMakesItsRowNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto y = RunUnary<float>(
      "softmax", MakeTensor<float>({3, 3}, {1, nan, 3, nan, 1, 2, 1, 2, 3}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(std::vector<float>(y->begin(), y->begin() + 6), Each(IsNan()));
  EXPECT_THAT(std::vector<float>(y->begin() + 6, y->end()),
              Pointwise(FloatNear(3e-7), {0.0900306f, 0.2447285f, 0.6652410f}));
}

TEST(SoftmaxTest, EmptyInputs) {
  for (Dims dims : {Dims{0, 3}, Dims{3, 0}, Dims{2, 0, 3}}) {
    auto y = RunUnary<float>("softmax", MakeTensor<float>(dims, {}),
                             R"pb(attrs { name: "axis" i: 1 })pb");
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_TRUE(y->empty());
  }
}

TEST(LogSoftmaxTest, Values) {
  auto y = RunUnary<float>("log_softmax",
                           MakeTensor<float>({3, 3}, {1, 2, 3,           //
                                                      1000, 1001, 1002,  //
                                                      0, -1000, -3e38f}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(
      *y, Pointwise(FloatNear(1e-6), {-2.4076059f, -1.4076059f, -0.4076059f,  //
                                      -2.4076059f, -1.4076059f, -0.4076059f,  //
                                      0.0f, -1000.0f, -3e38f}));
  auto y64 =
      RunUnary<double>("log_softmax", MakeTensor<double>({2, 2}, {1, 2, 3, 4}),
                       R"pb(attrs { name: "axis" i: 0 })pb");
  ASSERT_TRUE(y64.ok()) << y64.status();
  const double a = -2.1269280110429727, b = -0.12692801104297263;
  EXPECT_THAT(*y64, Pointwise(DoubleNear(1e-14), {a, a, b, b}));
}

// Enough rows (or outer slices) that softmax spreads them over threads,
// where more than one is available: the last axis of [1500, 40], and the
// middle axis of [40, 30, 60] (strided slices), against the double
// reference; log_softmax against the reference's log.
TEST(SoftmaxTest, LargeInputsMatchReference) {
  const std::vector<float> rows = Spread(1500 * 40, 20);
  const std::vector<double> expected = ReferenceSoftmax(rows, 40);
  auto y = RunUnary<float>("softmax", MakeTensor<float>({1500, 40}, rows));
  auto log_y =
      RunUnary<float>("log_softmax", MakeTensor<float>({1500, 40}, rows));
  ASSERT_TRUE(y.ok() && log_y.ok());
  int64_t mismatches = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    mismatches += std::abs((*y)[i] - expected[i]) > 1e-7 + 1e-6 * expected[i];
    mismatches += std::abs((*log_y)[i] - std::log(expected[i])) > 1e-5;
  }
  EXPECT_EQ(mismatches, 0);
  const int outer = 40, size = 30, inner = 60;
  const std::vector<float> x = Spread(outer * size * inner, 20);
  auto z =
      RunUnary<float>("softmax", MakeTensor<float>({outer, size, inner}, x),
                      R"pb(attrs { name: "axis" i: 1 })pb");
  ASSERT_TRUE(z.ok()) << z.status();
  mismatches = 0;
  for (int o = 0; o < outer; ++o) {
    for (int i = 0; i < inner; ++i) {
      std::vector<float> slice;
      for (int k = 0; k < size; ++k) {
        slice.push_back(x[(o * size + k) * inner + i]);
      }
      const std::vector<double> want = ReferenceSoftmax(slice, size);
      for (int k = 0; k < size; ++k) {
        mismatches +=
            std::abs((*z)[(o * size + k) * inner + i] - want[k]) > 1e-6;
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(LogSoftmaxTest, MatchesLogOfSoftmax) {
  const int n = 50;
  std::vector<float> x = Spread(2 * 3 * n, 10);
  for (int axis : {0, 1, 2}) {
    const std::string attrs =
        absl::StrCat("attrs { name: \"axis\" i: ", axis, " }");
    auto p = RunUnary<float>("softmax", MakeTensor<float>({2, 3, n}, x), attrs);
    auto l =
        RunUnary<float>("log_softmax", MakeTensor<float>({2, 3, n}, x), attrs);
    ASSERT_TRUE(p.ok() && l.ok());
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_NEAR((*l)[i], std::log((*p)[i]), 1e-5) << "axis " << axis;
    }
  }
}

TEST(SoftmaxTest, AxisOutOfRangeNamesOpAndVariable) {
  Tensor x = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  for (const char* type : {"softmax", "log_softmax"}) {
    for (int axis : {2, -3}) {
      absl::Status status = PrepareOp(
          UnaryOp(type, absl::StrCat("attrs { name: \"axis\" i: ", axis, " }")),
          {{"x", x}});
      EXPECT_THAT(status.message(),
                  HasSubstr(absl::StrCat(
                      "op 0 (", type,
                      "): input \"X\" (variable \"x\", shape [2, 3]): "
                      "attribute \"axis\" = ",
                      axis, " is out of range for rank 2 (expected [-2, 2))")));
    }
  }
  // A feed of shape [] declares no shape (rank unknown at Prepare): the
  // run's inference rejects it.
  auto scalar =
      RunOp(UnaryOp("softmax"), {{"x", MakeTensor<float>({}, {1})}}, {"y"});
  EXPECT_THAT(scalar.status().message(),
              HasSubstr("variable \"x\", shape []): attribute \"axis\" = -1 "
                        "is out of range for rank 0"));
}

TEST(SoftmaxTest, UnknownDimensionsAtPrepare) {
  Tensor x = MakeTensor<float>({2, 3}, {1, 2, 3, 1, 2, 3});
  // Batch size unknown at Prepare.
  auto y = RunNet({UnaryOp("softmax")}, kFloat32, {-1, 3}, x, "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(Values<float>(*y),
              Pointwise(FloatNear(3e-7), {0.0900306f, 0.2447285f, 0.6652410f,
                                          0.0900306f, 0.2447285f, 0.6652410f}));
  // Rank unknown at Prepare: the axis is checked when the run knows it.
  auto z = RunNet({UnaryOp("softmax")}, kFloat32, {}, x, "y");
  ASSERT_TRUE(z.ok()) << z.status();
  auto bad = RunNet({UnaryOp("softmax", "attrs { name: \"axis\" i: 3 }")},
                    kFloat32, {}, x, "y");
  EXPECT_THAT(bad.status().message(),
              HasSubstr("op 0 (softmax): input \"X\" (variable \"x\", shape "
                        "[2, 3]): attribute \"axis\" = 3 is out of range"));
}

// Inputs of 3 x 40001 elements: several times the 16 Ki elements the
// kernels give each thread, and odd, so that the ranges split over threads
// begin and end inside the kernels' 16-element blocks.
constexpr int64_t kRows = 3;
constexpr int64_t kCols = 40001;

// kRows x kCols values of both signs over [-scale, scale], with zeros and
// NaNs scattered among them.
std::vector<float> LargeInput(float scale) {
  std::vector<float> x = Spread(kRows * kCols, scale);
  for (int64_t i : {int64_t{0}, kCols, int64_t{77777}, kRows * kCols - 1}) {
    x[i] = 0;
  }
  for (int64_t i : {int64_t{7}, int64_t{54321}, kRows * kCols - 2}) {
    x[i] = std::numeric_limits<float>::quiet_NaN();
  }
  return x;
}

TEST(ActivationTest, LargeInputsSplitOverThreadsMatchScalarLoops) {
  struct Case {
    std::string op;
    std::string attrs;
    double (*reference)(double);
    // The input's range: gelu's float rounding grows relative to its value
    // on its negative tail (about 3e-6 at -6), so its inputs stay within
    // [-2, 2], where it stays below 5e-7.
    float scale;
    // 0 where the kernel computes the reference's expression exactly.
    double rel_tol;
  };
  const std::vector<Case> cases = {
      {"relu", "", [](double v) { return std::max(v, 0.0); }, 6, 0},
      {"leaky_relu", R"pb(attrs { name: "alpha" f: 0.25 })pb",
       [](double v) { return v >= 0 ? v : 0.25 * v; }, 6, 0},
      {"elu", R"pb(attrs { name: "alpha" f: 1.5 })pb",
       [](double v) { return v > 0 ? v : 1.5 * (std::exp(v) - 1); }, 6, 1e-6},
      {"sigmoid", "", [](double v) { return 1 / (1 + std::exp(-v)); }, 6, 1e-6},
      {"tanh", "", [](double v) { return std::tanh(v); }, 6, 1e-6},
      {"gelu", "",
       [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }, 2,
       1e-6},
      {"gelu", R"pb(attrs { name: "approximate" b: true })pb",
       [](double v) {
         const double z =
             std::sqrt(2 / std::acos(-1.0)) * (v + 0.044715 * v * v * v);
         return 0.5 * v * (1 + std::tanh(z));
       },
       2, 1e-6},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op + " " + c.attrs);
    const std::vector<float> x = LargeInput(c.scale);
    auto y =
        RunUnary<float>(c.op, MakeTensor<float>({kRows, kCols}, x), c.attrs);
    ASSERT_TRUE(y.ok()) << y.status();
    std::vector<double> expected(x.size());
    for (size_t i = 0; i < x.size(); ++i) expected[i] = c.reference(x[i]);
    std::string first;
    EXPECT_EQ(CountMismatches(*y, expected, c.rel_tol, &first), 0) << first;
  }
}

}  // namespace
}  // namespace scopeflow
