#include <random>
#include <string>
#include <vector>

#include "framework/grad_check.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

constexpr char kMatmul[] = R"pb(type: "matmul"
                                inputs { slot: "X" vars: "x" }
                                inputs { slot: "Y" vars: "y" }
                                outputs { slot: "Out" vars: "out" })pb";

std::string MatmulWith(const std::string& attrs) {
  return std::string(kMatmul) + attrs;
}

TEST(MatmulTest, HandComputed) {
  // [[1 2 3] [4 5 6]] x [[7 8] [9 10] [11 12]] = [[58 64] [139 154]]
  Tensor x = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor y = MakeTensor<float>({3, 2}, {7, 8, 9, 10, 11, 12});
  auto out = RunOp(kMatmul, {{"x", x}, {"y", y}}, {"out"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 2));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(58, 64, 139, 154));
}

TEST(MatmulTest, TransposeFlagsAndAlpha) {
  // X^T with X = [[1 4] [2 5] [3 6]], Y^T with Y = [[7 9 11] [8 10 12]].
  Tensor x = MakeTensor<float>({3, 2}, {1, 4, 2, 5, 3, 6});
  Tensor y = MakeTensor<float>({2, 3}, {7, 9, 11, 8, 10, 12});
  auto out = RunOp(MatmulWith(R"pb(attrs { name: "transpose_x" b: true }
                                   attrs { name: "transpose_y" b: true }
                                   attrs { name: "alpha" f: 0.5 })pb"),
                   {{"x", x}, {"y", y}}, {"out"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(29, 32, 69.5, 77));
}

// A loop over plain indices, the independent reference.
std::vector<double> Reference(const std::vector<double>& x,
                              const std::vector<double>& y, int batches_x,
                              int batches_y, int m, int k, int n) {
  const int batches = std::max(batches_x, batches_y);
  std::vector<double> out(batches * m * n, 0.0);
  for (int b = 0; b < batches; ++b) {
    const int bx = batches_x == 1 ? 0 : b, by = batches_y == 1 ? 0 : b;
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < n; ++j) {
        for (int p = 0; p < k; ++p) {
          out[(b * m + i) * n + j] +=
              x[(bx * m + i) * k + p] * y[(by * k + p) * n + j];
        }
      }
    }
  }
  return out;
}

TEST(MatmulTest, BatchesBroadcastInFloat32AndFloat64) {
  std::mt19937 engine(5);
  std::uniform_real_distribution<double> dist(-1, 1);
  struct Case {
    Dims x, y;
    int bx, by;
  };
  for (const Case& c :
       {Case{{4, 3, 5}, {5, 2}, 4, 1}, Case{{3, 5}, {4, 5, 2}, 1, 4},
        Case{{4, 3, 5}, {4, 5, 2}, 4, 4},
        Case{{4, 1, 3, 5}, {1, 1, 5, 2}, 4, 1}}) {
    std::vector<double> xv(NumElements(c.x)), yv(NumElements(c.y));
    for (double& v : xv) v = dist(engine);
    for (double& v : yv) v = dist(engine);
    const std::vector<double> expected = Reference(xv, yv, c.bx, c.by, 3, 5, 2);
    auto out64 = RunOp(kMatmul,
                       {{"x", MakeTensor<double>(c.x, xv)},
                        {"y", MakeTensor<double>(c.y, yv)}},
                       {"out"});
    ASSERT_TRUE(out64.ok()) << out64.status();
    EXPECT_EQ((*out64)[0].numel(), static_cast<int64_t>(expected.size()));
    EXPECT_THAT(Values<double>((*out64)[0]),
                Pointwise(DoubleNear(1e-12), expected));
    std::vector<float> xf(xv.begin(), xv.end()), yf(yv.begin(), yv.end());
    auto out32 = RunOp(
        kMatmul,
        {{"x", MakeTensor<float>(c.x, xf)}, {"y", MakeTensor<float>(c.y, yf)}},
        {"out"});
    ASSERT_TRUE(out32.ok()) << out32.status();
    std::vector<float> expected32(expected.begin(), expected.end());
    EXPECT_THAT(Values<float>((*out32)[0]),
                Pointwise(FloatNear(1e-5), expected32));
  }
}

