// CUDA kernels of the elementwise ops against their CPU kernels: binary
// arithmetic, comparisons and where with broadcasting, their gradients
// (reduced over the broadcast dimensions), the one-input ops and cast.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "framework/cuda_test_util.h"
#include "framework/float16.h"
#include "framework/op_test_util.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

// Past the 65535 blocks of 256 threads of one grid: threads loop.
constexpr int64_t kLarge = 70000 * 256 + 3;

std::string Binary(const std::string& type) {
  return "type: \"" + type +
         "\" inputs { slot: \"X\" vars: \"x\" } inputs { slot: \"Y\" vars: "
         "\"y\" } outputs { slot: \"Out\" vars: \"out\" }";
}

// The gradient op of a binary op, with the outputs `fetches` names (dx,
// dy) bound.
std::string BinaryGrad(const std::string& type,
                       const std::vector<std::string>& fetches) {
  std::string text = "type: \"" + type +
                     "\" inputs { slot: \"X\" vars: \"x\" } inputs { slot: "
                     "\"Y\" vars: \"y\" } inputs { slot: \"Out@GRAD\" vars: "
                     "\"g\" }";
  for (const std::string& fetch : fetches) {
    text += " outputs { slot: \"" + std::string(fetch == "dx" ? "X" : "Y") +
            "@GRAD\" vars: \"" + fetch + "\" }";
  }
  return text;
}

std::string Where() {
  return "type: \"where\" inputs { slot: \"Condition\" vars: \"c\" } inputs "
         "{ slot: \"X\" vars: \"x\" } inputs { slot: \"Y\" vars: \"y\" } "
         "outputs { slot: \"Out\" vars: \"out\" }";
}

std::string WhereGrad(const std::vector<std::string>& fetches) {
  std::string text =
      "type: \"where_grad\" inputs { slot: \"Condition\" vars: \"c\" } "
      "inputs { slot: \"X\" vars: \"x\" } inputs { slot: \"Y\" vars: \"y\" } "
      "inputs { slot: \"Out@GRAD\" vars: \"g\" }";
  for (const std::string& fetch : fetches) {
    text += " outputs { slot: \"" + std::string(fetch == "dx" ? "X" : "Y") +
            "@GRAD\" vars: \"" + fetch + "\" }";
  }
  return text;
}

std::string Unary(const std::string& type, const std::string& attrs = "") {
  return "type: \"" + type +
         "\" inputs { slot: \"X\" vars: \"x\" } outputs { slot: \"Out\" "
         "vars: \"out\" } " +
         attrs;
}

std::string UnaryGrad(const std::string& type, const std::string& reads,
                      const std::string& extra = "") {
  return "type: \"" + type + "\" inputs { slot: \"" + reads +
         "\" vars: \"v\" } inputs { slot: \"Out@GRAD\" vars: \"g\" } "
         "outputs { slot: \"X@GRAD\" vars: \"dx\" } " +
         extra;
}

std::string Cast(DataType to) {
  return absl::StrFormat(
      "type: \"cast\" inputs { slot: \"X\" vars: \"x\" } outputs { slot: "
      "\"Out\" vars: \"out\" } attrs { name: \"out_dtype\" i: %d }",
      static_cast<int>(to));
}

std::string Describe(const Dims& a, const Dims& b) {
  return DimsToString(a) + " with " + DimsToString(b);
}

// The CUDA kernel fails as the CPU kernel does: same code and message.
::testing::AssertionResult SameErrorOnCuda(
    const std::string& op_text, const std::vector<Feed>& feeds,
    const std::vector<std::string>& fetches) {
  absl::StatusOr<DeviceType> device = KernelDeviceOnCuda(op_text, feeds);
  if (!device.ok()) {
    return ::testing::AssertionFailure()
           << "preparing on cuda:0: " << device.status();
  }
  if (*device != DeviceType::kCUDA) {
    return ::testing::AssertionFailure() << "no CUDA kernel for " << op_text;
  }
  absl::StatusOr<std::vector<Tensor>> cpu =
      RunOpOnPlace(CPUPlace(), op_text, feeds, fetches);
  absl::StatusOr<std::vector<Tensor>> gpu =
      RunOpOnPlace(CUDAPlace(0), op_text, feeds, fetches);
  if (cpu.ok() || gpu.ok()) {
    return ::testing::AssertionFailure()
           << "expected both to fail; cpu: " << cpu.status()
           << ", cuda: " << gpu.status();
  }
  if (cpu.status() != gpu.status()) {
    return ::testing::AssertionFailure()
           << "cpu: " << cpu.status() << "\ncuda: " << gpu.status();
  }
  return ::testing::AssertionSuccess();
}

// Values rounded to whole numbers, so that ties and equal elements occur.
Tensor Rounded(Tensor tensor) {
  for (int64_t i = 0; i < tensor.numel(); ++i) {
    if (tensor.dtype() == kFloat32) {
      float& v = tensor.data<float>()[i];
      v = std::round(v);
    } else if (tensor.dtype() == kFloat64) {
      double& v = tensor.data<double>()[i];
      v = std::round(v);
    }
  }
  return tensor;
}

