// tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh and softsign:
// values against hand-computed ones, and numeric gradient checks.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/grad_check.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::DoubleNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

std::string UnaryOp(const std::string& type) {
  return absl::StrFormat(
      "type: \"%s\" inputs { slot: \"X\" vars: \"x\" } outputs { slot: "
      "\"Out\" vars: \"out\" }",
      type);
}

struct Case {
  std::string op;
  std::vector<double> x;
  // Closed forms: tan(pi/4) = 1, asin(1/2) = pi/6, sinh(ln 2) = 3/4, ...
  std::vector<double> expected;
};

const double kPi = 3.14159265358979323846;

std::vector<Case> Cases() {
  return {
      {"tan", {0, kPi / 4, -kPi / 3}, {0, 1, -std::sqrt(3.0)}},
      {"asin", {0.5, -1, 0}, {kPi / 6, -kPi / 2, 0}},
      {"acos", {0.5, -1, 1}, {kPi / 3, kPi, 0}},
      {"atan", {1, -std::sqrt(3.0), 0}, {kPi / 4, -kPi / 3, 0}},
      {"sinh", {std::log(2.0), 0, -std::log(2.0)}, {0.75, 0, -0.75}},
      {"cosh", {std::log(2.0), 0, -std::log(2.0)}, {1.25, 1, 1.25}},
      {"asinh", {0.75, 0, -0.75}, {std::log(2.0), 0, -std::log(2.0)}},
      {"acosh", {1.25, 1, 1.25}, {std::log(2.0), 0, std::log(2.0)}},
      {"atanh", {0.6, 0, -0.6}, {std::log(2.0), 0, -std::log(2.0)}},
      {"softsign", {3, -1, 0}, {0.75, -0.5, 0}},
  };
}

TEST(TrigTest, MatchesClosedFormsInBothFloatDtypes) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.op);
    auto out =
        RunOp(UnaryOp(c.op), {{"x", MakeTensor<double>({3}, c.x)}}, {"out"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT(Values<double>((*out)[0]),
                Pointwise(DoubleNear(1e-12), c.expected));
    std::vector<float> x32(c.x.begin(), c.x.end());
    auto out32 =
        RunOp(UnaryOp(c.op), {{"x", MakeTensor<float>({3}, x32)}}, {"out"});
    ASSERT_TRUE(out32.ok()) << out32.status();
    const std::vector<float> got = Values<float>((*out32)[0]);
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(got[i], c.expected[i], 1e-6);
  }
}

TEST(TrigTest, OutsideTheDomainIsNaN) {
  for (const auto& [op, x] : std::vector<std::pair<std::string, double>>{
           {"asin", 2}, {"acos", -1.5}, {"acosh", 0.5}, {"atanh", 3}}) {
    SCOPED_TRACE(op);
    auto out =
        RunOp(UnaryOp(op), {{"x", MakeTensor<double>({1}, {x})}}, {"out"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_TRUE(std::isnan(Values<double>((*out)[0])[0]));
  }
}

TEST(TrigTest, GradientsMatchNumericOnes) {
  // Points inside each function's domain, away from its poles.
  const std::vector<std::pair<std::string, std::vector<double>>> points = {
      {"tan", {-1.2, -0.3, 0.4, 1.1}},   {"asin", {-0.8, -0.1, 0.3, 0.9}},
      {"acos", {-0.8, -0.1, 0.3, 0.9}},  {"atan", {-3, -0.5, 0.2, 2}},
      {"sinh", {-2, -0.5, 0.1, 1.5}},    {"cosh", {-2, -0.5, 0.1, 1.5}},
      {"asinh", {-3, -0.5, 0.2, 2}},     {"acosh", {1.2, 1.5, 2, 4}},
      {"atanh", {-0.8, -0.2, 0.3, 0.9}}, {"softsign", {-3, -0.5, 0.2, 2}},
  };
  for (const auto& [op, x] : points) {
    SCOPED_TRACE(op);
    const absl::Status status =
        CheckGradient(UnaryOp(op), {{"x", MakeTensor<double>({2, 2}, x)}});
    EXPECT_TRUE(status.ok()) << status;
  }
}

TEST(TrigTest, IntegerInputsAreRefusedNamingTheVariable) {
  const absl::Status status =
      PrepareOp(UnaryOp("tan"), {{"x", MakeTensor<int32_t>({2}, {1, 2})}});
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr("tan"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("int32"));
}

}  // namespace
}  // namespace scopeflow
