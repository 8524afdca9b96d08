// matmul and matmul_grad of rank 3 and up (BatchedGemm's products) against
// a loop over plain indices, over broadcast batch shapes and transpose
// flags; their errors.
#include <cmath>
#include <string>
#include <vector>

#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

std::string MatmulOp(const std::string& type, bool tx, bool ty, float alpha) {
  std::string op = "type: \"" + type +
                   "\" inputs { slot: \"X\" vars: \"x\" } "
                   "inputs { slot: \"Y\" vars: \"y\" } ";
  if (type == "matmul") {
    op += "outputs { slot: \"Out\" vars: \"out\" } ";
  } else {
    op +=
        "inputs { slot: \"Out@GRAD\" vars: \"g\" } "
        "outputs { slot: \"X@GRAD\" vars: \"dx\" } "
        "outputs { slot: \"Y@GRAD\" vars: \"dy\" } ";
  }
  return op + "attrs { name: \"transpose_x\" b: " + (tx ? "true" : "false") +
         " } attrs { name: \"transpose_y\" b: " + (ty ? "true" : "false") +
         " } attrs { name: \"alpha\" f: " + std::to_string(alpha) + " }";
}

// Row-major index of `index` in `dims`.
int64_t Flat(const Dims& dims, const std::vector<int64_t>& index) {
  int64_t flat = 0;
  for (size_t d = 0; d < dims.size(); ++d) flat = flat * dims[d] + index[d];
  return flat;
}

// The element of operand `dims` that op(operand)[batch, r, c] is: batch
// dims aligned from the right, a dim of 1 taking index 0.
int64_t At(const Dims& dims, bool transpose, const std::vector<int64_t>& batch,
           int64_t r, int64_t c) {
  const size_t rank = dims.size();
  std::vector<int64_t> index(rank);
  const size_t lead = batch.size() - (rank - 2);
  for (size_t d = 0; d + 2 < rank; ++d) {
    index[d] = dims[d] == 1 ? 0 : batch[lead + d];
  }
  index[rank - 2] = transpose ? c : r;
  index[rank - 1] = transpose ? r : c;
  return Flat(dims, index);
}

// Out = alpha * op(X) op(Y) and, for Out's gradient g, the gradients of X
// and Y, by one loop over every multiply-add: each adds to Out and to the
// two gradients.
struct Expected {
  Dims out;
  std::vector<double> product, dx, dy;
};

Expected Reference(const Dims& x_dims, const std::vector<double>& x,
                   const Dims& y_dims, const std::vector<double>& y, bool tx,
                   bool ty, double alpha, const std::vector<double>* g) {
  const int64_t m = tx ? x_dims.back() : x_dims[x_dims.size() - 2];
  const int64_t k = tx ? x_dims[x_dims.size() - 2] : x_dims.back();
  const int64_t n = ty ? y_dims[y_dims.size() - 2] : y_dims.back();
  const size_t batch_rank = std::max(x_dims.size(), y_dims.size()) - 2;
  Expected e;
  for (size_t d = 0; d < batch_rank; ++d) {
    // Dim d of the batch, counted from the left of the longer one.
    auto dim = [&](const Dims& dims) -> int64_t {
      const int64_t lead = batch_rank - (dims.size() - 2);
      return static_cast<int64_t>(d) < lead ? 1 : dims[d - lead];
    };
    e.out.push_back(std::max(dim(x_dims), dim(y_dims)));
  }
  const int64_t batches = NumElements(e.out);
  e.out.push_back(m);
  e.out.push_back(n);
  e.product.assign(NumElements(e.out), 0.0);
  e.dx.assign(x.size(), 0.0);
  e.dy.assign(y.size(), 0.0);
  std::vector<int64_t> batch(batch_rank);
  for (int64_t b = 0; b < batches; ++b) {
    int64_t rest = b;
    for (size_t d = batch_rank; d-- > 0;) {
      batch[d] = rest % e.out[d];
      rest /= e.out[d];
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const int64_t o = (b * m + i) * n + j;
        for (int64_t p = 0; p < k; ++p) {
          const int64_t xi = At(x_dims, tx, batch, i, p);
          const int64_t yi = At(y_dims, ty, batch, p, j);
          e.product[o] += alpha * x[xi] * y[yi];
          if (g != nullptr) {
            e.dx[xi] += alpha * (*g)[o] * y[yi];
            e.dy[yi] += alpha * (*g)[o] * x[xi];
          }
        }
      }
    }
  }
  return e;
}