// `values` as a tensor of `dtype` (float32 or float64) and shape [n].
Tensor FloatValues(DataType dtype, const std::vector<double>& values) {
  const Dims dims = {static_cast<int64_t>(values.size())};
  if (dtype == kFloat32) {
    std::vector<float> floats(values.begin(), values.end());
    return MakeTensor<float>(dims, floats);
  }
  return MakeTensor<double>(dims, values);
}

// The special values of floating-point inputs, and ordinary ones.
std::vector<double> SpecialValues() {
  return {0.0, -0.0, kInf, -kInf, kNan, 1e-40, -1e-40, -1.0,
          1.0, 3.0,  -3.0, 0.5,   1e30, -1e30, 2.5,    -0.25};
}

int64_t Count(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// The broadcast of `a` and `b` (numpy rules; shapes that broadcast).
Dims BroadcastOf(const Dims& a, const Dims& b) {
  Dims out(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    out[out.size() - 1 - i] = da == 1 ? db : da;
  }
  return out;
}

struct ShapePair {
  Dims x;
  Dims y;
};

// Same shapes, single elements, rows, columns, both sides broadcast, empty
// outputs, equal counts of other ranks, and dimensions that do not merge.
std::vector<ShapePair> BroadcastShapes() {
  return {
      {{}, {}},
      {{}, {5}},
      {{1}, {1}},
      {{255}, {255}},
      {{257}, {1}},
      {{1}, {257}},
      {{3, 257}, {257}},
      {{3, 257}, {3, 1}},
      {{257}, {3, 1}},
      {{2, 3, 4}, {3, 1}},
      {{2, 1, 4}, {1, 3, 1}},
      {{3}, {1, 3}},
      {{0, 3}, {1, 3}},
      {{0, 3}, {3}},
      {{2, 0}, {2, 1}},
      {{2, 3, 4, 5}, {5}},
      {{2, 1, 3, 1, 2, 3}, {1, 2, 1, 3, 1, 3}},
      {{2, 1, 2, 1, 2, 1, 2, 1}, {1, 2, 1, 2, 1, 2, 1, 2}},
  };
}

// Shapes with long reductions in the gradients: columns (a bias), rows,
// a middle dimension, a scalar, and outputs past one grid.
std::vector<ShapePair> GradShapes() {
  std::vector<ShapePair> shapes = BroadcastShapes();
  shapes.push_back({{4096, 64}, {64}});
  shapes.push_back({{64, 4096}, {64, 1}});
  shapes.push_back({{3, 2000, 7}, {1, 2000, 1}});
  shapes.push_back({{20000}, {}});
  shapes.push_back({{5, 3}, {7, 1, 3}});
  return shapes;
}

// The random inputs of binary op `type`, within its domain.
Tensor BinaryInput(const std::string& type, DataType dtype, bool is_y,
                   const Dims& dims, uint64_t seed) {
  const bool integer = dtype == kInt32 || dtype == kInt64;
  if (type == "div") {
    if (is_y) return RandomTensor(dtype, dims, seed, 1, integer ? 20 : 3);
    return RandomTensor(dtype, dims, seed, integer ? -1000 : -3,
                        integer ? 1000 : 3);
  }
  if (type == "pow") {
    if (integer) {
      return is_y ? RandomTensor(dtype, dims, seed, 0, 12)
                  : RandomTensor(dtype, dims, seed, -4, 5);
    }
    return is_y ? RandomTensor(dtype, dims, seed, -2, 2)
                : RandomTensor(dtype, dims, seed, 0.1, 3);
  }
  if (type == "max" || type == "min") {
    return Rounded(RandomTensor(dtype, dims, seed, -2.5, 2.5));
  }
  return RandomTensor(dtype, dims, seed, integer ? -1000 : -2,
                      integer ? 1000 : 2);
}

// The absolute error two sums of `terms` terms of a few units each may
// differ by: the CPU adds them in sequence, the GPU as a tree, each rounding
// error about eps times the partial sum.
double GradAtol(DataType dtype, int64_t terms) {
  return (dtype == kFloat32 ? 4e-6 : 1e-14) * std::max<int64_t>(terms, 1);
}

const std::vector<std::string>& BinaryTypes() {
  static const std::vector<std::string> types = {"add", "sub", "mul", "div",
                                                 "pow", "max", "min"};
  return types;
}

TEST(ElementwiseCudaTest, BinaryOpsMatchCpu) {
  SF_REQUIRE_CUDA();
  uint64_t seed = 1;
  for (const std::string& type : BinaryTypes()) {
    for (DataType dtype : {kFloat32, kFloat64, kInt32, kInt64}) {
      for (const ShapePair& s : BroadcastShapes()) {
        for (bool flip : {false, true}) {
          const Dims& xd = flip ? s.y : s.x;
          const Dims& yd = flip ? s.x : s.y;
          EXPECT_TRUE(
              MatchesOnCuda(Binary(type),
                            {{"x", BinaryInput(type, dtype, false, xd, ++seed)},
                             {"y", BinaryInput(type, dtype, true, yd, ++seed)}},
                            {"out"}))
              << type << " " << DataTypeName(dtype) << " " << Describe(xd, yd);
        }
      }
    }
  }
}

TEST(ElementwiseCudaTest, BinaryOpsPastOneGrid) {
  SF_REQUIRE_CUDA();
  // A scalar, a row of a square past one grid (general index arithmetic),
  // and same shapes.
  const std::vector<ShapePair> shapes = {
      {{kLarge}, {}}, {{4100, 4100}, {4100, 1}}, {{kLarge}, {kLarge}}};
  uint64_t seed = 100;
  for (const std::string& type : BinaryTypes()) {
    for (const ShapePair& s : shapes) {
      EXPECT_TRUE(
          MatchesOnCuda(Binary(type),
                        {{"x", BinaryInput(type, kFloat32, false, s.x, ++seed)},
                         {"y", BinaryInput(type, kFloat32, true, s.y, ++seed)}},
                        {"out"}))
          << type << " " << Describe(s.x, s.y);
    }
  }
  // Integers on the 32-bit fast division.
  EXPECT_TRUE(
      MatchesOnCuda(Binary("div"),
                    {{"x", RandomTensor(kInt32, {3, kLarge / 3}, 7, -1e9, 1e9)},
                     {"y", RandomTensor(kInt32, {3, 1}, 8, 1, 1000)}},
                    {"out"}));
}

TEST(ElementwiseCudaTest, IntegerArithmeticWrapsAsOnCpu) {
  SF_REQUIRE_CUDA();
  for (const std::string type : {"add", "sub", "mul", "pow"}) {
    EXPECT_TRUE(MatchesOnCuda(
        Binary(type),
        {{"x", RandomTensor(kInt32, {1000}, 1, -2e9, 2e9)},
         {"y", RandomTensor(kInt32, {1000}, 2, type == "pow" ? 0 : -2e9,
                            type == "pow" ? 40 : 2e9)}},
        {"out"}))
        << type;
    EXPECT_TRUE(MatchesOnCuda(
        Binary(type),
        {{"x", RandomTensor(kInt64, {1000}, 3, -9e18, 9e18)},
         {"y", RandomTensor(kInt64, {1000}, 4, type == "pow" ? 0 : -9e18,
                            type == "pow" ? 70 : 9e18)}},
        {"out"}))
        << type;
  }
  const int32_t lowest = std::numeric_limits<int32_t>::min();
  // The lowest value divided by -1 wraps; division truncates toward zero;
  // negative powers truncate to 0 unless the base is 1 or -1.
  EXPECT_TRUE(
      MatchesOnCuda(Binary("div"),
                    {{"x", MakeTensor<int32_t>({6}, {lowest, 7, -7, 7, -7, 0})},
                     {"y", MakeTensor<int32_t>({6}, {-1, 2, 2, -2, -2, -5})}},
                    {"out"}));
  EXPECT_TRUE(
      MatchesOnCuda(Binary("pow"),
                    {{"x", MakeTensor<int64_t>({6}, {1, -1, -1, 2, -2, 3})},
                     {"y", MakeTensor<int64_t>({6}, {-5, -3, -4, -1, 63, 0})}},
                    {"out"}));
}

TEST(ElementwiseCudaTest, IntegerErrorsMatchCpu) {
  SF_REQUIRE_CUDA();
  for (DataType dtype : {kInt32, kInt64}) {
    // The lowest index of a zero divisor is reported, also broadcast.
    Tensor y = RandomTensor(dtype, {4, 1}, 1, 1, 9);
    Tensor x = RandomTensor(dtype, {4, 300}, 2, -50, 50);
    if (dtype == kInt32) {
      y.data<int32_t>()[1] = 0;
      y.data<int32_t>()[3] = 0;
    } else {
      y.data<int64_t>()[1] = 0;
      y.data<int64_t>()[3] = 0;
    }
    EXPECT_TRUE(SameErrorOnCuda(Binary("div"), {{"x", x}, {"y", y}}, {"out"}))
        << DataTypeName(dtype);
    EXPECT_TRUE(
        SameErrorOnCuda(Binary("pow"),
                        {{"x", RandomTensor(dtype, {3, 5}, 3, 0, 1)},  // zeros
                         {"y", RandomTensor(dtype, {5}, 4, -3, -1)}},
                        {"out"}))
        << DataTypeName(dtype);
  }
  // An empty output divides nothing: no error.
  EXPECT_TRUE(MatchesOnCuda(Binary("div"),
                            {{"x", MakeTensor<int32_t>({0, 3}, {})},
                             {"y", MakeTensor<int32_t>({3}, {0, 1, 0})}},
                            {"out"}));
}

TEST(ElementwiseCudaTest, SpecialFloatValuesMatchCpu) {
  SF_REQUIRE_CUDA();
  const std::vector<double> values = SpecialValues();
  const int64_t n = values.size();
  for (DataType dtype : {kFloat32, kFloat64}) {
    // Every pair: x along rows, y along columns.
    Tensor x = FloatValues(dtype, values);
    Tensor y = FloatValues(dtype, values);
    ASSERT_TRUE(x.Reshape({n, 1}).ok());
    for (const std::string& type : BinaryTypes()) {
      EXPECT_TRUE(
          MatchesOnCudaAnyNaN(Binary(type), {{"x", x}, {"y", y}}, {"out"}))
          << type << " " << DataTypeName(dtype);
    }
    for (const std::string type :
         {"equal", "less", "greater", "less_equal", "greater_equal"}) {
      EXPECT_TRUE(
          MatchesOnCudaAnyNaN(Binary(type), {{"x", x}, {"y", y}}, {"out"}))
          << type << " " << DataTypeName(dtype);
    }
  }
}

TEST(ElementwiseCudaTest, BinaryGradsMatchCpu) {
  SF_REQUIRE_CUDA();
  uint64_t seed = 1000;
  const std::vector<std::vector<std::string>> outputs = {
      {"dx", "dy"}, {"dx"}, {"dy"}};
  for (const std::string& type : BinaryTypes()) {
    for (DataType dtype : {kFloat32, kFloat64}) {
      for (const ShapePair& s : GradShapes()) {
        const Dims out = BroadcastOf(s.x, s.y);
        const int64_t n = Count(out);
        // Terms summed per element, for the tolerance of the sums.
        const int64_t terms =
            std::max<int64_t>({1, n / std::max<int64_t>(1, Count(s.x)),
                               n / std::max<int64_t>(1, Count(s.y))});
        const double atol = GradAtol(dtype, terms);
        const double rtol = dtype == kFloat32 ? 1e-5 : 1e-12;
        for (const std::vector<std::string>& fetches : outputs) {
          Tensor x = BinaryInput(type, dtype, false, s.x, ++seed);
          Tensor y = BinaryInput(type, dtype, true, s.y, ++seed);
          // Terms of a few units at most, for the tolerance of the sums.
          if (type == "div") y = RandomTensor(dtype, s.y, ++seed, 0.5, 2);
          if (type == "pow") x = RandomTensor(dtype, s.x, ++seed, 0.5, 2);
          EXPECT_TRUE(MatchesOnCuda(
              BinaryGrad(type + "_grad", fetches),
              {{"x", x}, {"y", y}, {"g", RandomTensor(dtype, out, ++seed)}},
              fetches, rtol, atol))
              << type << "_grad " << DataTypeName(dtype) << " "
              << Describe(s.x, s.y) << " " << fetches.size() << " outputs, "
              << fetches[0];
        }
      }
    }
  }
}

TEST(ElementwiseCudaTest, BinaryGradsPastOneGrid) {
  SF_REQUIRE_CUDA();
  // A bias over rows, a column of rows, a full reduction, same shapes.
  const std::vector<ShapePair> shapes = {{{kLarge / 128, 128}, {128}},
                                         {{2, kLarge / 2}, {2, 1}},
                                         {{kLarge}, {}},
                                         {{kLarge}, {kLarge}}};
  uint64_t seed = 2000;
  for (const std::string type : {"add", "mul", "max"}) {
    for (const ShapePair& s : shapes) {
      const Dims out = BroadcastOf(s.x, s.y);
      const int64_t terms = Count(out) / Count(s.y);
      EXPECT_TRUE(
          MatchesOnCuda(BinaryGrad(type + std::string("_grad"), {"dx", "dy"}),
                        {{"x", BinaryInput(type, kFloat64, false, s.x, ++seed)},
                         {"y", BinaryInput(type, kFloat64, true, s.y, ++seed)},
                         {"g", RandomTensor(kFloat64, out, ++seed)}},
                        {"dx", "dy"}, 1e-12, GradAtol(kFloat64, terms)))
          << type << "_grad " << Describe(s.x, s.y);
    }
  }
}

TEST(ElementwiseCudaTest, PowAndDivGradEdgesMatchCpu) {
  SF_REQUIRE_CUDA();
  for (DataType dtype : {kFloat32, kFloat64}) {
    // 0^0, 0^positive, 0^negative, negative bases, a zero divisor.
    Tensor x = FloatValues(dtype, {0, 0, 0, 0, -2, -2, 2, 0.5, 1});
    Tensor y = FloatValues(dtype, {0, 2, -1, 0.5, 3, 0.5, 0, -2, 0});
    Tensor g = FloatValues(dtype, {1, -1, 2, 0.5, 1, 1, 3, -1, 1});
    for (const std::string type : {"pow_grad", "div_grad", "max_grad"}) {
      EXPECT_TRUE(MatchesOnCudaAnyNaN(BinaryGrad(type, {"dx", "dy"}),
                                      {{"x", x}, {"y", y}, {"g", g}},
                                      {"dx", "dy"}))
          << type << " " << DataTypeName(dtype);
    }
    // NaN inputs pick as max and min do.
    Tensor a = FloatValues(dtype, {kNan, 1, kNan, 2, 2});
    Tensor b = FloatValues(dtype, {1, kNan, kNan, 2, 3});
    Tensor h = FloatValues(dtype, {1, -1, 2, 0.5, 3});
    for (const std::string type : {"max_grad", "min_grad"}) {
      EXPECT_TRUE(MatchesOnCudaAnyNaN(BinaryGrad(type, {"dx", "dy"}),
                                      {{"x", a}, {"y", b}, {"g", h}},
                                      {"dx", "dy"}))
          << type << " " << DataTypeName(dtype);
    }
  }
}

TEST(ElementwiseCudaTest, ComparisonsMatchCpu) {
  SF_REQUIRE_CUDA();
  uint64_t seed = 3000;
  for (const std::string type :
       {"equal", "less", "greater", "less_equal", "greater_equal"}) {
    for (DataType dtype : {kFloat32, kFloat64, kInt32, kInt64, kBool}) {
      if (dtype == kBool && type != std::string("equal")) continue;
      for (const ShapePair& s : BroadcastShapes()) {
        // Few distinct values, so that equal elements occur.
        EXPECT_TRUE(MatchesOnCuda(
            Binary(type),
            {{"x", Rounded(RandomTensor(dtype, s.x, ++seed, -2, 3))},
             {"y", Rounded(RandomTensor(dtype, s.y, ++seed, -2, 3))}},
            {"out"}))
            << type << " " << DataTypeName(dtype) << " " << Describe(s.x, s.y);
      }
    }
    EXPECT_TRUE(MatchesOnCuda(
        Binary(type),
        {{"x", Rounded(RandomTensor(kFloat32, {4100, 4100}, ++seed, -2, 3))},
         {"y", Rounded(RandomTensor(kFloat32, {4100}, ++seed, -2, 3))}},
        {"out"}))
        << type;
  }
}

struct ShapeTriple {
  Dims condition;
  Dims x;
  Dims y;
};

std::vector<ShapeTriple> WhereShapes() {
  return {
      {{}, {}, {}},
      {{257}, {257}, {257}},
      {{3, 257}, {3, 257}, {257}},
      {{3, 1}, {1, 4}, {}},
      {{}, {3, 4}, {4}},
      {{2, 1, 4}, {3, 1}, {1}},
      {{2, 3, 4}, {2, 3, 4}, {2, 1, 4}},
      {{0, 4}, {1, 4}, {4}},
      {{4}, {2, 4}, {3, 1, 1}},
      {{64, 1}, {4096}, {64, 4096}},
      {{kLarge}, {kLarge}, {kLarge}},
      {{4100, 1}, {4100}, {4100, 4100}},
  };
}

TEST(ElementwiseCudaTest, WhereMatchesCpu) {
  SF_REQUIRE_CUDA();
  uint64_t seed = 4000;
  for (DataType dtype : {kFloat32, kFloat64, kInt32, kInt64, kBool}) {
    for (const ShapeTriple& s : WhereShapes()) {
      if (Count(s.x) >= kLarge && dtype != kFloat32) continue;
      EXPECT_TRUE(
          MatchesOnCuda(Where(),
                        {{"c", RandomTensor(kBool, s.condition, ++seed)},
                         {"x", RandomTensor(dtype, s.x, ++seed, -100, 100)},
                         {"y", RandomTensor(dtype, s.y, ++seed, -100, 100)}},
                        {"out"}))
          << DataTypeName(dtype) << " " << DimsToString(s.condition) << ", "
          << Describe(s.x, s.y);
    }
  }
}

TEST(ElementwiseCudaTest, WhereGradMatchesCpu) {
  SF_REQUIRE_CUDA();
  uint64_t seed = 5000;
  const std::vector<std::vector<std::string>> outputs = {
      {"dx", "dy"}, {"dx"}, {"dy"}};
  for (DataType dtype : {kFloat32, kFloat64}) {
    for (const ShapeTriple& s : WhereShapes()) {
      const Dims out = BroadcastOf(BroadcastOf(s.condition, s.x), s.y);
      const int64_t n = Count(out);
      const int64_t terms =
          std::max<int64_t>({1, n / std::max<int64_t>(1, Count(s.x)),
                             n / std::max<int64_t>(1, Count(s.y))});
      const double atol = GradAtol(dtype, terms);
      for (const std::vector<std::string>& fetches : outputs) {
        EXPECT_TRUE(
            MatchesOnCuda(WhereGrad(fetches),
                          {{"c", RandomTensor(kBool, s.condition, ++seed)},
                           {"x", RandomTensor(dtype, s.x, ++seed)},
                           {"y", RandomTensor(dtype, s.y, ++seed)},
                           {"g", RandomTensor(dtype, out, ++seed)}},
                          fetches, 1e-5, atol))
            << DataTypeName(dtype) << " " << DimsToString(s.condition) << ", "
            << Describe(s.x, s.y) << " " << fetches.size() << " outputs, "
            << fetches[0];
      }
    }
  }
}

// Dimensions that merge with no neighbour beyond the kernels' 8 fail
// cleanly (the CPU kernel runs them).
TEST(ElementwiseCudaTest, NineUnmergeableDimensionsAreUnimplemented) {
  SF_REQUIRE_CUDA();
  absl::StatusOr<std::vector<Tensor>> out = RunOpOnPlace(
      CUDAPlace(0), Binary("add"),
      {{"x", RandomTensor(kFloat32, {2, 1, 2, 1, 2, 1, 2, 1, 2}, 1)},
       {"y", RandomTensor(kFloat32, {1, 2, 1, 2, 1, 2, 1, 2, 1}, 2)}},
      {"out"});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kUnimplemented)
      << out.status();
}

