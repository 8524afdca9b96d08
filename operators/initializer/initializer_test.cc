// The initializers' distributions, checked by their sample statistics on
// large shapes (tolerances of several standard errors), their bounds, and
// their reproducibility per seed.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Op(const std::string& type, const std::vector<int64_t>& shape,
               const std::string& attrs = "") {
  return absl::StrCat("type: \"", type,
                      "\" outputs { slot: \"Out\" vars: \"w\" } attrs { name: "
                      "\"shape\" i64s { values: [",
                      absl::StrJoin(shape, ", "), "] } } ", attrs);
}

// Out of the one-op net `op`, as doubles whatever its dtype.
std::vector<double> Draw(const std::string& op) {
  auto out = RunOp(op, {}, {"w"});
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  const Tensor& w = (*out)[0];
  if (w.dtype() == kFloat64) return Values<double>(w);
  const std::vector<float> values = Values<float>(w);
  return std::vector<double>(values.begin(), values.end());
}

struct Stats {
  double mean = 0;
  double variance = 0;
  double max_abs = 0;  // of the deviation from `center`
};

Stats StatsOf(const std::vector<double>& values, double center = 0) {
  Stats stats;
  for (double x : values) stats.mean += x;
  stats.mean /= static_cast<double>(values.size());
  for (double x : values) {
    stats.variance += (x - stats.mean) * (x - stats.mean);
    stats.max_abs = std::max(stats.max_abs, std::abs(x - center));
  }
  stats.variance /= static_cast<double>(values.size());
  return stats;
}

// Mean 0 and variance `std`^2 within 3% (the samples hold 50,000 or more
// values: the standard error of the variance is under 0.7%).
void ExpectZeroMeanAndStd(const std::vector<double>& values, double std) {
  const Stats stats = StatsOf(values);
  EXPECT_NEAR(stats.mean, 0, 0.03 * std);
  EXPECT_NEAR(stats.variance, std * std, 0.03 * std * std);
}

// Within [-bound, bound] and reaching close to both ends.
void ExpectUniformWithin(const std::vector<double>& values, double bound) {
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  EXPECT_GE(*low, -bound);
  EXPECT_LE(*high, bound);
  EXPECT_LT(*low, -0.99 * bound);
  EXPECT_GT(*high, 0.99 * bound);
  // The variance of U(-b, b) is b^2 / 3.
  ExpectZeroMeanAndStd(values, bound / std::sqrt(3.0));
}

// An fc weight [in, out] = [200, 300]: fan_in 200, fan_out 300.
TEST(XavierTest, UniformOnAnFcWeight) {
  const std::vector<double> w = Draw(Op("xavier_uniform", {200, 300}));
  ASSERT_EQ(w.size(), 60000u);
  ExpectUniformWithin(w, std::sqrt(6.0 / 500));
}

TEST(XavierTest, NormalWithGain) {
  ExpectZeroMeanAndStd(
      Draw(Op("xavier_normal", {200, 300}, "attrs { name: \"gain\" f: 2 }")),
      2 * std::sqrt(2.0 / 500));
}

// A conv filter [out_c, in_c / groups, kh, kw] = [64, 32, 5, 5]: fan_in
// 32 * 25 = 800, fan_out 64 * 25 = 1600.
TEST(XavierTest, ConvFilterFans) {
  ExpectUniformWithin(Draw(Op("xavier_uniform", {64, 32, 5, 5})),
                      std::sqrt(6.0 / 2400));
  ExpectZeroMeanAndStd(Draw(Op("xavier_normal", {64, 32, 5, 5})),
                       std::sqrt(2.0 / 2400));
}

// [in, out] = [100, 800]: the modes differ by a factor of 8 in variance, so
// the test tells which dimension is fan_in.
TEST(KaimingTest, NormalFanInIsTheFirstDimensionOfAnFcWeight) {
  ExpectZeroMeanAndStd(Draw(Op("kaiming_normal", {100, 800})),
                       std::sqrt(2.0 / 100));
  ExpectZeroMeanAndStd(Draw(Op("kaiming_normal", {100, 800},
                               "attrs { name: \"mode\" s: \"fan_out\" }")),
                       std::sqrt(2.0 / 800));
}

// The gain of leaky_relu: sqrt(2 / (1 + slope^2)); slope 1 gives 1.
TEST(KaimingTest, NegativeSlopeSetsTheGain) {
  ExpectZeroMeanAndStd(Draw(Op("kaiming_normal", {100, 800},
                               "attrs { name: \"negative_slope\" f: 1 }")),
                       std::sqrt(1.0 / 100));
  ExpectUniformWithin(Draw(Op("kaiming_uniform", {100, 800},
                              "attrs { name: \"negative_slope\" f: 0.5 }")),
                      std::sqrt(2.0 / 1.25) * std::sqrt(3.0 / 100));
}

// fan_in of [64, 32, 5, 5] is 800: bound sqrt(2) sqrt(3 / 800); fan_out
// 1600.
TEST(KaimingTest, UniformOnAConvFilter) {
  ExpectUniformWithin(Draw(Op("kaiming_uniform", {64, 32, 5, 5})),
                      std::sqrt(6.0 / 800));
  ExpectUniformWithin(Draw(Op("kaiming_uniform", {64, 32, 5, 5},
                              "attrs { name: \"mode\" s: \"fan_out\" }")),
                      std::sqrt(6.0 / 1600));
}

