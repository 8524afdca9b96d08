// CUDA kernels of the activations against their CPU kernels: every
// elementwise activation and its gradient with each attribute, softmax and
// log_softmax and their gradients along every axis, over sizes around the
// block and warp shapes, empty and large tensors, and NaN and infinities.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/cuda_test_util.h"
#include "framework/op_test_util.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

std::string Unary(const std::string& type, const std::string& attrs = "") {
  return absl::StrCat("type: \"", type,
                      "\" inputs { slot: \"X\" vars: \"x\" } outputs { slot: "
                      "\"Out\" vars: \"y\" } ",
                      attrs);
}

std::string UnaryGrad(const std::string& type, const std::string& reads,
                      const std::string& attrs = "") {
  return absl::StrCat("type: \"", type, "\" inputs { slot: \"", reads,
                      "\" vars: \"v\" } inputs { slot: \"Out@GRAD\" vars: "
                      "\"g\" } outputs { slot: \"X@GRAD\" vars: \"dx\" } ",
                      attrs);
}

// An activation with its attributes, and the input its gradient reads.
struct ActivationCase {
  std::string type;
  std::string attrs;
  std::string reads;
};

const std::vector<ActivationCase>& Activations() {
  static const auto* cases = new std::vector<ActivationCase>{
      {"relu", "", "Out"},
      {"leaky_relu", "", "X"},
      {"leaky_relu", R"pb(attrs { name: "alpha" f: 0.3 })pb", "X"},
      {"leaky_relu", R"pb(attrs { name: "alpha" f: -1.5 })pb", "X"},
      {"elu", "", "X"},
      {"elu", R"pb(attrs { name: "alpha" f: 2.5 })pb", "X"},
      {"sigmoid", "", "Out"},
      {"tanh", "", "Out"},
      {"gelu", "", "X"},
      {"gelu", R"pb(attrs { name: "approximate" b: true })pb", "X"},
  };
  return *cases;
}

// Empty, one element, around the block and the 16-byte vectors, and (for
// float32, to keep the test short) past the grid's cap of 65535 blocks of
// 256.
std::vector<Dims> ElementwiseShapes(DataType dtype) {
  std::vector<Dims> shapes = {{0}, {2, 0}, {1}, {3}, {255}, {257}, {3, 1001}};
  if (dtype == kFloat32) shapes.push_back({70000 * 256 + 3});
  return shapes;
}

// Values where the functions saturate, overflow or are not numbers.
template <typename T>
Tensor SpecialValues() {
  const T inf = std::numeric_limits<T>::infinity();
  const std::vector<T> values = {std::numeric_limits<T>::quiet_NaN(),
                                 inf,
                                 -inf,
                                 T(0),
                                 -T(0),
                                 T(1e-30),
                                 T(-1e-30),
                                 T(0.7518),
                                 T(-0.7518),
                                 T(5),
                                 T(-5),
                                 T(20),
                                 T(-20),
                                 T(100),
                                 T(-100),
                                 T(800),
                                 T(-800)};
  Tensor tensor =
      RandomTensor(DataTypeOf<T>(), {static_cast<int64_t>(values.size())}, 0);
  for (size_t i = 0; i < values.size(); ++i) tensor.data<T>()[i] = values[i];
  return tensor;
}

TEST(ActivationCudaTest, ForwardMatchesCpu) {
  SF_REQUIRE_CUDA();
  for (const ActivationCase& c : Activations()) {
    for (DataType dtype : {kFloat32, kFloat64}) {
      for (const Dims& dims : ElementwiseShapes(dtype)) {
        EXPECT_TRUE(MatchesOnCuda(Unary(c.type, c.attrs),
                                  {{"x", RandomTensor(dtype, dims, 1, -6, 6)}},
                                  {"y"}))
            << c.type << " " << c.attrs << " " << DataTypeName(dtype);
      }
    }
  }
}

TEST(ActivationCudaTest, GradMatchesCpu) {
  SF_REQUIRE_CUDA();
  for (const ActivationCase& c : Activations()) {
    // Out lies in (0, 1) for sigmoid, (-1, 1) for tanh.
    const double lo = c.reads == "Out" ? -1.0 : -6.0;
    const double hi = c.reads == "Out" ? 1.0 : 6.0;
    for (DataType dtype : {kFloat32, kFloat64}) {
      for (const Dims& dims : ElementwiseShapes(dtype)) {
        EXPECT_TRUE(MatchesOnCuda(UnaryGrad(c.type + "_grad", c.reads, c.attrs),
                                  {{"v", RandomTensor(dtype, dims, 2, lo, hi)},
                                   {"g", RandomTensor(dtype, dims, 3)}},
                                  {"dx"}))
            << c.type << "_grad " << c.attrs << " " << DataTypeName(dtype);
      }
    }
  }
}

TEST(ActivationCudaTest, SpecialValuesMatchCpu) {
  SF_REQUIRE_CUDA();
  for (const ActivationCase& c : Activations()) {
    for (const Tensor& x : {SpecialValues<float>(), SpecialValues<double>()}) {
      EXPECT_TRUE(MatchesOnCuda(Unary(c.type, c.attrs), {{"x", x}}, {"y"}))
          << c.type << " " << c.attrs << " " << DataTypeName(x.dtype());
      EXPECT_TRUE(MatchesOnCuda(
          UnaryGrad(c.type + "_grad", c.reads, c.attrs),
          {{"v", x}, {"g", RandomTensor(x.dtype(), x.dims(), 4)}}, {"dx"}))
          << c.type << "_grad " << c.attrs << " " << DataTypeName(x.dtype());
    }
  }
}