struct UnaryCase {
  std::string type;
  double lo;
  double hi;
  bool integers;  // also int32 and int64
};

std::vector<UnaryCase> UnaryCases() {
  return {{"exp", -20, 20, false},   {"log", -0.5, 10, false},
          {"sqrt", -0.5, 10, false}, {"erf", -4, 4, false},
          {"sin", -10, 10, false},   {"cos", -10, 10, false},
          {"abs", -100, 100, true},  {"neg", -100, 100, true}};
}

std::vector<Dims> UnaryShapes() {
  return {{}, {0}, {2, 0}, {1}, {255}, {257}, {3, 5, 7}, {4099}};
}

TEST(ElementwiseCudaTest, UnaryOpsMatchCpu) {
  SF_REQUIRE_CUDA();
  uint64_t seed = 6000;
  for (const UnaryCase& c : UnaryCases()) {
    std::vector<DataType> dtypes = {kFloat32, kFloat64};
    if (c.integers) dtypes.insert(dtypes.end(), {kInt32, kInt64});
    for (DataType dtype : dtypes) {
      std::vector<Dims> shapes = UnaryShapes();
      if (dtype == kFloat32) shapes.push_back({kLarge});
      for (const Dims& dims : shapes) {
        EXPECT_TRUE(MatchesOnCuda(
            Unary(c.type),
            {{"x", RandomTensor(dtype, dims, ++seed, c.lo, c.hi)}}, {"out"}))
            << c.type << " " << DataTypeName(dtype) << " "
            << DimsToString(dims);
      }
    }
    for (DataType dtype : {kFloat32, kFloat64}) {
      EXPECT_TRUE(MatchesOnCudaAnyNaN(
          Unary(c.type), {{"x", FloatValues(dtype, SpecialValues())}}, {"out"}))
          << c.type << " " << DataTypeName(dtype);
    }
  }
  // abs and neg wrap at the lowest value.
  EXPECT_TRUE(MatchesOnCuda(
      Unary("abs"),
      {{"x", MakeTensor<int32_t>(
                 {4}, {std::numeric_limits<int32_t>::min(), -1, 0, 5})}},
      {"out"}));
  EXPECT_TRUE(MatchesOnCuda(
      Unary("neg"),
      {{"x", MakeTensor<int64_t>(
                 {4}, {std::numeric_limits<int64_t>::min(), -1, 0, 5})}},
      {"out"}));
}