std::vector<float> Floats(const std::vector<double>& values) {
  return std::vector<float>(values.begin(), values.end());
}

void ExpectNear(const std::vector<float>& actual,
                const std::vector<double>& expected, double tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    ASSERT_NEAR(actual[i], expected[i], tolerance) << "element " << i;
  }
}

struct Shapes {
  Dims x, y;  // X as [.., m, k], Y as [.., k, n], before transposes
};

// Batch dims equal, a 1 against N either way, rank 3 against rank 4 (and
// 4 against 3), rank 2 against rank 4, both broadcast at once, and an
// attention-sized head batch.
std::vector<Shapes> ShapeCases() {
  return {{{2, 3, 4, 5}, {2, 3, 5, 6}}, {{1, 3, 4, 5}, {2, 3, 5, 6}},
          {{2, 3, 4, 5}, {2, 1, 5, 6}}, {{3, 4, 5}, {2, 3, 5, 6}},
          {{2, 3, 4, 5}, {3, 5, 6}},    {{4, 5}, {2, 3, 5, 6}},
          {{2, 1, 4, 5}, {3, 5, 6}},    {{1, 4, 5}, {3, 5, 6}},
          {{2, 2, 32, 16}, {2, 2, 16, 32}}};
}

// `dims` of a stored operand: its last two swapped when `transpose`.
Dims Stored(Dims dims, bool transpose) {
  if (transpose) std::swap(dims[dims.size() - 1], dims[dims.size() - 2]);
  return dims;
}

TEST(MatmulBatchedTest, ForwardAndGradientMatchTheReference) {
  uint32_t seed = 11;
  for (const Shapes& shapes : ShapeCases()) {
    for (int flags = 0; flags < 4; ++flags) {
      const bool tx = flags & 1, ty = flags & 2;
      const Dims x_dims = Stored(shapes.x, tx), y_dims = Stored(shapes.y, ty);
      SCOPED_TRACE("X " + DimsToString(x_dims) + (tx ? "^T" : "") + ", Y " +
                   DimsToString(y_dims) + (ty ? "^T" : ""));
      const float alpha = flags == 3 ? 0.5f : 1.0f;
      const std::vector<double> x = RandomValues(NumElements(x_dims), seed++);
      const std::vector<double> y = RandomValues(NumElements(y_dims), seed++);
      const Expected forward =
          Reference(x_dims, x, y_dims, y, tx, ty, alpha, nullptr);
      const std::vector<double> g =
          RandomValues(NumElements(forward.out), seed++);
      const Expected e = Reference(x_dims, x, y_dims, y, tx, ty, alpha, &g);
      const int64_t k = shapes.x.back();
      const double tolerance = 1e-5 * (1 + k);

      auto out32 = RunOp(MatmulOp("matmul", tx, ty, alpha),
                         {{"x", MakeTensor<float>(x_dims, Floats(x))},
                          {"y", MakeTensor<float>(y_dims, Floats(y))}},
                         {"out"});
      ASSERT_TRUE(out32.ok()) << out32.status();
      EXPECT_THAT((*out32)[0].dims(), ElementsAreArray(e.out));
      ExpectNear(Values<float>((*out32)[0]), e.product, tolerance);
      auto out64 = RunOp(MatmulOp("matmul", tx, ty, alpha),
                         {{"x", MakeTensor<double>(x_dims, x)},
                          {"y", MakeTensor<double>(y_dims, y)}},
                         {"out"});
      ASSERT_TRUE(out64.ok()) << out64.status();
      EXPECT_THAT(Values<double>((*out64)[0]),
                  testing::Pointwise(testing::DoubleNear(1e-12), e.product));

      // Gradients reduce over the batches an input was broadcast to: the
      // tolerance grows with the terms of each sum.
      const double grad_tolerance =
          1e-5 * (1 + NumElements(e.out) / e.out.back());
      auto grads = RunOp(MatmulOp("matmul_grad", tx, ty, alpha),
                         {{"x", MakeTensor<float>(x_dims, Floats(x))},
                          {"y", MakeTensor<float>(y_dims, Floats(y))},
                          {"g", MakeTensor<float>(e.out, Floats(g))}},
                         {"dx", "dy"});
      ASSERT_TRUE(grads.ok()) << grads.status();
      EXPECT_THAT((*grads)[0].dims(), ElementsAreArray(x_dims));
      EXPECT_THAT((*grads)[1].dims(), ElementsAreArray(y_dims));
      ExpectNear(Values<float>((*grads)[0]), e.dx, grad_tolerance);
      ExpectNear(Values<float>((*grads)[1]), e.dy, grad_tolerance);
      auto grads64 = RunOp(MatmulOp("matmul_grad", tx, ty, alpha),
                           {{"x", MakeTensor<double>(x_dims, x)},
                            {"y", MakeTensor<double>(y_dims, y)},
                            {"g", MakeTensor<double>(e.out, g)}},
                           {"dx", "dy"});
      ASSERT_TRUE(grads64.ok()) << grads64.status();
      EXPECT_THAT(Values<double>((*grads64)[0]),
                  testing::Pointwise(testing::DoubleNear(1e-12), e.dx));
      EXPECT_THAT(Values<double>((*grads64)[1]),
                  testing::Pointwise(testing::DoubleNear(1e-12), e.dy));
    }
  }
}