TEST(MatmulTest, Errors) {
  Tensor x = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor y = MakeTensor<float>({2, 2}, {1, 2, 3, 4});
  absl::Status inner = PrepareOp(kMatmul, {{"x", x}, {"y", y}});
  EXPECT_THAT(inner.message(),
              HasSubstr("op 0 (matmul): inner dimensions differ: "
                        "\"X\" (variable \"x\") [2, 3] gives 3"));
  Tensor y64 = MakeTensor<double>({3, 2}, {1, 2, 3, 4, 5, 6});
  EXPECT_THAT(PrepareOp(kMatmul, {{"x", x}, {"y", y64}}).message(),
              HasSubstr("must have one dtype"));
  Tensor v = MakeTensor<float>({3}, {1, 2, 3});
  EXPECT_THAT(
      PrepareOp(kMatmul, {{"x", v}, {"y", y}}).message(),
      HasSubstr("\"X\" (variable \"x\") has shape [3]: expected rank 2 to 8"));
  Tensor xb = MakeTensor<float>({2, 2, 3}, std::vector<float>(12, 1));
  Tensor yb = MakeTensor<float>({3, 3, 2}, std::vector<float>(18, 1));
  EXPECT_THAT(PrepareOp(kMatmul, {{"x", xb}, {"y", yb}}).message(),
              HasSubstr("do not broadcast"));
  Tensor xi = MakeTensor<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor yi = MakeTensor<int32_t>({3, 2}, {1, 2, 3, 4, 5, 6});
  EXPECT_THAT(PrepareOp(kMatmul, {{"x", xi}, {"y", yi}}).message(),
              HasSubstr("no kernel for dtype int32 on cpu"));
}

constexpr char kFc[] = R"pb(type: "fc"
                            inputs { slot: "X" vars: "x" }
                            inputs { slot: "W" vars: "w" }
                            inputs { slot: "Bias" vars: "b" }
                            outputs { slot: "Out" vars: "out" })pb";

TEST(FcTest, AddsTheBiasToEveryRow) {
  Tensor x = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor w = MakeTensor<float>({3, 2}, {7, 8, 9, 10, 11, 12});
  Tensor b = MakeTensor<float>({2}, {0.5, -1});
  auto out = RunOp(kFc, {{"x", x}, {"w", w}, {"b", b}}, {"out"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(58.5, 63, 139.5, 153));
}

TEST(FcTest, FlattensTrailingDimsAndBiasIsOptional) {
  Tensor x = MakeTensor<double>({2, 1, 3}, {1, 2, 3, 4, 5, 6});
  Tensor w = MakeTensor<double>({3, 2}, {7, 8, 9, 10, 11, 12});
  auto out = RunOp(R"pb(type: "fc"
                        inputs { slot: "X" vars: "x" }
                        inputs { slot: "W" vars: "w" }
                        outputs { slot: "Out" vars: "out" })pb",
                   {{"x", x}, {"w", w}}, {"out"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 2));
  EXPECT_THAT(Values<double>((*out)[0]), ElementsAre(58, 64, 139, 154));

  auto kept = RunOp(R"pb(type: "fc"
                         inputs { slot: "X" vars: "x" }
                         inputs { slot: "W" vars: "w" }
                         outputs { slot: "Out" vars: "out" }
                         attrs { name: "in_num_col_dims" i: 2 })pb",
                    {{"x", x}, {"w", w}}, {"out"});
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_THAT((*kept)[0].dims(), ElementsAre(2, 1, 2));
}

TEST(FcTest, Errors) {
  Tensor x = MakeTensor<float>({2, 4}, std::vector<float>(8, 1));
  Tensor w = MakeTensor<float>({3, 2}, std::vector<float>(6, 1));
  Tensor b = MakeTensor<float>({2}, {0, 0});
  EXPECT_THAT(
      PrepareOp(kFc, {{"x", x}, {"w", w}, {"b", b}}).message(),
      HasSubstr("op 0 (fc): \"X\" (variable \"x\") [2, 4] has 4 features "
                "per row but \"W\" (variable \"w\") [3, 2] expects 3"));
  Tensor x3 = MakeTensor<float>({2, 3}, std::vector<float>(6, 1));
  Tensor b3 = MakeTensor<float>({3}, {0, 0, 0});
  EXPECT_THAT(PrepareOp(kFc, {{"x", x3}, {"w", w}, {"b", b3}}).message(),
              HasSubstr("\"Bias\" (variable \"b\") [3] must hold 2 values"));
  EXPECT_THAT(PrepareOp(R"pb(type: "fc"
                             inputs { slot: "X" vars: "x" }
                             outputs { slot: "Out" vars: "out" })pb",
                        {{"x", x3}})
                  .message(),
              HasSubstr("op 0 (fc): missing required input \"W\""));
}