struct GradCase {
  std::string type;
  std::string reads;
  double lo;
  double hi;
};

TEST(ElementwiseCudaTest, UnaryGradsMatchCpu) {
  SF_REQUIRE_CUDA();
  const std::vector<GradCase> cases = {
      {"exp_grad", "Out", 0, 100},    {"log_grad", "X", 0.01, 10},
      {"sqrt_grad", "Out", 0.01, 10}, {"erf_grad", "X", -4, 4},
      {"sin_grad", "X", -10, 10},     {"cos_grad", "X", -10, 10},
      {"abs_grad", "X", -3, 3}};
  uint64_t seed = 7000;
  for (const GradCase& c : cases) {
    for (DataType dtype : {kFloat32, kFloat64}) {
      std::vector<Dims> shapes = UnaryShapes();
      if (dtype == kFloat32) shapes.push_back({kLarge});
      for (const Dims& dims : shapes) {
        Tensor v = RandomTensor(dtype, dims, ++seed, c.lo, c.hi);
        if (c.type == "abs_grad") v = Rounded(v);  // zeros
        EXPECT_TRUE(MatchesOnCuda(
            UnaryGrad(c.type, c.reads),
            {{"v", v}, {"g", RandomTensor(dtype, dims, ++seed)}}, {"dx"}))
            << c.type << " " << DataTypeName(dtype) << " "
            << DimsToString(dims);
      }
      const std::vector<double> values = SpecialValues();
      EXPECT_TRUE(MatchesOnCudaAnyNaN(
          UnaryGrad(c.type, c.reads),
          {{"v", FloatValues(dtype, values)},
           {"g", RandomTensor(dtype, {static_cast<int64_t>(values.size())},
                              ++seed)}},
          {"dx"}))
          << c.type << " " << DataTypeName(dtype);
    }
  }
}

