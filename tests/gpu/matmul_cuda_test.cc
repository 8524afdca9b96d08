// CUDA kernels of matmul, matmul_grad, fc (with and without its fused relu)
// and fc_grad against their CPU kernels, over every transpose flag, the
// batch broadcasting patterns (each way of running the batch on cuBLAS),
// empty and large shapes.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "framework/cuda_test_util.h"
#include "framework/tensor.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

// Each element is a sum of `terms` products of values in [-1, 1]. The CPU
// and cuBLAS add them in different orders (blocking, split-K), each order
// rounding up to `terms` times: the results differ by a few terms * eps
// times magnitudes below `terms`. So rtol and atol both grow with the
// terms, e.g. 4.9e-4 for float32 sums of 1024 products; an index error or
// a lost term is off by far more.
double Tolerance(DataType dtype, int64_t terms) {
  const double eps = dtype == kFloat32 ? 0x1p-23 : 0x1p-52;
  return 4 * eps * static_cast<double>(std::max<int64_t>(terms, 1));
}

const char* Bool(bool value) { return value ? "true" : "false"; }

std::string MatmulAttrs(bool tx, bool ty, float alpha) {
  return absl::StrCat(" attrs { name: \"transpose_x\" b: ", Bool(tx),
                      " } attrs { name: \"transpose_y\" b: ", Bool(ty),
                      " } attrs { name: \"alpha\" f: ", alpha, " }");
}

std::string MatmulOp(bool tx, bool ty, float alpha) {
  return absl::StrCat(
      "type: \"matmul\" inputs { slot: \"X\" vars: \"x\" } inputs { slot: "
      "\"Y\" vars: \"y\" } outputs { slot: \"Out\" vars: \"out\" }",
      MatmulAttrs(tx, ty, alpha));
}

// matmul_grad writing the gradients of the inputs in `outputs` ("X", "Y")
// to dx and dy.
std::string MatmulGradOp(bool tx, bool ty, float alpha,
                         const std::vector<std::string>& outputs) {
  std::string op = absl::StrCat(
      "type: \"matmul_grad\" inputs { slot: \"X\" vars: \"x\" } inputs { "
      "slot: \"Y\" vars: \"y\" } inputs { slot: \"Out@GRAD\" vars: \"g\" }",
      MatmulAttrs(tx, ty, alpha));
  for (const std::string& slot : outputs) {
    absl::StrAppend(&op, " outputs { slot: \"", slot, "@GRAD\" vars: \"",
                    slot == "X" ? "dx" : "dy", "\" }");
  }
  return op;
}

// Logical sizes of a product: op(X) [x_batch..., m, k] times op(Y)
// [y_batch..., k, n].
struct MatmulCase {
  Dims x_batch, y_batch;
  int64_t m, k, n;

  Dims X(bool tx) const { return With(x_batch, tx ? k : m, tx ? m : k); }
  Dims Y(bool ty) const { return With(y_batch, ty ? n : k, ty ? k : n); }
  // Out: the batch dims broadcast, as numpy does.
  Dims Out() const {
    const Dims& longer = x_batch.size() >= y_batch.size() ? x_batch : y_batch;
    const Dims& shorter = x_batch.size() >= y_batch.size() ? y_batch : x_batch;
    Dims out = longer;
    const size_t lead = longer.size() - shorter.size();
    for (size_t d = 0; d < shorter.size(); ++d) {
      if (out[lead + d] == 1) out[lead + d] = shorter[d];
    }
    return With(out, m, n);
  }

 private:
  static Dims With(Dims batch, int64_t rows, int64_t cols) {
    batch.push_back(rows);
    batch.push_back(cols);
    return batch;
  }
};

std::string Describe(const MatmulCase& c, bool tx, bool ty) {
  return absl::StrCat("X ", DimsToString(c.X(tx)), " Y ", DimsToString(c.Y(ty)),
                      " tx ", tx, " ty ", ty);
}

