// The rotary_embedding op against hand-computed rotations and ONNX's
// reference algorithm (run in numpy; values pasted), its gradient to X and
// the caches against central differences, and its errors.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/grad_check.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::DoubleNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

std::string RopeOp(bool ids, bool interleaved, int rotary_dim = 0,
                   int num_heads = 0) {
  return absl::StrCat(
      R"pb(type: "rotary_embedding"
           inputs { slot: "X" vars: "x" }
           inputs { slot: "CosCache" vars: "cos" }
           inputs { slot: "SinCache" vars: "sin" })pb",
      ids ? R"pb(inputs { slot: "PositionIds" vars: "ids" })pb" : "",
      R"pb(outputs { slot: "Out" vars: "y" }
           attrs { name: "interleaved" b:)pb",
      interleaved ? "true" : "false",
      R"pb(}
           attrs { name: "rotary_embedding_dim" i: )pb",
      rotary_dim, R"pb(}
                       attrs { name: "num_heads" i: )pb",
      num_heads, " }");
}

TEST(RotaryEmbeddingTest, QuarterAndHalfTurnsOf3dInput) {
  // [batch 1, seq 2, 2 heads of 4]; position 0 turns both pairs a quarter
  // (cos 0, sin 1: (x1, x2) -> (-x2, x1)), position 1 the first pair half
  // a turn and the second not at all. Halves: pairs (0, 2) and (1, 3).
  auto out =
      RunOp(RopeOp(false, false, 0, 2),
            {{"x", MakeTensor<double>({1, 2, 8}, {1, 2, 3, 4, 5, 6, 7, 8,  //
                                                  1, 2, 3, 4, 5, 6, 7, 8})},
             {"cos", MakeTensor<double>({1, 2, 2}, {0, 0, -1, 1})},
             {"sin", MakeTensor<double>({1, 2, 2}, {1, 1, 0, 0})}},
            {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<double>((*out)[0]),
              Pointwise(DoubleNear(0),
                        std::vector<double>{-3, -4, 1, 2, -7, -8, 5, 6,  //
                                            -1, 2, -3, 4, -5, 6, -7, 8}));
}

TEST(RotaryEmbeddingTest, InterleavedPartialRotationAtPositionIds) {
  // x = 1..36 as [1, 2 heads, 3, 6], rotary dim 4 interleaved, angles
  // [0.3, 1.1, -0.7, 2.0] x [1, 0.5] at rows [3, 0, 2]: ONNX's reference.
  std::vector<double> x(36);
  for (int i = 0; i < 36; ++i) x[i] = i + 1;
  std::vector<double> cos;
  std::vector<double> sin;
  for (double angle : {0.3, 1.1, -0.7, 2.0}) {
    for (double scale : {1.0, 0.5}) {
      cos.push_back(std::cos(angle * scale));
      sin.push_back(std::sin(angle * scale));
    }
  }
  auto out = RunOp(RopeOp(true, true, 4),
                   {{"x", MakeTensor<double>({1, 2, 3, 6}, x)},
                    {"cos", MakeTensor<double>({4, 2}, cos)},
                    {"sin", MakeTensor<double>({4, 2}, sin)},
                    {"ids", MakeTensor<int64_t>({1, 3}, {3, 0, 2})}},
                   {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(
      Values<double>((*out)[0]),
      Pointwise(DoubleNear(1e-12), std::vector<double>{-2.2347416901985055,
                                                       0.07700375373139678,
                                                       -1.7449770216271672,
                                                       4.6856221778962475,
                                                       5.0,
                                                       6.0,
                                                       4.323193770588526,
                                                       9.711333359634226,
                                                       7.404558376688387,
                                                       11.232653971622815,
                                                       11.0,
                                                       12.0,
                                                       18.961996056026024,
                                                       2.3329606878928573,
                                                       19.576955611997903,
                                                       9.88649629372629,
                                                       17.0,
                                                       18.0,
                                                       -26.092738430909336,
                                                       8.953714378745103,
                                                       -7.1660132425427925,
                                                       29.5575414100649,
                                                       23.0,
                                                       24.0,
                                                       16.199886854945323,
                                                       32.22675388379925,
                                                       22.51255139501236,
                                                       31.720419758996357,
                                                       29.0,
                                                       30.0,
                                                       44.32507379742526,
                                                       4.504201688735215,
                                                       42.65782497744885,
                                                       20.623044590780985,
                                                       35.0,
                                                       36.0}));
}

TEST(RotaryEmbeddingTest, GradientToInputAndCaches) {
  for (bool ids : {true, false}) {
    for (bool interleaved : {true, false}) {
      for (int rotary_dim : {0, 2}) {
        SCOPED_TRACE(absl::StrCat("ids ", ids, " interleaved ", interleaved,
                                  " rotary_dim ", rotary_dim));
        const int64_t half = rotary_dim == 0 ? 2 : 1;
        std::vector<Feed> feeds = {
            {"x", MakeTensor<double>({2, 2, 3, 4}, RandomValues(48, 1))}};
        if (ids) {
          // Rows 1 and 3 read twice: their gradients add up.
          feeds.push_back({"cos", MakeTensor<double>(
                                      {5, half}, RandomValues(5 * half, 2))});
          feeds.push_back({"sin", MakeTensor<double>(
                                      {5, half}, RandomValues(5 * half, 3))});
          feeds.push_back(
              {"ids", MakeTensor<int64_t>({2, 3}, {1, 3, 4, 3, 1, 0})});
        } else {
          feeds.push_back(
              {"cos",
               MakeTensor<double>({2, 3, half}, RandomValues(6 * half, 2))});
          feeds.push_back(
              {"sin",
               MakeTensor<double>({2, 3, half}, RandomValues(6 * half, 3))});
        }
        GradCheckOptions options;
        options.wrt = {"x", "cos", "sin"};
        const absl::Status status =
            CheckGradientTogetherAndAlone(RopeOp(ids, interleaved, rotary_dim),
                                          feeds, {"x", "cos", "sin"}, options);
        EXPECT_TRUE(status.ok()) << status;
      }
    }
  }
}

TEST(RotaryEmbeddingTest, BadInputsAreNamed) {
  const Tensor x = MakeTensor<float>({1, 1, 2, 4}, RandomFloats(8, 1));
  const Tensor cache = MakeTensor<float>({4, 2}, RandomFloats(8, 2));
  auto out = RunOp(RopeOp(true, false),
                   {{"x", x},
                    {"cos", cache},
                    {"sin", cache},
                    {"ids", MakeTensor<int64_t>({1, 2}, {0, 4})}},
                   {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("input \"PositionIds\" (variable \"ids\") holds 4 at "
                        "1: expected a row of the caches, in [0, 4)"));
  out = RunOp(RopeOp(true, false, 3),
              {{"x", x},
               {"cos", cache},
               {"sin", cache},
               {"ids", MakeTensor<int64_t>({1, 2}, {0, 1})}},
              {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("rotary_embedding_dim 3 (0: the head size) for input "
                        "\"X\" (variable \"x\", shape [1, 1, 2, 4]): expected "
                        "an even number in [2, 4]"));
  out = RunOp(RopeOp(true, false, 0, 3),
              {{"x", MakeTensor<float>({1, 2, 8}, RandomFloats(16, 1))},
               {"cos", cache},
               {"sin", cache},
               {"ids", MakeTensor<int64_t>({1, 2}, {0, 1})}},
              {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("is 3-D: attribute \"num_heads\" = 3 must be positive "
                        "and divide the hidden size 8"));
  out = RunOp(RopeOp(false, false), {{"x", x}, {"cos", cache}, {"sin", cache}},
              {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("CosCache has shape [4, 2]: expected [batch, seq, "
                        "rotary_dim / 2] = [1, 2, 2] without PositionIds"));
  out = RunOp(RopeOp(true, false),
              {{"x", x},
               {"cos", cache},
               {"sin", cache},
               {"ids", MakeTensor<int64_t>({2, 1}, {0, 1})}},
              {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("PositionIds has shape [2, 1]: expected [batch, seq] "
                        "= [1, 2]"));
}

}  // namespace
}  // namespace scopeflow