TEST(ElementwiseCudaTest, ScaleMatchesCpu) {
  SF_REQUIRE_CUDA();
  uint64_t seed = 8000;
  for (DataType dtype : {kFloat32, kFloat64, kInt32, kInt64}) {
    const bool integer = dtype == kInt32 || dtype == kInt64;
    for (const char* attrs :
         {"", "attrs { name: \"scale\" f: 3 } attrs { name: \"bias\" f: -7 }",
          "attrs { name: \"scale\" f: -3 } attrs { name: \"bias\" f: 7 } "
          "attrs { name: \"bias_after_scale\" b: false }",
          "attrs { name: \"scale\" f: 2.5 } attrs { name: \"bias\" f: 0.1 }",
          "attrs { name: \"scale\" f: 0.3 } attrs { name: \"bias\" f: -1.7 } "
          "attrs { name: \"bias_after_scale\" b: false }"}) {
      const bool whole = std::string(attrs).find('.') == std::string::npos;
      if (integer && !whole) continue;
      for (const Dims& dims : {Dims{0}, Dims{}, Dims{257}, Dims{kLarge}}) {
        if (Count(dims) == kLarge && dtype != kFloat32) continue;
        EXPECT_TRUE(MatchesOnCuda(
            Unary("scale", attrs),
            {{"x", RandomTensor(dtype, dims, ++seed, integer ? -2e9 : -10,
                                integer ? 2e9 : 10)}},
            {"out"}))
            << DataTypeName(dtype) << " " << attrs << " " << DimsToString(dims);
      }
    }
  }
}