// Every way matmul meets cuBLAS: one product, the batch folded into the
// rows, strided batches (one side broadcast or none), address arrays
// (batch dims broadcast both ways), and empty dims.
const std::vector<MatmulCase>& Cases() {
  static const auto* cases = new std::vector<MatmulCase>{
      {{}, {}, 1, 1, 1},         {{}, {}, 3, 5, 7},
      {{}, {}, 65, 1024, 33},    {{4}, {}, 3, 5, 2},
      {{}, {4}, 3, 5, 2},        {{4}, {4}, 3, 5, 2},
      {{2, 1}, {1, 3}, 3, 4, 5}, {{2, 3}, {3}, 4, 6, 5},
      {{3}, {2, 3}, 4, 6, 5},    {{4, 1}, {1}, 3, 5, 2},
      {{1}, {}, 3, 5, 2},        {{2, 1, 3}, {4, 1}, 2, 3, 2},
      {{0}, {}, 3, 5, 2},        {{}, {}, 3, 0, 4},
      {{2}, {2}, 3, 0, 4},       {{}, {}, 0, 5, 4},
      {{2}, {}, 3, 5, 0},        {{2, 1}, {1, 3}, 0, 4, 5},
  };
  return *cases;
}

TEST(MatmulCudaTest, MatchesCpu) {
  SF_REQUIRE_CUDA();
  for (DataType dtype : {kFloat32, kFloat64}) {
    for (const MatmulCase& c : Cases()) {
      for (bool tx : {false, true}) {
        for (bool ty : {false, true}) {
          SCOPED_TRACE(Describe(c, tx, ty));
          const double tol = Tolerance(dtype, c.k);
          EXPECT_TRUE(MatchesOnCuda(MatmulOp(tx, ty, tx ? -0.5f : 1.0f),
                                    {{"x", RandomTensor(dtype, c.X(tx), 1)},
                                     {"y", RandomTensor(dtype, c.Y(ty), 2)}},
                                    {"out"}, tol, tol));
        }
      }
    }
  }
}

TEST(MatmulCudaTest, GradMatchesCpu) {
  SF_REQUIRE_CUDA();
  for (DataType dtype : {kFloat32, kFloat64}) {
    for (const MatmulCase& c : Cases()) {
      for (bool tx : {false, true}) {
        for (bool ty : {false, true}) {
          SCOPED_TRACE(Describe(c, tx, ty));
          const double tol = Tolerance(
              dtype, std::max({c.m, c.n, c.k}) * NumElements(c.Out()) /
                         std::max<int64_t>(1, c.m * c.n));
          const std::vector<Feed> feeds = {
              {"x", RandomTensor(dtype, c.X(tx), 1)},
              {"y", RandomTensor(dtype, c.Y(ty), 2)},
              {"g", RandomTensor(dtype, c.Out(), 3)}};
          const float alpha = ty ? 2.0f : 1.0f;
          EXPECT_TRUE(MatchesOnCuda(MatmulGradOp(tx, ty, alpha, {"X", "Y"}),
                                    feeds, {"dx", "dy"}, tol, tol));
          EXPECT_TRUE(MatchesOnCuda(MatmulGradOp(tx, ty, alpha, {"X"}), feeds,
                                    {"dx"}, tol, tol));
          EXPECT_TRUE(MatchesOnCuda(MatmulGradOp(tx, ty, alpha, {"Y"}), feeds,
                                    {"dy"}, tol, tol));
        }
      }
    }
  }
}

// Past 65535 blocks of 256 threads: more outputs than one pass of the grid.
TEST(MatmulCudaTest, LargeMatchesCpu) {
  SF_REQUIRE_CUDA();
  const MatmulCase c{{}, {}, 4100, 8, 4100};
  for (DataType dtype : {kFloat32, kFloat64}) {
    const double tol = Tolerance(dtype, c.k);
    EXPECT_TRUE(MatchesOnCuda(MatmulOp(false, false, 1.0f),
                              {{"x", RandomTensor(dtype, c.X(false), 1)},
                               {"y", RandomTensor(dtype, c.Y(false), 2)}},
                              {"out"}, tol, tol));
  }
}

