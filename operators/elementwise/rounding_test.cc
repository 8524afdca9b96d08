// sign, floor, ceil and round: hand-computed values at the halves, zeros,
// NaN and both signs; their zero gradients checked numerically.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/grad_check.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

std::string UnaryOp(const std::string& type) {
  return absl::StrFormat(
      "type: \"%s\" inputs { slot: \"X\" vars: \"x\" } outputs { slot: "
      "\"Out\" vars: \"out\" }",
      type);
}

absl::StatusOr<Tensor> RunUnary(const std::string& type, const Tensor& x) {
  auto out = RunOp(UnaryOp(type), {{"x", x}}, {"out"});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

const std::vector<double> kInputs = {-2.5, -1.5, -0.5, -0.2, 0.0,
                                     0.5,  1.5,  2.5,  2.7,  -3.7};

TEST(RoundingTest, FloatValues) {
  struct Case {
    std::string op;
    std::vector<double> expected;
  };
  const std::vector<Case> cases = {
      {"floor", {-3, -2, -1, -1, 0, 0, 1, 2, 2, -4}},
      {"ceil", {-2, -1, -0.0, -0.0, 0, 1, 2, 3, 3, -3}},
      // Halves go to the even neighbour.
      {"round", {-2, -2, -0.0, -0.0, 0, 0, 2, 2, 3, -4}},
      {"sign", {-1, -1, -1, -1, 0, 1, 1, 1, 1, -1}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    auto out64 = RunUnary(c.op, MakeTensor<double>({2, 5}, kInputs));
    ASSERT_TRUE(out64.ok()) << out64.status();
    EXPECT_THAT(out64->dims(), ElementsAre(2, 5));
    EXPECT_THAT(Values<double>(*out64), ElementsAreArray(c.expected));
    std::vector<float> floats(kInputs.begin(), kInputs.end());
    auto out32 = RunUnary(c.op, MakeTensor<float>({10}, floats));
    ASSERT_TRUE(out32.ok()) << out32.status();
    std::vector<float> expected(c.expected.begin(), c.expected.end());
    EXPECT_THAT(Values<float>(*out32), ElementsAreArray(expected));
  }
}

TEST(RoundingTest, NegativeZeroAndNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const char* op : {"floor", "ceil", "round", "sign"}) {
    SCOPED_TRACE(op);
    auto out = RunUnary(op, MakeTensor<double>({3}, {-0.0, nan, -0.4}));
    ASSERT_TRUE(out.ok()) << out.status();
    const std::vector<double> v = Values<double>(*out);
    EXPECT_EQ(v[0], 0.0);
    EXPECT_TRUE(std::signbit(v[0]));
    EXPECT_TRUE(std::isnan(v[1]));
  }
  // round(-0.4) and ceil(-0.4) are -0.
  auto round = RunUnary("round", MakeTensor<double>({1}, {-0.4}));
  ASSERT_TRUE(round.ok());
  EXPECT_TRUE(std::signbit(Values<double>(*round)[0]));
}

TEST(RoundingTest, SignOfIntegers) {
  auto i32 = RunUnary(
      "sign", MakeTensor<int32_t>(
                  {4}, {-7, 0, 3, std::numeric_limits<int32_t>::min()}));
  ASSERT_TRUE(i32.ok()) << i32.status();
  EXPECT_THAT(Values<int32_t>(*i32), ElementsAre(-1, 0, 1, -1));
  auto i64 = RunUnary("sign", MakeTensor<int64_t>({3}, {5, 0, -1}));
  ASSERT_TRUE(i64.ok()) << i64.status();
  EXPECT_THAT(Values<int64_t>(*i64), ElementsAre(1, 0, -1));
}

TEST(RoundingTest, IntegerFloorIsRefused) {
  auto out = RunUnary("floor", MakeTensor<int32_t>({2}, {1, 2}));
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("floor"));
}

TEST(RoundingTest, ZeroGradientsCheckNumerically) {
  // Away from the jumps, where the derivative is zero.
  const Tensor x =
      MakeTensor<double>({2, 3}, {-2.3, -1.2, -0.3, 0.2, 1.3, 2.2});
  for (const char* op : {"floor", "ceil", "round", "sign"}) {
    SCOPED_TRACE(op);
    absl::Status status = CheckGradient(UnaryOp(op), {{"x", x}});
    EXPECT_TRUE(status.ok()) << status;
  }
}

}  // namespace
}  // namespace scopeflow