std::string ClipAttrs(double min, double max) {
  return absl::StrFormat(
      "attrs { name: \"min\" f: %g } attrs { name: "
      "\"max\" f: %g }",
      min, max);
}

// clip (or clip_grad) with inputs Min and Max bound to "lo" and "hi".
std::string ClipInputs(bool grad) {
  return grad ? "type: \"clip_grad\" inputs { slot: \"X\" vars: \"v\" } "
                "inputs { slot: \"Out@GRAD\" vars: \"g\" } inputs { slot: "
                "\"Min\" vars: \"lo\" } inputs { slot: \"Max\" vars: \"hi\" "
                "} outputs { slot: \"X@GRAD\" vars: \"dx\" }"
              : "type: \"clip\" inputs { slot: \"X\" vars: \"x\" } inputs { "
                "slot: \"Min\" vars: \"lo\" } inputs { slot: \"Max\" vars: "
                "\"hi\" } outputs { slot: \"Out\" vars: \"out\" }";
}

// One element of `dtype` holding `value`, of shape `dims` ([] or [1]).
Tensor Scalar(DataType dtype, double value, Dims dims = {}) {
  Tensor t = RandomTensor(dtype, dims, 0);
  switch (dtype) {
    case kFloat32:
      t.data<float>()[0] = static_cast<float>(value);
      break;
    case kFloat64:
      t.data<double>()[0] = value;
      break;
    case kInt32:
      t.data<int32_t>()[0] = static_cast<int32_t>(value);
      break;
    default:
      t.data<int64_t>()[0] = static_cast<int64_t>(value);
      break;
  }
  return t;
}