// Gradients: numeric checks in float64 (the blocked double gemm), float32
// (oneDNN sgemm) against float64, and hand-computed values.

std::string BoolAttr(const std::string& name, bool value) {
  return " attrs { name: \"" + name + "\" b: " + (value ? "true" : "false") +
         " }";
}

// X and Y of matmul with transpose flags tx and ty: X holds batch_x
// matrices of [m, k] (stored [k, m] if tx), Y batch_y of [k, n] (stored
// [n, k] if ty).
struct MatmulCase {
  Dims batch_x, batch_y;
  bool tx, ty;
  Dims XDims(int64_t m, int64_t k) const {
    Dims dims = batch_x;
    dims.push_back(tx ? k : m);
    dims.push_back(tx ? m : k);
    return dims;
  }
  Dims YDims(int64_t k, int64_t n) const {
    Dims dims = batch_y;
    dims.push_back(ty ? n : k);
    dims.push_back(ty ? k : n);
    return dims;
  }
  std::string Op(float alpha) const {
    return MatmulWith(
        BoolAttr("transpose_x", tx) + BoolAttr("transpose_y", ty) +
        " attrs { name: \"alpha\" f: " + std::to_string(alpha) + " }");
  }
  std::string Describe() const {
    return "X batch " + DimsToString(batch_x) + ", Y batch " +
           DimsToString(batch_y) + (tx ? ", transpose_x" : "") +
           (ty ? ", transpose_y" : "");
  }
};

// Batch shapes: none, equal, X or Y alone batched (X alone with one matrix
// Y is the folded path), and both broadcast against each other, with
// leading dims only one side has.
std::vector<MatmulCase> MatmulCases() {
  const std::vector<std::pair<Dims, Dims>> batches = {
      {{}, {}},      {{3}, {3}},       {{3}, {}},        {{}, {3}},
      {{2, 1}, {3}}, {{1, 2}, {3, 1}}, {{2, 1, 2}, {1}}, {{1}, {2, 2}},
  };
  std::vector<MatmulCase> cases;
  for (const auto& [bx, by] : batches) {
    for (bool tx : {false, true}) {
      for (bool ty : {false, true}) cases.push_back({bx, by, tx, ty});
    }
  }
  return cases;
}

TEST(MatmulGradTest, NumericForEveryTransposeFlagAndBatchShape) {
  uint32_t seed = 1;
  for (const MatmulCase& c : MatmulCases()) {
    SCOPED_TRACE(c.Describe());
    const Dims x = c.XDims(2, 3), y = c.YDims(3, 4);
    const std::vector<Feed> feeds = {
        {"x", MakeTensor<double>(x, RandomValues(NumElements(x), seed++))},
        {"y", MakeTensor<double>(y, RandomValues(NumElements(y), seed++))}};
    const float alpha = c.tx == c.ty ? 1.0f : -0.5f;
    const absl::Status status =
        CheckGradientTogetherAndAlone(c.Op(alpha), feeds, {"x", "y"});
    EXPECT_TRUE(status.ok()) << status;
  }
}

constexpr char kMatmulGrad[] =
    "type: \"matmul_grad\" inputs { slot: \"X\" vars: \"x\" } inputs { "
    "slot: \"Y\" vars: \"y\" } inputs { slot: \"Out@GRAD\" vars: \"g\" } "
    "outputs { slot: \"X@GRAD\" vars: \"dx\" } outputs { slot: \"Y@GRAD\" "
    "vars: \"dy\" }";

// X@GRAD and Y@GRAD of matmul_grad at x, y and Out@GRAD g.
absl::StatusOr<std::vector<Tensor>> RunMatmulGrad(
    const Tensor& x, const Tensor& y, const Tensor& g,
    const std::string& attrs = "") {
  return RunOp(std::string(kMatmulGrad) + attrs, {{"x", x}, {"y", y}, {"g", g}},
               {"dx", "dy"});
}