// A broadcast Y's gradient sums the batches' products: packed in scratch
// memory and added up in several passes (2000 x 2000), or added by cuBLAS
// one batch after the other where one product fills the scratch memory
// (3000 x 3000).
TEST(MatmulCudaTest, BroadcastGradSumsInParts) {
  SF_REQUIRE_CUDA();
  for (const MatmulCase& c : {MatmulCase{{10}, {}, 1, 2000, 2000},
                              MatmulCase{{2}, {}, 2, 3000, 3000}}) {
    for (DataType dtype : {kFloat32, kFloat64}) {
      SCOPED_TRACE(Describe(c, true, false));
      // tx keeps the CPU kernel from folding the batch into one product.
      const double tol = Tolerance(dtype, c.x_batch[0] * c.m);
      EXPECT_TRUE(MatchesOnCuda(MatmulGradOp(true, false, 1.0f, {"Y"}),
                                {{"x", RandomTensor(dtype, c.X(true), 1)},
                                 {"y", RandomTensor(dtype, c.Y(false), 2)},
                                 {"g", RandomTensor(dtype, c.Out(), 3)}},
                                {"dy"}, tol, tol));
    }
  }
}

std::string FcOp(bool bias, int in_num_col_dims) {
  return absl::StrCat(
      "type: \"fc\" inputs { slot: \"X\" vars: \"x\" } inputs { slot: \"W\" "
      "vars: \"w\" } ",
      bias ? "inputs { slot: \"Bias\" vars: \"b\" } " : "",
      "outputs { slot: \"Out\" vars: \"out\" } attrs { name: "
      "\"in_num_col_dims\" i: ",
      in_num_col_dims, " }");
}

std::string FcReluOp(bool bias, int in_num_col_dims) {
  return absl::StrCat(FcOp(bias, in_num_col_dims),
                      " attrs { name: \"activation_type\" s: \"relu\" }");
}

// fc_grad writing the gradients of the inputs in `outputs` ("X", "W",
// "Bias") to dx, dw and db.
std::string FcGradOp(bool bias, int in_num_col_dims,
                     const std::vector<std::string>& outputs) {
  std::string op = absl::StrCat(
      "type: \"fc_grad\" inputs { slot: \"X\" vars: \"x\" } inputs { slot: "
      "\"W\" vars: \"w\" } ",
      bias ? "inputs { slot: \"Bias\" vars: \"b\" } " : "",
      "inputs { slot: \"Out@GRAD\" vars: \"g\" } attrs { name: "
      "\"in_num_col_dims\" i: ",
      in_num_col_dims, " }");
  for (const std::string& slot : outputs) {
    const std::string var = slot == "X" ? "dx" : (slot == "W" ? "dw" : "db");
    absl::StrAppend(&op, " outputs { slot: \"", slot, "@GRAD\" vars: \"", var,
                    "\" }");
  }
  return op;
}

struct FcCase {
  Dims x;
  int in_num_col_dims;
  int64_t n;
  Dims bias;  // empty: no bias
};

// X's rows, features per row, and Out's dims.
int64_t Rows(const FcCase& c) {
  return NumElements(absl::MakeConstSpan(c.x).first(c.in_num_col_dims));
}
int64_t Features(const FcCase& c) {
  return NumElements(absl::MakeConstSpan(c.x).subspan(c.in_num_col_dims));
}
Dims FcOut(const FcCase& c) {
  Dims out(c.x.begin(), c.x.begin() + c.in_num_col_dims);
  out.push_back(c.n);
  return out;
}

const std::vector<FcCase>& FcCases() {
  static const auto* cases = new std::vector<FcCase>{
      {{1, 1}, 1, 1, {1}},
      {{5, 7}, 1, 3, {3}},
      {{5, 7}, 1, 3, {}},
      {{2, 3, 4}, 1, 6, {1, 6}},
      {{2, 3, 4}, 2, 6, {6}},
      {{33, 1024}, 1, 65, {65}},
      {{0, 5}, 1, 4, {4}},
      {{3, 0}, 1, 4, {4}},
      {{3, 0}, 1, 4, {}},
      // Past 65535 blocks of 256 threads (the bias rows), and a long column
      // sum for the bias gradient.
      {{70000, 8}, 1, 256, {256}},
  };
  return *cases;
}

