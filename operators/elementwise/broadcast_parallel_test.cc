// Elementwise ops on tensors large enough that their loops are spread over
// threads (where more than one is available), against plain loops: the
// ranges each thread takes must cover every element once, and a broadcast
// range starting mid-way through the outer dimensions must find its
// operands' offsets there.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAreArray;

Tensor Random(const Dims& dims, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<float> values(NumElements(dims));
  for (float& v : values) v = dist(rng);
  return MakeTensor<float>(dims, values);
}

absl::StatusOr<Tensor> RunBinary(const std::string& type, const Tensor& x,
                                 const Tensor& y) {
  auto out =
      RunOp(absl::StrFormat(R"pb(type: "%s"
                                 inputs { slot: "X" vars: "x" }
                                 inputs { slot: "Y" vars: "y" }
                                 outputs { slot: "Out" vars: "out" })pb",
                            type),
            {{"x", x}, {"y", y}}, {"out"});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

// out[i][j][k] = x[i][j][k] op y at (i, j, k) with y's dims of size 1 read
// at index 0: the broadcast written as three loops.
template <typename Op>
std::vector<float> Broadcast3d(const Tensor& x, const Tensor& y, Op op) {
  const int64_t a = x.dim(0), b = x.dim(1), c = x.dim(2);
  const bool ya = y.dim(0) != 1, yb = y.dim(1) != 1, yc = y.dim(2) != 1;
  std::vector<float> out;
  for (int64_t i = 0; i < a; ++i) {
    for (int64_t j = 0; j < b; ++j) {
      for (int64_t k = 0; k < c; ++k) {
        const int64_t yi =
            ((ya ? i : 0) * y.dim(1) + (yb ? j : 0)) * y.dim(2) + (yc ? k : 0);
        out.push_back(
            op(x.data<float>()[(i * b + j) * c + k], y.data<float>()[yi]));
      }
    }
  }
  return out;
}

TEST(BroadcastParallelTest, SameShapeAndScalar) {
  const Tensor x = Random({3, 50000}, 1);
  const Tensor y = Random({3, 50000}, 2);
  auto sum = RunBinary("add", x, y);
  ASSERT_TRUE(sum.ok()) << sum.status();
  auto product = RunBinary("mul", x, MakeTensor<float>({1}, {1.5f}));
  ASSERT_TRUE(product.ok()) << product.status();
  std::vector<float> expected_sum, expected_product;
  for (int64_t i = 0; i < x.numel(); ++i) {
    expected_sum.push_back(x.data<float>()[i] + y.data<float>()[i]);
    expected_product.push_back(x.data<float>()[i] * 1.5f);
  }
  EXPECT_THAT(Values<float>(*sum), ElementsAreArray(expected_sum));
  EXPECT_THAT(Values<float>(*product), ElementsAreArray(expected_product));
}

// Rows of 32 and 40 elements: 15 x 101 and 1200 rows, so that a thread's
// first row lies inside the outer dimensions.
TEST(BroadcastParallelTest, BroadcastRowsStartMidway) {
  const Tensor x = Random({15, 101, 32}, 3);
  for (const Dims& y_dims :
       {Dims{15, 1, 32}, Dims{1, 101, 32}, Dims{15, 101, 1}, Dims{1, 1, 32}}) {
    SCOPED_TRACE(
        absl::StrFormat("y of [%d, %d, %d]", y_dims[0], y_dims[1], y_dims[2]));
    const Tensor y = Random(y_dims, 4);
    auto out = RunBinary("sub", x, y);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT(Values<float>(*out),
                ElementsAreArray(
                    Broadcast3d(x, y, [](float a, float b) { return a - b; })));
  }
  const Tensor wide = Random({30, 40, 40}, 5);
  const Tensor column = Random({30, 40, 1}, 6);
  auto out = RunBinary("max", wide, column);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>(*out),
              ElementsAreArray(Broadcast3d(wide, column, [](float a, float b) {
                return a > b ? a : b;
              })));
}

TEST(BroadcastParallelTest, WhereWithABroadcastCondition) {
  const Tensor x = Random({15, 101, 32}, 7);
  const Tensor y = Random({15, 101, 32}, 8);
  std::vector<bool> mask;
  for (int i = 0; i < 15 * 32; ++i) mask.push_back(i % 3 == 0);
  const Tensor condition = MakeTensor<bool>({15, 1, 32}, mask);
  auto out = RunOp(R"pb(type: "where"
                        inputs { slot: "Condition" vars: "c" }
                        inputs { slot: "X" vars: "x" }
                        inputs { slot: "Y" vars: "y" }
                        outputs { slot: "Out" vars: "out" })pb",
                   {{"c", condition}, {"x", x}, {"y", y}}, {"out"});
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<float> expected;
  for (int i = 0; i < 15; ++i) {
    for (int j = 0; j < 101; ++j) {
      for (int k = 0; k < 32; ++k) {
        const int64_t at = (i * 101 + j) * 32 + k;
        expected.push_back(mask[i * 32 + k] ? x.data<float>()[at]
                                            : y.data<float>()[at]);
      }
    }
  }
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAreArray(expected));
}

TEST(BroadcastParallelTest, SameShapeGradients) {
  const Tensor x = Random({3, 40000}, 9);
  const Tensor y = Random({3, 40000}, 10);
  const Tensor g = Random({3, 40000}, 11);
  auto grads = RunOp(R"pb(type: "mul_grad"
                          inputs { slot: "X" vars: "x" }
                          inputs { slot: "Y" vars: "y" }
                          inputs { slot: "Out@GRAD" vars: "g" }
                          outputs { slot: "X@GRAD" vars: "dx" }
                          outputs { slot: "Y@GRAD" vars: "dy" })pb",
                     {{"x", x}, {"y", y}, {"g", g}}, {"dx", "dy"});
  ASSERT_TRUE(grads.ok()) << grads.status();
  std::vector<float> dx, dy;
  for (int64_t i = 0; i < x.numel(); ++i) {
    dx.push_back(g.data<float>()[i] * y.data<float>()[i]);
    dy.push_back(g.data<float>()[i] * x.data<float>()[i]);
  }
  EXPECT_THAT(Values<float>((*grads)[0]), ElementsAreArray(dx));
  EXPECT_THAT(Values<float>((*grads)[1]), ElementsAreArray(dy));
}

}  // namespace
}  // namespace scopeflow