TEST(MatmulGradTest, HandComputedFloat32) {
  // X [[1 2 3] [4 5 6]], Y [[7 8] [9 10] [11 12]], dOut [[1 0] [0 2]]:
  // dX = dOut Y^T, dY = X^T dOut.
  const Tensor x = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor y = MakeTensor<float>({3, 2}, {7, 8, 9, 10, 11, 12});
  const Tensor g = MakeTensor<float>({2, 2}, {1, 0, 0, 2});
  auto grads = RunMatmulGrad(x, y, g);
  ASSERT_TRUE(grads.ok()) << grads.status();
  EXPECT_THAT((*grads)[0].dims(), ElementsAre(2, 3));
  EXPECT_THAT(Values<float>((*grads)[0]), ElementsAre(7, 9, 11, 16, 20, 24));
  EXPECT_THAT((*grads)[1].dims(), ElementsAre(3, 2));
  EXPECT_THAT(Values<float>((*grads)[1]), ElementsAre(1, 8, 2, 10, 3, 12));

  // The same product as X^T Y^T of the stored transposes, with alpha 2:
  // each gradient comes back in its input's stored layout.
  const Tensor xt = MakeTensor<float>({3, 2}, {1, 4, 2, 5, 3, 6});
  const Tensor yt = MakeTensor<float>({2, 3}, {7, 9, 11, 8, 10, 12});
  auto transposed = RunMatmulGrad(xt, yt, g,
                                  BoolAttr("transpose_x", true) +
                                      BoolAttr("transpose_y", true) +
                                      " attrs { name: \"alpha\" f: 2 }");
  ASSERT_TRUE(transposed.ok()) << transposed.status();
  EXPECT_THAT((*transposed)[0].dims(), ElementsAre(3, 2));
  EXPECT_THAT(Values<float>((*transposed)[0]),
              ElementsAre(14, 32, 18, 40, 22, 48));
  EXPECT_THAT((*transposed)[1].dims(), ElementsAre(2, 3));
  EXPECT_THAT(Values<float>((*transposed)[1]),
              ElementsAre(2, 4, 6, 16, 20, 24));
}

TEST(MatmulGradTest, BroadcastBatchesSumTheirGradients) {
  // X [2, 1, 2] against one Y [2, 1] (the folded path): dY sums
  // X_b^T dOut_b over both batches.
  auto folded = RunMatmulGrad(MakeTensor<float>({2, 1, 2}, {1, 2, 3, 4}),
                              MakeTensor<float>({2, 1}, {5, 6}),
                              MakeTensor<float>({2, 1, 1}, {1, 1}));
  ASSERT_TRUE(folded.ok()) << folded.status();
  EXPECT_THAT(Values<float>((*folded)[0]), ElementsAre(5, 6, 5, 6));
  EXPECT_THAT((*folded)[1].dims(), ElementsAre(2, 1));
  EXPECT_THAT(Values<float>((*folded)[1]), ElementsAre(4, 6));

  // One X [1, 2] against Y [2, 2, 1]: dX = 1 * [5 6] + 2 * [7 8].
  auto reduced = RunMatmulGrad(MakeTensor<float>({1, 2}, {1, 2}),
                               MakeTensor<float>({2, 2, 1}, {5, 6, 7, 8}),
                               MakeTensor<float>({2, 1, 1}, {1, 2}));
  ASSERT_TRUE(reduced.ok()) << reduced.status();
  EXPECT_THAT((*reduced)[0].dims(), ElementsAre(1, 2));
  EXPECT_THAT(Values<float>((*reduced)[0]), ElementsAre(19, 22));
  EXPECT_THAT(Values<float>((*reduced)[1]), ElementsAre(1, 2, 2, 4));
}

TEST(MatmulGradTest, Float32MatchesFloat64) {
  uint32_t seed = 50;
  for (const MatmulCase& c : MatmulCases()) {
    SCOPED_TRACE(c.Describe());
    const Dims x = c.XDims(3, 5), y = c.YDims(5, 4);
    const std::vector<double> xv = RandomValues(NumElements(x), seed++);
    const std::vector<double> yv = RandomValues(NumElements(y), seed++);
    auto out = RunOp(
        c.Op(1.5f),
        {{"x", MakeTensor<double>(x, xv)}, {"y", MakeTensor<double>(y, yv)}},
        {"out"});
    ASSERT_TRUE(out.ok()) << out.status();
    const Dims out_dims = (*out)[0].dims();
    const std::vector<double> gv = RandomValues(NumElements(out_dims), seed++);
    const std::string attrs = BoolAttr("transpose_x", c.tx) +
                              BoolAttr("transpose_y", c.ty) +
                              " attrs { name: \"alpha\" f: 1.5 }";
    auto grads64 =
        RunMatmulGrad(MakeTensor<double>(x, xv), MakeTensor<double>(y, yv),
                      MakeTensor<double>(out_dims, gv), attrs);
    ASSERT_TRUE(grads64.ok()) << grads64.status();
    auto grads32 = RunMatmulGrad(
        MakeTensor<float>(x, std::vector<float>(xv.begin(), xv.end())),
        MakeTensor<float>(y, std::vector<float>(yv.begin(), yv.end())),
        MakeTensor<float>(out_dims, std::vector<float>(gv.begin(), gv.end())),
        attrs);
    ASSERT_TRUE(grads32.ok()) << grads32.status();
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ((*grads32)[i].dims(), (*grads64)[i].dims());
      const std::vector<double> reference = Values<double>((*grads64)[i]);
      EXPECT_THAT(
          Values<float>((*grads32)[i]),
          Pointwise(FloatNear(1e-5),
                    std::vector<float>(reference.begin(), reference.end())));
    }
  }
}