std::vector<Feed> FcFeeds(DataType dtype, const FcCase& c, bool grad) {
  std::vector<Feed> feeds = {{"x", RandomTensor(dtype, c.x, 1)},
                             {"w", RandomTensor(dtype, {Features(c), c.n}, 2)}};
  if (!c.bias.empty()) feeds.push_back({"b", RandomTensor(dtype, c.bias, 3)});
  if (grad) feeds.push_back({"g", RandomTensor(dtype, FcOut(c), 4)});
  return feeds;
}

TEST(FcCudaTest, MatchesCpu) {
  SF_REQUIRE_CUDA();
  for (DataType dtype : {kFloat32, kFloat64}) {
    for (const FcCase& c : FcCases()) {
      SCOPED_TRACE(absl::StrCat("X ", DimsToString(c.x), " n ", c.n));
      const double tol = Tolerance(dtype, Features(c) + 1);
      EXPECT_TRUE(MatchesOnCuda(FcOp(!c.bias.empty(), c.in_num_col_dims),
                                FcFeeds(dtype, c, false), {"out"}, tol, tol));
    }
  }
}

// The product, then relu in place: every case of MatchesCpu, where about
// half the outputs are negative, and NaN, which relu keeps.
TEST(FcCudaTest, FusedReluMatchesCpu) {
  SF_REQUIRE_CUDA();
  for (DataType dtype : {kFloat32, kFloat64}) {
    for (const FcCase& c : FcCases()) {
      SCOPED_TRACE(absl::StrCat("X ", DimsToString(c.x), " n ", c.n));
      const double tol = Tolerance(dtype, Features(c) + 1);
      EXPECT_TRUE(MatchesOnCuda(FcReluOp(!c.bias.empty(), c.in_num_col_dims),
                                FcFeeds(dtype, c, false), {"out"}, tol, tol));
    }
  }
  // A NaN in X spoils its row, one in Bias its column.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (DataType dtype : {kFloat32, kFloat64}) {
    Tensor x = RandomTensor(dtype, {4, 3}, 1);
    Tensor b = RandomTensor(dtype, {5}, 3);
    if (dtype == kFloat32) {
      x.data<float>()[4] = static_cast<float>(nan);
      b.data<float>()[2] = static_cast<float>(nan);
    } else {
      x.data<double>()[4] = nan;
      b.data<double>()[2] = nan;
    }
    EXPECT_TRUE(MatchesOnCuda(
        FcReluOp(true, 1),
        {{"x", x}, {"w", RandomTensor(dtype, {3, 5}, 2)}, {"b", b}}, {"out"},
        Tolerance(dtype, 4), Tolerance(dtype, 4)));
  }
}

TEST(FcCudaTest, GradMatchesCpu) {
  SF_REQUIRE_CUDA();
  for (DataType dtype : {kFloat32, kFloat64}) {
    for (const FcCase& c : FcCases()) {
      SCOPED_TRACE(absl::StrCat("X ", DimsToString(c.x), " n ", c.n));
      const bool bias = !c.bias.empty();
      // dX sums over n, dW and dBias over the rows.
      const double tol =
          Tolerance(dtype, std::max({Rows(c), c.n, Features(c)}));
      const std::vector<Feed> feeds = FcFeeds(dtype, c, true);
      std::vector<std::string> all = {"X", "W"};
      std::vector<std::string> fetches = {"dx", "dw"};
      if (bias) {
        all.push_back("Bias");
        fetches.push_back("db");
      }
      EXPECT_TRUE(MatchesOnCuda(FcGradOp(bias, c.in_num_col_dims, all), feeds,
                                fetches, tol, tol));
      for (size_t i = 0; i < all.size(); ++i) {
        EXPECT_TRUE(MatchesOnCuda(FcGradOp(bias, c.in_num_col_dims, {all[i]}),
                                  feeds, {fetches[i]}, tol, tol));
      }
    }
  }
}

}  // namespace
}  // namespace scopeflow