TEST(MatmulBatchedTest, OneGradientAlone) {
  // Only X@GRAD asked for, of an X broadcast over Y's batch.
  const Dims x_dims = {1, 2, 3}, y_dims = {4, 3, 2};
  const std::vector<double> x = RandomValues(6, 1), y = RandomValues(24, 2);
  const std::vector<double> g = RandomValues(16, 3);
  const Expected e = Reference(x_dims, x, y_dims, y, false, false, 1.0, &g);
  const std::string op =
      "type: \"matmul_grad\" inputs { slot: \"X\" vars: \"x\" } "
      "inputs { slot: \"Y\" vars: \"y\" } inputs { slot: \"Out@GRAD\" vars: "
      "\"g\" } outputs { slot: \"X@GRAD\" vars: \"dx\" }";
  auto dx = RunOp(op,
                  {{"x", MakeTensor<float>(x_dims, Floats(x))},
                   {"y", MakeTensor<float>(y_dims, Floats(y))},
                   {"g", MakeTensor<float>(e.out, Floats(g))}},
                  {"dx"});
  ASSERT_TRUE(dx.ok()) << dx.status();
  ExpectNear(Values<float>((*dx)[0]), e.dx, 1e-5);
}

TEST(MatmulBatchedTest, ErrorsNameTheOpAndTheVariables) {
  const std::string matmul = MatmulOp("matmul", false, false, 1.0f);
  const Tensor x = MakeTensor<float>({2, 3, 4, 5}, std::vector<float>(120));
  const Tensor y = MakeTensor<float>({2, 3, 6, 7}, std::vector<float>(252));
  EXPECT_THAT(PrepareOp(matmul, {{"x", x}, {"y", y}}).message(),
              HasSubstr("op 0 (matmul): inner dimensions differ: \"X\" "
                        "(variable \"x\") [2, 3, 4, 5] gives 5, \"Y\" "
                        "(variable \"y\") [2, 3, 6, 7] gives 6"));
  // With transpose_y, Y [.., 7, 5] gives k = 5: the same dims agree.
  const Tensor yt = MakeTensor<float>({3, 7, 5}, std::vector<float>(105));
  EXPECT_TRUE(PrepareOp(MatmulOp("matmul", false, true, 1.0f),
                        {{"x", x}, {"y", yt}})
                  .ok());
  EXPECT_THAT(PrepareOp(MatmulOp("matmul", true, false, 1.0f),
                        {{"x", x}, {"y", yt}})
                  .message(),
              HasSubstr("inner dimensions differ: \"X\" (variable \"x\") "
                        "[2, 3, 4, 5] gives 4"));
  const Tensor y_batch = MakeTensor<float>({4, 5, 2}, std::vector<float>(40));
  EXPECT_THAT(PrepareOp(matmul, {{"x", x}, {"y", y_batch}}).message(),
              HasSubstr("op 0 (matmul): batch dimensions of \"x\" and \"y\""));
  const Tensor g = MakeTensor<float>({2, 3, 4, 6}, std::vector<float>(144));
  const Tensor y_ok = MakeTensor<float>({3, 5, 7}, std::vector<float>(105));
  EXPECT_THAT(PrepareOp(MatmulOp("matmul_grad", false, false, 1.0f),
                        {{"x", x}, {"y", y_ok}, {"g", g}})
                  .message(),
              HasSubstr("op 0 (matmul_grad): input \"Out@GRAD\" (variable "
                        "\"g\") is float32 [2, 3, 4, 6]: expected float32 "
                        "[2, 3, 4, 7]"));
}

}  // namespace
}  // namespace scopeflow