TEST(ElementwiseCudaTest, ClipMatchesCpu) {
  SF_REQUIRE_CUDA();
  uint64_t seed = 9000;
  for (DataType dtype : {kFloat32, kFloat64, kInt32, kInt64}) {
    const bool integer = dtype == kInt32 || dtype == kInt64;
    for (const std::string& attrs :
         {ClipAttrs(-0.5, 0.5), ClipAttrs(-2.5, 3.7), ClipAttrs(1, 1),
          std::string("attrs { name: \"max\" f: 1 }"),
          std::string("attrs { name: \"min\" f: 0 }"), std::string("")}) {
      for (const Dims& dims : {Dims{0}, Dims{}, Dims{257}, Dims{kLarge}}) {
        if (Count(dims) == kLarge && dtype != kFloat32) continue;
        Tensor x = RandomTensor(dtype, dims, ++seed, -5, 5);
        EXPECT_TRUE(MatchesOnCuda(Unary("clip", attrs), {{"x", x}}, {"out"}))
            << DataTypeName(dtype) << " " << attrs << " " << DimsToString(dims);
        if (integer) continue;
        // The gradient passes at the bounds: whole inputs hit them.
        EXPECT_TRUE(MatchesOnCuda(
            UnaryGrad("clip_grad", "X", attrs),
            {{"v", Rounded(x)}, {"g", RandomTensor(dtype, dims, ++seed)}},
            {"dx"}))
            << DataTypeName(dtype) << " " << attrs << " " << DimsToString(dims);
      }
    }
    // Bounds from inputs, of shape [] and [1].
    Tensor x = Rounded(RandomTensor(dtype, {300}, ++seed, -5, 5));
    EXPECT_TRUE(MatchesOnCuda(
        ClipInputs(false),
        {{"x", x}, {"lo", Scalar(dtype, -2)}, {"hi", Scalar(dtype, 3, {1})}},
        {"out"}))
        << DataTypeName(dtype);
    EXPECT_TRUE(SameErrorOnCuda(
        ClipInputs(false),
        {{"x", x}, {"lo", Scalar(dtype, 3)}, {"hi", Scalar(dtype, -2)}},
        {"out"}))
        << DataTypeName(dtype);
    if (integer) continue;
    EXPECT_TRUE(MatchesOnCuda(ClipInputs(true),
                              {{"v", x},
                               {"g", RandomTensor(dtype, {300}, ++seed)},
                               {"lo", Scalar(dtype, -2, {1})},
                               {"hi", Scalar(dtype, 3)}},
                              {"dx"}))
        << DataTypeName(dtype);
    // NaN passes through clip and its gradient.
    Tensor specials = FloatValues(dtype, SpecialValues());
    EXPECT_TRUE(MatchesOnCudaAnyNaN(Unary("clip", ClipAttrs(-1, 2)),
                                    {{"x", specials}}, {"out"}));
    EXPECT_TRUE(MatchesOnCudaAnyNaN(
        UnaryGrad("clip_grad", "X", ClipAttrs(-1, 2)),
        {{"v", specials}, {"g", FloatValues(dtype, SpecialValues())}}, {"dx"}));
  }
}