// N(1, 2^2) cut at 1 +- 4: the variance of a normal truncated at 2 std is
// 0.7737 std^2.
TEST(TruncatedGaussianRandomTest, StaysWithinTwoStdWithTheTruncatedVariance) {
  const std::vector<double> w =
      Draw(Op("truncated_gaussian_random", {100000},
              "attrs { name: \"mean\" f: 1 } attrs { name: \"std\" f: 2 }"));
  ASSERT_EQ(w.size(), 100000u);
  const Stats stats = StatsOf(w, /*center=*/1);
  EXPECT_LE(stats.max_abs, 4);
  EXPECT_GT(stats.max_abs, 3.9);
  EXPECT_NEAR(stats.mean, 1, 0.03);
  EXPECT_NEAR(stats.variance, 4 * 0.7737, 0.03 * 4 * 0.7737);
}

TEST(InitializerTest, Float64) {
  const std::string dtype = absl::StrCat(
      "attrs { name: \"dtype\" i: ", static_cast<int>(kFloat64), " }");
  for (const char* type : {"xavier_uniform", "xavier_normal", "kaiming_uniform",
                           "kaiming_normal", "truncated_gaussian_random"}) {
    auto out = RunOp(Op(type, {3, 4}, dtype), {}, {"w"});
    ASSERT_TRUE(out.ok()) << type << ": " << out.status();
    EXPECT_EQ((*out)[0].dtype(), kFloat64) << type;
    EXPECT_THAT((*out)[0].dims(), ElementsAre(3, 4)) << type;
  }
  ExpectZeroMeanAndStd(Draw(Op("kaiming_normal", {100, 800}, dtype)),
                       std::sqrt(2.0 / 100));
}

TEST(InitializerTest, SameSeedSameValuesOtherSeedOtherValues) {
  for (const char* type : {"xavier_uniform", "xavier_normal", "kaiming_uniform",
                           "kaiming_normal", "truncated_gaussian_random"}) {
    const std::vector<double> a =
        Draw(Op(type, {16, 8}, "attrs { name: \"seed\" i: 7 }"));
    const std::vector<double> b =
        Draw(Op(type, {16, 8}, "attrs { name: \"seed\" i: 7 }"));
    const std::vector<double> c =
        Draw(Op(type, {16, 8}, "attrs { name: \"seed\" i: 8 }"));
    ASSERT_EQ(a.size(), 128u) << type;
    EXPECT_EQ(a, b) << type;
    EXPECT_NE(a, c) << type;
    // Not a constant fill.
    EXPECT_NE(*std::min_element(a.begin(), a.end()),
              *std::max_element(a.begin(), a.end()))
        << type;
  }
}

TEST(InitializerTest, ZeroElementShapes) {
  for (const char* type :
       {"xavier_uniform", "kaiming_normal", "truncated_gaussian_random"}) {
    auto out = RunOp(Op(type, {0, 5}), {}, {"w"});
    ASSERT_TRUE(out.ok()) << type << ": " << out.status();
    EXPECT_THAT((*out)[0].dims(), ElementsAre(0, 5));
  }
}

TEST(InitializerTest, ErrorsNameTheOpAndTheVariable) {
  EXPECT_THAT(
      PrepareOp(Op("xavier_uniform", {5}), {}).message(),
      HasSubstr("op 0 (xavier_uniform): attribute \"shape\" = [5] for output "
                "\"Out\" (variable \"w\") has rank 1: fan_in and fan_out need "
                "rank >= 2"));
  EXPECT_THAT(PrepareOp(Op("kaiming_normal", {}), {}).message(),
              HasSubstr("op 0 (kaiming_normal): attribute \"shape\" = [] for "
                        "output \"Out\" (variable \"w\") has rank 0"));
  EXPECT_THAT(
      PrepareOp(Op("kaiming_uniform", {2, 2}, "attrs { name: \"dtype\" i: 4 }"),
                {})
          .message(),
      HasSubstr("op 0 (kaiming_uniform): attribute \"dtype\" = int32 for "
                "output \"Out\" (variable \"w\"): expected float32 or "
                "float64"));
  EXPECT_THAT(
      PrepareOp(Op("truncated_gaussian_random", {2},
                   "attrs { name: \"dtype\" i: 42 }"),
                {})
          .message(),
      HasSubstr("op 0 (truncated_gaussian_random): attribute \"dtype\" = "
                "DataType(42) for output \"Out\" (variable \"w\"): expected "
                "float32 or float64"));
  EXPECT_THAT(
      PrepareOp(Op("kaiming_normal", {2, 2},
                   "attrs { name: \"mode\" s: \"fan_avg\" }"),
                {})
          .message(),
      HasSubstr("op 0 (kaiming_normal): attribute \"mode\" must be one of "
                "fan_in, fan_out, got \"fan_avg\""));
  EXPECT_THAT(PrepareOp(Op("xavier_normal", {2, -2}), {}).message(),
              HasSubstr("op 0 (xavier_normal): attribute \"shape\" must be "
                        "non-negative, got -2"));
  EXPECT_THAT(
      PrepareOp(Op("xavier_normal", {2, 2}, "attrs { name: \"gain\" f: 0 }"),
                {})
          .message(),
      HasSubstr("op 0 (xavier_normal): attribute \"gain\" must be positive"));
  EXPECT_THAT(
      PrepareOp(
          Op("truncated_gaussian_random", {2}, "attrs { name: \"std\" f: -1 }"),
          {})
          .message(),
      HasSubstr("op 0 (truncated_gaussian_random): attribute \"std\" must be "
                "positive"));
  EXPECT_THAT(PrepareOp("type: \"xavier_uniform\" outputs { slot: \"Out\" "
                        "vars: \"w\" }",
                        {})
                  .message(),
              HasSubstr("op 0 (xavier_uniform): missing required attribute "
                        "\"shape\""));
}

}  // namespace
}  // namespace scopeflow
