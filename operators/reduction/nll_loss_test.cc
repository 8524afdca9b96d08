// nll_loss against torch.nn.functional.nll_loss (torch 1.13), its numeric
// gradients, and its errors.
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
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pointwise;

std::string NllLossOp(const std::string& reduction, bool weight,
                      const std::string& extra = "") {
  return absl::StrCat(
      R"pb(type: "nll_loss"
           inputs { slot: "X" vars: "x" }
           inputs { slot: "Label" vars: "label" }
           outputs { slot: "Out" vars: "out" })pb",
      weight ? R"pb(inputs { slot: "Weight" vars: "w" })pb" : "",
      " attrs { name: \"reduction\" s: \"", reduction, "\" }", extra);
}

constexpr char kIgnoreMinusOne[] =
    R"pb(attrs { name: "ignore_index" i64: -1 })pb";

// X [N=2, C=3, D=2] of log-probabilities, labels [2, 2] with one ignored.
Tensor X() {
  return MakeTensor<double>({2, 3, 2}, {-1.0, -2.0, -0.5, -0.25, -3.0, -0.1,
                                        -0.2, -0.7, -1.5, -2.5, -0.3, -4.0});
}
Tensor Labels() { return MakeTensor<int64_t>({2, 2}, {0, 2, 1, -1}); }
Tensor Weights() { return MakeTensor<double>({3}, {0.5, 2.0, 1.5}); }

TEST(NllLossTest, MatchesTorchForEachReduction) {
  // torch.nn.functional.nll_loss(x, label, weight=w, ignore_index=-1).
  const std::vector<std::pair<std::string, std::vector<double>>> cases = {
      {"none", {0.5, 0.15, 3.0, 0.0}}, {"sum", {3.65}}, {"mean", {0.9125}}};
  for (const auto& [reduction, expected] : cases) {
    SCOPED_TRACE(reduction);
    auto out =
        RunOp(NllLossOp(reduction, true, kIgnoreMinusOne),
              {{"x", X()}, {"label", Labels()}, {"w", Weights()}}, {"out"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].dims().size(), reduction == "none" ? 2u : 0u);
    EXPECT_THAT(Values<double>((*out)[0]),
                Pointwise(DoubleNear(1e-12), expected));
  }
}

TEST(NllLossTest, MeanWithoutWeightsDividesByThePositionCount) {
  // torch: nll_loss(x, [[0, 2], [1, 0]]) = (1 + 0.1 + 1.5 + 0.7) / 4, with
  // int32 labels and float32 X.
  std::vector<double> x64 = Values<double>(X());
  auto out =
      RunOp(NllLossOp("mean", false),
            {{"x", MakeTensor<float>(
                       {2, 3, 2}, std::vector<float>(x64.begin(), x64.end()))},
             {"label", MakeTensor<int32_t>({2, 2}, {0, 2, 1, 0})}},
            {"out"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(testing::FloatEq(0.825f)));
}

TEST(NllLossTest, AllIgnoredMeanIsNaN) {
  auto out = RunOp(
      NllLossOp("mean", false, kIgnoreMinusOne),
      {{"x", X()}, {"label", MakeTensor<int64_t>({2, 2}, {-1, -1, -1, -1})}},
      {"out"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(std::isnan(Values<double>((*out)[0])[0]));
}

TEST(NllLossTest, GradientsMatchNumericOnes) {
  for (const std::string reduction : {"none", "sum", "mean"}) {
    SCOPED_TRACE(reduction);
    const absl::Status status = CheckGradientTogetherAndAlone(
        NllLossOp(reduction, true, kIgnoreMinusOne),
        {{"x", X()}, {"label", Labels()}, {"w", Weights()}}, {"x", "w"});
    EXPECT_TRUE(status.ok()) << status;
  }
  const absl::Status status =
      CheckGradient(NllLossOp("mean", false),
                    {{"x", MakeTensor<double>({3, 4}, RandomValues(12, 7))},
                     {"label", MakeTensor<int64_t>({3}, {3, 0, 2})}});
  EXPECT_TRUE(status.ok()) << status;
}

TEST(NllLossTest, BadInputsAreErrorsNamingTheVariable) {
  auto out =
      RunOp(NllLossOp("sum", false),
            {{"x", X()}, {"label", MakeTensor<int64_t>({2, 2}, {0, 3, 1, 1})}},
            {"out"});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("input \"Label\" (variable \"label\") holds 3 at "
                        "position 1: expected a class in [0, 3)"));
  absl::Status status = PrepareOp(
      NllLossOp("sum", false),
      {{"x", X()}, {"label", MakeTensor<int64_t>({2, 3}, {0, 0, 0, 0, 0, 0})}});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("expected shape [2, 2], one label per position"));
  status = PrepareOp(NllLossOp("sum", true),
                     {{"x", X()},
                      {"label", Labels()},
                      {"w", MakeTensor<double>({2}, {1, 2})}});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("expected one weight per class, 3"));
  status = PrepareOp(
      NllLossOp("sum", false),
      {{"x", X()}, {"label", MakeTensor<float>({2, 2}, {0, 0, 0, 0})}});
  EXPECT_THAT(std::string(status.message()), HasSubstr("variable \"label\""));
}

}  // namespace
}  // namespace scopeflow