// Inputs for cast from `dtype`: special and out-of-range values for the
// float types (random bit patterns too), wide ranges for the integers,
// every bit pattern of float16.
Tensor CastInput(DataType dtype, uint64_t seed) {
  std::mt19937_64 engine(seed);
  switch (dtype) {
    case kFloat32:
    case kFloat64: {
      std::vector<double> values = SpecialValues();
      for (double v : {3e9, -3e9, 2147483647.0, 2147483648.0, -2147483649.0,
                       1e20, -1e20, 255.5, 256.0, -0.5, 65504.0, 65520.0,
                       65519.99, 6e-8, 3e-8, 2.98e-8, 1.0009765625}) {
        values.push_back(v);
      }
      std::uniform_real_distribution<double> uniform(-300, 300);
      for (int i = 0; i < 2000; ++i) values.push_back(uniform(engine));
      Tensor t = FloatValues(dtype, values);
      // Random bit patterns: every exponent, NaN payloads, subnormals.
      Tensor bits = RandomTensor(dtype, {20000}, seed);
      for (int64_t i = 0; i < bits.numel(); ++i) {
        if (dtype == kFloat32) {
          const uint32_t b = static_cast<uint32_t>(engine());
          std::memcpy(bits.data<float>() + i, &b, sizeof(b));
        } else {
          const uint64_t b = engine();
          std::memcpy(bits.data<double>() + i, &b, sizeof(b));
        }
      }
      Tensor both = RandomTensor(dtype, {t.numel() + bits.numel()}, seed);
      const size_t size = dtype == kFloat32 ? 4 : 8;
      std::memcpy(both.raw_data(), t.raw_data(), t.numel() * size);
      std::memcpy(static_cast<char*>(both.raw_data()) + t.numel() * size,
                  bits.raw_data(), bits.numel() * size);
      return both;
    }
    case kFloat16: {
      Tensor t;
      EXPECT_TRUE(t.Allocate(CPUPlace(), kFloat16, {65536}).ok());
      for (int64_t i = 0; i < 65536; ++i) {
        t.data<float16>()[i].bits = static_cast<uint16_t>(i);
      }
      return t;
    }
    case kInt32:
      return RandomTensor(kInt32, {5000}, seed, -2.1e9, 2.1e9);
    case kInt64:
      return RandomTensor(kInt64, {5000}, seed, -9e18, 9e18);
    case kUInt8: {
      Tensor t;
      EXPECT_TRUE(t.Allocate(CPUPlace(), kUInt8, {256}).ok());
      for (int64_t i = 0; i < 256; ++i) {
        t.data<uint8_t>()[i] = static_cast<uint8_t>(i);
      }
      return t;
    }
    default:
      return RandomTensor(kBool, {1000}, seed);
  }
}

const std::vector<DataType>& CastTypes() {
  static const std::vector<DataType> types = {
      kFloat32, kFloat64, kFloat16, kInt32, kInt64, kUInt8, kBool};
  return types;
}

TEST(ElementwiseCudaTest, CastMatchesCpuForEveryPair) {
  SF_REQUIRE_CUDA();
  uint64_t seed = 10000;
  for (DataType from : CastTypes()) {
    for (DataType to : CastTypes()) {
      EXPECT_TRUE(MatchesOnCudaAnyNaN(
          Cast(to), {{"x", CastInput(from, ++seed)}}, {"out"}, 0, 0))
          << DataTypeName(from) << " to " << DataTypeName(to);
    }
  }
  // Empty and past one grid.
  EXPECT_TRUE(MatchesOnCuda(
      Cast(kInt32), {{"x", RandomTensor(kFloat32, {0, 4}, 1)}}, {"out"}));
  EXPECT_TRUE(MatchesOnCuda(
      Cast(kFloat64), {{"x", RandomTensor(kInt32, {kLarge}, 2, -1e9, 1e9)}},
      {"out"}));
}

TEST(ElementwiseCudaTest, CastGradMatchesCpu) {
  SF_REQUIRE_CUDA();
  uint64_t seed = 11000;
  for (DataType grad : {kFloat32, kFloat64, kFloat16}) {
    for (DataType x : {kFloat32, kFloat64, kFloat16}) {
      const std::string op = absl::StrFormat(
          "type: \"cast_grad\" inputs { slot: \"X\" vars: \"x\" } inputs { "
          "slot: \"Out@GRAD\" vars: \"g\" } outputs { slot: \"X@GRAD\" "
          "vars: \"dx\" } attrs { name: \"out_dtype\" i: %d }",
          static_cast<int>(grad));
      Tensor g = CastInput(grad, ++seed);
      // Only X's dtype and shape matter.
      Tensor xs;
      ASSERT_TRUE(xs.Allocate(CPUPlace(), x, g.dims()).ok());
      std::memset(xs.raw_data(), 0, xs.nbytes());
      EXPECT_TRUE(MatchesOnCudaAnyNaN(op, {{"x", xs}, {"g", g}}, {"dx"}, 0, 0))
          << DataTypeName(grad) << " to " << DataTypeName(x);
    }
  }
}

}  // namespace
}  // namespace scopeflow