TEST(MatmulGradTest, EmptyProductsGiveZeroGradients) {
  // n = 0: Out is [2, 0], and X's gradient sums over nothing. Then m = 0
  // for Y's. Zeros in both dtypes, whatever the fresh buffers held.
  auto f32 = RunMatmulGrad(MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}),
                           MakeTensor<float>({3, 0}, {}),
                           MakeTensor<float>({2, 0}, {}));
  ASSERT_TRUE(f32.ok()) << f32.status();
  EXPECT_THAT(Values<float>((*f32)[0]), ElementsAre(0, 0, 0, 0, 0, 0));
  EXPECT_THAT((*f32)[1].dims(), ElementsAre(3, 0));
  auto f64 = RunMatmulGrad(MakeTensor<double>({0, 2}, {}),
                           MakeTensor<double>({2, 3}, {1, 2, 3, 4, 5, 6}),
                           MakeTensor<double>({0, 3}, {}));
  ASSERT_TRUE(f64.ok()) << f64.status();
  EXPECT_THAT((*f64)[0].dims(), ElementsAre(0, 2));
  EXPECT_THAT(Values<double>((*f64)[1]), ElementsAre(0, 0, 0, 0, 0, 0));
}

TEST(MatmulGradTest, OutGradMustMatchTheOutput) {
  auto grads = RunMatmulGrad(MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}),
                             MakeTensor<float>({3, 2}, {1, 2, 3, 4, 5, 6}),
                             MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}));
  ASSERT_FALSE(grads.ok());
  EXPECT_THAT(grads.status().message(),
              HasSubstr("op 0 (matmul_grad): input \"Out@GRAD\" (variable "
                        "\"g\") is float32 [2, 3]: expected float32 [2, 2]"));
}

// fc with x, w and (unless `bias` is empty) b, with in_num_col_dims.
std::string FcOp(bool bias, int in_num_col_dims) {
  return std::string(
             "type: \"fc\" inputs { slot: \"X\" vars: \"x\" } "
             "inputs { slot: \"W\" vars: \"w\" } ") +
         (bias ? "inputs { slot: \"Bias\" vars: \"b\" } " : "") +
         "outputs { slot: \"Out\" vars: \"out\" } attrs { name: "
         "\"in_num_col_dims\" i: " +
         std::to_string(in_num_col_dims) + " }";
}

TEST(FcGradTest, NumericWithAndWithoutBiasAndFlattening) {
  struct Case {
    Dims x, w, bias;  // no bias if empty
    int in_num_col_dims;
  };
  uint32_t seed = 200;
  for (const Case& c :
       {Case{{2, 3}, {3, 4}, {4}, 1}, Case{{2, 3}, {3, 4}, {1, 4}, 1},
        Case{{2, 3}, {3, 4}, {}, 1}, Case{{2, 3, 2}, {6, 3}, {3}, 1},
        Case{{2, 3, 2}, {2, 3}, {3}, 2}, Case{{2, 1, 3, 2}, {6, 2}, {}, 2}}) {
    SCOPED_TRACE(DimsToString(c.x) + " in_num_col_dims " +
                 std::to_string(c.in_num_col_dims));
    std::vector<Feed> feeds = {
        {"x", MakeTensor<double>(c.x, RandomValues(NumElements(c.x), seed++))},
        {"w", MakeTensor<double>(c.w, RandomValues(NumElements(c.w), seed++))}};
    const bool bias = !c.bias.empty();
    if (bias) {
      feeds.push_back(
          {"b", MakeTensor<double>(c.bias,
                                   RandomValues(NumElements(c.bias), seed++))});
    }
    const std::string op = FcOp(bias, c.in_num_col_dims);
    std::vector<std::string> inputs = {"x", "w"};
    if (bias) inputs.push_back("b");
    const absl::Status status =
        CheckGradientTogetherAndAlone(op, feeds, inputs);
    EXPECT_TRUE(status.ok()) << status;
  }
}

