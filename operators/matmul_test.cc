#include <random>

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

}  // namespace
}  // namespace scopeflow