std::string Axis(int64_t axis) {
  return absl::StrCat("attrs { name: \"axis\" i: ", axis, " }");
}

struct SoftmaxCase {
  Dims dims;
  int64_t axis;
};

// Rows for each lane count and register count of the row kernel and past
// it, strided slices for the tile kernel (narrow and wide) and the
// thread-per-slice kernel, negative axes, empty tensors.
const std::vector<SoftmaxCase>& SoftmaxCases() {
  static const auto* cases = new std::vector<SoftmaxCase>{
      {{1}, -1},
      {{7, 1}, -1},
      {{3, 5}, -1},
      {{3, 5}, 0},
      {{4, 33}, 1},
      {{9, 100}, -1},
      {{100, 1000}, -1},
      {{5, 1024}, -1},
      {{3, 1025}, -1},
      {{2, 70000}, -1},
      {{20000, 10}, -1},
      {{4, 3, 5}, 1},
      {{4, 3, 5}, -3},
      {{2, 3, 4, 5}, 2},
      {{2, 600, 3}, 1},
      {{3, 100, 40}, 1},
      {{2, 2000, 1}, 1},
      {{1, 5000, 2}, 1},
      {{2, 40, 150000}, 1},
      {{0, 5}, -1},
      {{5, 0}, 0},
      {{3, 0, 2}, 1},
  };
  return *cases;
}

TEST(SoftmaxCudaTest, ForwardMatchesCpu) {
  SF_REQUIRE_CUDA();
  for (const char* type : {"softmax", "log_softmax"}) {
    for (DataType dtype : {kFloat32, kFloat64}) {
      for (const SoftmaxCase& c : SoftmaxCases()) {
        EXPECT_TRUE(MatchesOnCuda(
            Unary(type, Axis(c.axis)),
            {{"x", RandomTensor(dtype, c.dims, 6, -10, 10)}}, {"y"}))
            << type << " " << DataTypeName(dtype) << " axis " << c.axis;
      }
    }
  }
}

// Logits far apart: the shift by the maximum keeps exp from overflowing.
TEST(SoftmaxCudaTest, LargeLogitsMatchCpu) {
  SF_REQUIRE_CUDA();
  for (const char* type : {"softmax", "log_softmax"}) {
    for (const SoftmaxCase& c : std::vector<SoftmaxCase>{
             {{8, 30}, -1}, {{4, 3000}, 1}, {{3, 50, 7}, 1}}) {
      EXPECT_TRUE(MatchesOnCuda(
          Unary(type, Axis(c.axis)),
          {{"x", RandomTensor(kFloat32, c.dims, 7, -1e3, 1e3)}}, {"y"}))
          << type << " axis " << c.axis;
    }
  }
}

// A NaN or +inf anywhere in a slice makes the slice NaN, as does a slice of
// -inf only; -inf next to finite logits is a probability of 0.
TEST(SoftmaxCudaTest, SpecialValuesMatchCpu) {
  SF_REQUIRE_CUDA();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (const Dims& dims : std::vector<Dims>{{6, 40}, {6, 2000}, {6, 40, 3}}) {
    Tensor x = RandomTensor(kFloat32, dims, 8, -5, 5);
    const int64_t row = x.numel() / 6;
    float* data = x.data<float>();
    data[0 * row + 3] = nan;
    data[1 * row + row - 1] = inf;
    for (int64_t i = 0; i < row; ++i) data[2 * row + i] = -inf;
    data[3 * row + 1] = -inf;
    data[4 * row] = nan;
    for (const char* type : {"softmax", "log_softmax"}) {
      // Rows of the [6, n] shapes; for [6, 40, 3] the slices along axis 1
      // cross the marked rows too.
      EXPECT_TRUE(MatchesOnCuda(Unary(type, Axis(1)), {{"x", x}}, {"y"}))
          << type;
    }
  }
}

// Out is the forward's output, so that each slice of softmax sums to 1: the
// kernels sum along slices in float32 in different orders, and random
// values in place of probabilities would scale those rounding differences
// past the tolerance.
TEST(SoftmaxCudaTest, GradMatchesCpu) {
  SF_REQUIRE_CUDA();
  for (const char* forward : {"softmax", "log_softmax"}) {
    const std::string type = absl::StrCat(forward, "_grad");
    for (DataType dtype : {kFloat32, kFloat64}) {
      for (const SoftmaxCase& c : SoftmaxCases()) {
        absl::StatusOr<std::vector<Tensor>> out =
            RunOp(Unary(forward, Axis(c.axis)),
                  {{"x", RandomTensor(dtype, c.dims, 9, -10, 10)}}, {"y"});
        ASSERT_TRUE(out.ok()) << out.status();
        EXPECT_TRUE(MatchesOnCuda(
            UnaryGrad(type, "Out", Axis(c.axis)),
            {{"v", (*out)[0]}, {"g", RandomTensor(dtype, c.dims, 10)}}, {"dx"}))
            << type << " " << DataTypeName(dtype) << " axis " << c.axis;
      }
    }
  }
}

}  // namespace
}  // namespace scopeflow