constexpr char kFcGrad[] =
    "type: \"fc_grad\" inputs { slot: \"X\" vars: \"x\" } inputs { slot: "
    "\"W\" vars: \"w\" } inputs { slot: \"Bias\" vars: \"b\" } inputs { "
    "slot: \"Out@GRAD\" vars: \"g\" } outputs { slot: \"X@GRAD\" vars: "
    "\"dx\" } outputs { slot: \"W@GRAD\" vars: \"dw\" } outputs { slot: "
    "\"Bias@GRAD\" vars: \"db\" }";

TEST(FcGradTest, HandComputedFloat32) {
  // X [[1 2] [3 4]], W [[1 0 -1] [2 1 0]], dOut [[1 0 1] [0 1 0]]:
  // dX = dOut W^T, dW = X^T dOut, dBias = column sums of dOut.
  auto grads = RunOp(kFcGrad,
                     {{"x", MakeTensor<float>({2, 2}, {1, 2, 3, 4})},
                      {"w", MakeTensor<float>({2, 3}, {1, 0, -1, 2, 1, 0})},
                      {"b", MakeTensor<float>({1, 3}, {0, 0, 0})},
                      {"g", MakeTensor<float>({2, 3}, {1, 0, 1, 0, 1, 0})}},
                     {"dx", "dw", "db"});
  ASSERT_TRUE(grads.ok()) << grads.status();
  EXPECT_THAT(Values<float>((*grads)[0]), ElementsAre(0, 2, 0, 1));
  EXPECT_THAT(Values<float>((*grads)[1]), ElementsAre(1, 3, 1, 2, 4, 2));
  EXPECT_THAT((*grads)[2].dims(), ElementsAre(1, 3));
  EXPECT_THAT(Values<float>((*grads)[2]), ElementsAre(1, 1, 1));
}

TEST(FcGradTest, BiasGradientNeedsTheBias) {
  absl::Status status = PrepareOp(
      "type: \"fc_grad\" inputs { slot: \"X\" vars: \"x\" } inputs { slot: "
      "\"W\" vars: \"w\" } inputs { slot: \"Out@GRAD\" vars: \"g\" } "
      "outputs { slot: \"Bias@GRAD\" vars: \"db\" }",
      {{"x", MakeTensor<float>({2, 2}, {1, 2, 3, 4})},
       {"w", MakeTensor<float>({2, 3}, {1, 0, -1, 2, 1, 0})},
       {"g", MakeTensor<float>({2, 3}, {1, 0, 1, 0, 1, 0})}});
  EXPECT_THAT(status.message(),
              HasSubstr("output \"Bias@GRAD\" (variable \"db\") needs input "
                        "\"Bias\""));
}

// Prepare rejects a declared X of more elements than int64 counts; fc's
// own checks cover inference run without it (a converter's).
TEST(FcTest, ElementCountsBeyondInt64AreErrors) {
  EXPECT_THAT(InferAtPrepare(kFc,
                             {{"x", kFloat32, {2, 4611686018427387904, 4}},
                              {"w", kFloat32, {4, 3}},
                              {"b", kFloat32, {3}}},
                             "out")
                  .status()
                  .message(),
              HasSubstr("variable \"x\" is declared with shape [2, "
                        "4611686018427387904, 4]: its element count "
                        "overflows int64"));
  EXPECT_THAT(InferAlone(kFc,
                         {{"x", kFloat32, {2, 4611686018427387904, 4}},
                          {"w", kFloat32, {4, 3}},
                          {"b", kFloat32, {3}}},
                         "out")
                  .status()
                  .message(),
              HasSubstr("\"X\" (variable \"x\") [2, 4611686018427387904, 4] "
                        "has more features per row than int64 holds, with "
                        "attribute \"in_num_col_dims\" = 1"));
  EXPECT_THAT(InferAlone(kFc,
                         {{"x", kFloat32, {2, 4}},
                          {"w", kFloat32, {4, 3}},
                          {"b", kFloat32, {4611686018427387904, 4}}},
                         "out")
                  .status()
                  .message(),
              HasSubstr("input \"Bias\" (variable \"b\", shape "
                        "[4611686018427387904, 4]) has more elements than "
                        "int64 holds"));
}

}  // namespace
}  // namespace scopeflow
