#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string BinaryOp(const std::string& type) {
  return absl::StrFormat(R"pb(type: "%s"
                              inputs { slot: "X" vars: "x" }
                              inputs { slot: "Y" vars: "y" }
                              outputs { slot: "Out" vars: "out" })pb",
                         type);
}

absl::StatusOr<Tensor> RunBinary(const std::string& type, const Tensor& x,
                                 const Tensor& y) {
  absl::StatusOr<std::vector<Tensor>> out =
      RunOp(BinaryOp(type), {{"x", x}, {"y", y}}, {"out"});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

TEST(BinaryTest, Float32SameShape) {
  const Tensor x = MakeTensor<float>({2, 3}, {1, -2, 3, 4, 0.5f, 9});
  const Tensor y = MakeTensor<float>({2, 3}, {2, 4, -1, 2, 2, 3});
  struct Case {
    std::string op;
    std::vector<float> expected;
  };
  const std::vector<Case> cases = {
      {"add", {3, 2, 2, 6, 2.5f, 12}},
      {"sub", {-1, -6, 4, 2, -1.5f, 6}},
      {"mul", {2, -8, -3, 8, 1, 27}},
      {"div", {0.5f, -0.5f, -3, 2, 0.25f, 3}},
      {"pow", {1, 16, 1.0f / 3, 16, 0.25f, 729}},
      {"max", {2, 4, 3, 4, 2, 9}},
      {"min", {1, -2, -1, 2, 0.5f, 3}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    absl::StatusOr<Tensor> out = RunBinary(c.op, x, y);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->dtype(), kFloat32);
    EXPECT_THAT(out->dims(), ElementsAre(2, 3));
    const std::vector<float> values = Values<float>(*out);
    for (size_t i = 0; i < values.size(); ++i) {
      EXPECT_FLOAT_EQ(values[i], c.expected[i]) << "element " << i;
    }
  }
}

TEST(BinaryTest, Float64) {
  const Tensor x = MakeTensor<double>({3}, {1.5, -2, 10});
  const Tensor y = MakeTensor<double>({3}, {0.25, 4, 4});
  auto add = RunBinary("add", x, y);
  ASSERT_TRUE(add.ok()) << add.status();
  EXPECT_EQ(add->dtype(), kFloat64);
  EXPECT_THAT(Values<double>(*add), ElementsAre(1.75, 2, 14));
  auto div = RunBinary("div", x, y);
  ASSERT_TRUE(div.ok()) << div.status();
  EXPECT_THAT(Values<double>(*div), ElementsAre(6, -0.5, 2.5));
  auto pow = RunBinary("pow", x, y);
  ASSERT_TRUE(pow.ok()) << pow.status();
  EXPECT_THAT(Values<double>(*pow),
              ElementsAre(std::pow(1.5, 0.25), 16, 10000));
  auto max = RunBinary("max", x, y);
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_THAT(Values<double>(*max), ElementsAre(1.5, 4, 10));
}

// A one-element exponent of 2, 3, -1, 0.5 or -0.5 takes a cheaper path
// than pow: it must give pow's values, at +-0, +-inf and NaN too, whatever
// the exponent's rank, and over threads for large X.
TEST(BinaryTest, PowWithASpecialExponentMatchesStdPow) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {
      0,     -0.0f, 1,     -1,     2.5f, -3,           1e-40f,
      1e30f, kInf,  -kInf, 1e-20f, 7,    std::nanf("")};
  // Past the elements that one thread takes, odd.
  for (int i = 0; i < 70001; ++i) x.push_back(std::sin(0.37f * i) * 50);
  const int64_t n = static_cast<int64_t>(x.size());
  for (float exponent : {2.0f, 3.0f, -1.0f, 0.5f, -0.5f, 1.5f}) {
    for (const Dims& y_dims : {Dims{}, Dims{1}, Dims{1, 1}}) {
      SCOPED_TRACE(absl::StrFormat("exponent %g, Y of shape %s", exponent,
                                   DimsToString(y_dims)));
      auto out = RunBinary("pow", MakeTensor<float>({n}, x),
                           MakeTensor<float>(y_dims, {exponent}));
      ASSERT_TRUE(out.ok()) << out.status();
      const std::vector<float> values = Values<float>(*out);
      ASSERT_EQ(values.size(), x.size());
      int mismatches = 0;
      for (int64_t i = 0; i < n; ++i) {
        const float expected = std::pow(x[i], exponent);
        // x^3 and x^-0.5 round twice: within 1 ulp of pow.
        const bool same =
            std::isnan(expected)
                ? std::isnan(values[i])
                : values[i] == expected || std::fabs(values[i] - expected) <=
                                               std::fabs(expected) * 1.2e-7f;
        const bool sign_ok =
            std::signbit(values[i]) == std::signbit(expected) ||
            std::isnan(expected);
        if ((!same || !sign_ok) && mismatches++ < 3) {
          ADD_FAILURE() << "x = " << x[i] << ": " << values[i] << ", expected "
                        << expected;
        }
      }
    }
  }
}

TEST(BinaryTest, Int32) {
  const Tensor x = MakeTensor<int32_t>({5}, {7, -7, 7, -7, 0});
  const Tensor y = MakeTensor<int32_t>({5}, {2, 2, -2, -2, 5});
  struct Case {
    std::string op;
    std::vector<int32_t> expected;
  };
  const std::vector<Case> cases = {
      {"add", {9, -5, 5, -9, 5}},
      {"sub", {5, -9, 9, -5, -5}},
      {"mul", {14, -14, -14, 14, 0}},
      // Truncates toward zero, as C++.
      {"div", {3, -3, -3, 3, 0}},
      {"max", {7, 2, 7, -2, 5}},
      {"min", {2, -7, -2, -7, 0}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    absl::StatusOr<Tensor> out = RunBinary(c.op, x, y);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->dtype(), kInt32);
    EXPECT_EQ(Values<int32_t>(*out), c.expected);
  }
}

TEST(BinaryTest, Int64) {
  const int64_t big = int64_t{1} << 40;
  const Tensor x = MakeTensor<int64_t>({3}, {big, -9, 100});
  const Tensor y = MakeTensor<int64_t>({3}, {3, 4, -7});
  auto add = RunBinary("add", x, y);
  ASSERT_TRUE(add.ok()) << add.status();
  EXPECT_EQ(add->dtype(), kInt64);
  EXPECT_THAT(Values<int64_t>(*add), ElementsAre(big + 3, -5, 93));
  auto mul = RunBinary("mul", x, y);
  ASSERT_TRUE(mul.ok()) << mul.status();
  EXPECT_THAT(Values<int64_t>(*mul), ElementsAre(3 * big, -36, -700));
  auto div = RunBinary("div", x, y);
  ASSERT_TRUE(div.ok()) << div.status();
  EXPECT_THAT(Values<int64_t>(*div), ElementsAre(big / 3, -2, -14));
  auto min = RunBinary("min", x, y);
  ASSERT_TRUE(min.ok()) << min.status();
  EXPECT_THAT(Values<int64_t>(*min), ElementsAre(3, -9, -7));
}

TEST(BinaryTest, IntegerOverflowWrapsAround) {
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  auto add = RunBinary("add", MakeTensor<int32_t>({1}, {kMax}),
                       MakeTensor<int32_t>({1}, {1}));
  ASSERT_TRUE(add.ok()) << add.status();
  EXPECT_THAT(Values<int32_t>(*add), ElementsAre(kMin));
  // The lowest value over -1 would trap; it wraps to itself.
  auto div = RunBinary("div", MakeTensor<int32_t>({2}, {kMin, 6}),
                       MakeTensor<int32_t>({2}, {-1, -1}));
  ASSERT_TRUE(div.ok()) << div.status();
  EXPECT_THAT(Values<int32_t>(*div), ElementsAre(kMin, -6));
  constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min();
  auto div64 = RunBinary("div", MakeTensor<int64_t>({1}, {kMin64}),
                         MakeTensor<int64_t>({}, {-1}));
  ASSERT_TRUE(div64.ok()) << div64.status();
  EXPECT_THAT(Values<int64_t>(*div64), ElementsAre(kMin64));
}

TEST(BinaryTest, IntegerPowIsExact) {
  // Beyond float's 24-bit mantissa: 3^19 = 1162261467, 7^22 and (-3)^39.
  auto pow32 = RunBinary("pow", MakeTensor<int32_t>({5}, {3, -2, -2, 5, 1}),
                         MakeTensor<int32_t>({5}, {19, 3, 4, 0, 1000}));
  ASSERT_TRUE(pow32.ok()) << pow32.status();
  EXPECT_EQ(pow32->dtype(), kInt32);
  EXPECT_THAT(Values<int32_t>(*pow32), ElementsAre(1162261467, -8, 16, 1, 1));
  auto pow64 = RunBinary("pow", MakeTensor<int64_t>({2}, {7, -3}),
                         MakeTensor<int64_t>({}, {22}));
  ASSERT_TRUE(pow64.ok()) << pow64.status();
  EXPECT_THAT(Values<int64_t>(*pow64),
              ElementsAre(int64_t{3909821048582988049}, int64_t{31381059609}));
  // Broadcast exponents [3, 1] over bases [2]: [[-3^1, 2^1], ...].
  auto grid = RunBinary("pow", MakeTensor<int64_t>({2}, {-3, 2}),
                        MakeTensor<int64_t>({3, 1}, {1, 2, 39}));
  ASSERT_TRUE(grid.ok()) << grid.status();
  EXPECT_THAT(grid->dims(), ElementsAre(3, 2));
  EXPECT_THAT(Values<int64_t>(*grid),
              ElementsAre(-3, 2, 9, 4, int64_t{-4052555153018976267},
                          int64_t{549755813888}));
}

TEST(BinaryTest, IntegerPowWrapsAndTruncatesNegativeExponents) {
  // 2^31 wraps to the lowest int32, 3^21 = 10460353203 to its low 32 bits.
  auto wrap = RunBinary("pow", MakeTensor<int32_t>({2}, {2, 3}),
                        MakeTensor<int32_t>({2}, {31, 21}));
  ASSERT_TRUE(wrap.ok()) << wrap.status();
  EXPECT_THAT(
      Values<int32_t>(*wrap),
      ElementsAre(std::numeric_limits<int32_t>::min(),
                  static_cast<int32_t>(10460353203 - (int64_t{1} << 33))));
  // 1 / x^-y truncated: 1, -1 or 1 for -1 by parity, else 0.
  auto negative = RunBinary("pow", MakeTensor<int64_t>({5}, {1, -1, -1, 2, -7}),
                            MakeTensor<int64_t>({5}, {-5, -3, -4, -1, -2}));
  ASSERT_TRUE(negative.ok()) << negative.status();
  EXPECT_THAT(Values<int64_t>(*negative), ElementsAre(1, -1, 1, 0, 0));
}

TEST(BinaryTest, FloatMaxMinPropagateNan) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = MakeTensor<float>({3}, {nan, 1, 2});
  const Tensor y = MakeTensor<float>({3}, {1, nan, 3});
  for (const std::string op : {"max", "min"}) {
    SCOPED_TRACE(op);
    auto out = RunBinary(op, x, y);
    ASSERT_TRUE(out.ok()) << out.status();
    const std::vector<float> values = Values<float>(*out);
    EXPECT_TRUE(std::isnan(values[0]));
    EXPECT_TRUE(std::isnan(values[1]));
    EXPECT_EQ(values[2], op == "max" ? 3 : 2);
  }
}

TEST(BinaryBroadcastTest, MatrixWithRow) {
  auto out = RunBinary("sub", MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}),
                       MakeTensor<float>({3}, {10, 20, 30}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(out->dims(), ElementsAre(2, 3));
  EXPECT_THAT(Values<float>(*out), ElementsAre(-9, -18, -27, -6, -15, -24));
  // And the other way round: the broadcast operand first.
  auto flipped = RunBinary("sub", MakeTensor<float>({3}, {10, 20, 30}),
                           MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}));
  ASSERT_TRUE(flipped.ok()) << flipped.status();
  EXPECT_THAT(flipped->dims(), ElementsAre(2, 3));
  EXPECT_THAT(Values<float>(*flipped), ElementsAre(9, 18, 27, 6, 15, 24));
}

TEST(BinaryBroadcastTest, ColumnWithRow) {
  auto out = RunBinary("mul", MakeTensor<int32_t>({2, 1}, {2, 3}),
                       MakeTensor<int32_t>({1, 3}, {1, 10, 100}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(out->dims(), ElementsAre(2, 3));
  EXPECT_THAT(Values<int32_t>(*out), ElementsAre(2, 20, 200, 3, 30, 300));
}

TEST(BinaryBroadcastTest, ScalarWithMatrix) {
  auto out = RunBinary("div", MakeTensor<double>({}, {12}),
                       MakeTensor<double>({2, 2}, {1, 2, 3, 4}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(out->dims(), ElementsAre(2, 2));
  EXPECT_THAT(Values<double>(*out), ElementsAre(12, 6, 4, 3));
  auto flipped = RunBinary("add", MakeTensor<int64_t>({2, 2}, {1, 2, 3, 4}),
                           MakeTensor<int64_t>({}, {10}));
  ASSERT_TRUE(flipped.ok()) << flipped.status();
  EXPECT_THAT(flipped->dims(), ElementsAre(2, 2));
  EXPECT_THAT(Values<int64_t>(*flipped), ElementsAre(11, 12, 13, 14));
  auto scalars =
      RunBinary("max", MakeTensor<float>({}, {1}), MakeTensor<float>({}, {2}));
  ASSERT_TRUE(scalars.ok()) << scalars.status();
  EXPECT_TRUE(scalars->dims().empty());
  EXPECT_THAT(Values<float>(*scalars), ElementsAre(2));
}

TEST(BinaryBroadcastTest, Rank3) {
  // [2, 1, 3] with [2, 1] gives [2, 2, 3].
  auto out = RunBinary("add", MakeTensor<float>({2, 1, 3}, {1, 2, 3, 4, 5, 6}),
                       MakeTensor<float>({2, 1}, {10, 20}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(out->dims(), ElementsAre(2, 2, 3));
  EXPECT_THAT(Values<float>(*out), ElementsAre(11, 12, 13, 21, 22, 23,  //
                                               14, 15, 16, 24, 25, 26));
}

TEST(BinaryBroadcastTest, EqualElementCountsOfDifferentRanks) {
  auto out = RunBinary("add", MakeTensor<float>({1, 3}, {1, 2, 3}),
                       MakeTensor<float>({3}, {10, 20, 30}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(out->dims(), ElementsAre(1, 3));
  EXPECT_THAT(Values<float>(*out), ElementsAre(11, 22, 33));
}

TEST(BinaryBroadcastTest, EmptyOutput) {
  auto out = RunBinary("div", MakeTensor<int32_t>({0, 3}, {}),
                       MakeTensor<int32_t>({3}, {0, 0, 0}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(out->dims(), ElementsAre(0, 3));
}

// The broadcast of `x_dims` and `y_dims`, computed by the definition, for
// checking the kernels' strided loops.
std::vector<float> ReferenceAdd(const Dims& x_dims, const std::vector<float>& x,
                                const Dims& y_dims, const std::vector<float>& y,
                                const Dims& out_dims) {
  const int rank = static_cast<int>(out_dims.size());
  std::vector<float> out(NumElements(out_dims));
  for (int64_t i = 0; i < static_cast<int64_t>(out.size()); ++i) {
    int64_t rest = i, xi = 0, yi = 0, x_stride = 1, y_stride = 1;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t coordinate = rest % out_dims[d];
      rest /= out_dims[d];
      const int xd = d - (rank - static_cast<int>(x_dims.size()));
      const int yd = d - (rank - static_cast<int>(y_dims.size()));
      if (xd >= 0) {
        if (x_dims[xd] != 1) xi += coordinate * x_stride;
        x_stride *= x_dims[xd];
      }
      if (yd >= 0) {
        if (y_dims[yd] != 1) yi += coordinate * y_stride;
        y_stride *= y_dims[yd];
      }
    }
    out[i] = x[xi] + y[yi];
  }
  return out;
}

TEST(BinaryBroadcastTest, MatchesDefinitionOnManyShapes) {
  struct Case {
    Dims x, y, out;
  };
  const std::vector<Case> cases = {
      {{2, 3, 4}, {3, 1}, {2, 3, 4}},
      {{4, 1, 5}, {1, 6, 1}, {4, 6, 5}},
      {{1, 3, 1, 2}, {2, 1, 4, 1}, {2, 3, 4, 2}},
      {{5}, {3, 1}, {3, 5}},
      {{2, 1, 1, 3}, {1, 4, 5, 1}, {2, 4, 5, 3}},
      {{3, 4, 5}, {4, 5}, {3, 4, 5}},
      {{3, 1, 5}, {3, 4, 5}, {3, 4, 5}},
      {{1, 1, 7}, {2, 3, 1}, {2, 3, 7}},
      {{2, 3, 1, 4, 1, 2, 1}, {3, 4, 5, 2, 3}, {2, 3, 3, 4, 5, 2, 3}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(
        absl::StrFormat("%s + %s", DimsToString(c.x), DimsToString(c.y)));
    std::vector<float> x(NumElements(c.x)), y(NumElements(c.y));
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
    for (size_t i = 0; i < y.size(); ++i) y[i] = 1000.0f * (i + 1);
    auto out =
        RunBinary("add", MakeTensor<float>(c.x, x), MakeTensor<float>(c.y, y));
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->dims(), c.out);
    EXPECT_EQ(Values<float>(*out), ReferenceAdd(c.x, x, c.y, y, c.out));
  }
}

TEST(BinaryErrorTest, ShapesThatDoNotBroadcast) {
  absl::Status status = PrepareOp(
      BinaryOp("add"), {{"x", MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})},
                        {"y", MakeTensor<float>({2}, {1, 2})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (add): inputs \"X\" (variable \"x\", shape "
                        "[2, 3]), \"Y\" (variable \"y\", shape [2]) do not "
                        "broadcast together"));
  absl::Status rank3 =
      PrepareOp(BinaryOp("max"), {{"x", MakeTensor<float>({2, 3, 4}, {})},
                                  {"y", MakeTensor<float>({3, 1, 2}, {})}});
  EXPECT_THAT(rank3.message(),
              HasSubstr("op 0 (max): inputs \"X\" (variable \"x\", shape "
                        "[2, 3, 4]), \"Y\" (variable \"y\", shape [3, 1, 2]) "
                        "do not broadcast together"));
}

TEST(BinaryErrorTest, MismatchedDtypes) {
  absl::Status status =
      PrepareOp(BinaryOp("mul"), {{"x", MakeTensor<float>({2}, {1, 2})},
                                  {"y", MakeTensor<int32_t>({2}, {1, 2})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (mul): inputs \"X\" (variable \"x\", float32) "
                        "and \"Y\" (variable \"y\", int32) must have one "
                        "dtype"));
}

TEST(BinaryErrorTest, IntegerDivisionByZero) {
  auto out = RunBinary("div", MakeTensor<int32_t>({3}, {1, 2, 3}),
                       MakeTensor<int32_t>({3}, {1, 0, 1}));
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (div): input \"Y\" (variable \"y\", shape "
                        "[3]) holds 0 at element 1: integer division by "
                        "zero"));
  // Also through broadcasting, and for int64.
  auto broadcast = RunBinary("div", MakeTensor<int64_t>({2, 2}, {1, 2, 3, 4}),
                             MakeTensor<int64_t>({2}, {5, 0}));
  EXPECT_THAT(broadcast.status().message(),
              HasSubstr("op 0 (div): input \"Y\" (variable \"y\", shape "
                        "[2]) holds 0 at element 1: integer division by "
                        "zero"));
  // Float division by zero is IEEE's.
  auto real = RunBinary("div", MakeTensor<float>({2}, {1, -1}),
                        MakeTensor<float>({}, {0}));
  ASSERT_TRUE(real.ok()) << real.status();
  EXPECT_THAT(Values<float>(*real),
              ElementsAre(std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity()));
}

TEST(BinaryErrorTest, MissingInputSlot) {
  absl::Status status = PrepareOp(R"pb(type: "sub"
                                       inputs { slot: "X" vars: "x" }
                                       outputs { slot: "Out" vars: "out" })pb",
                                  {{"x", MakeTensor<float>({1}, {1})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (sub): missing required input \"Y\""));
}

TEST(BinaryErrorTest, IntegerZeroToANegativePower) {
  auto out = RunBinary("pow", MakeTensor<int32_t>({2, 2}, {2, 0, 0, 1}),
                       MakeTensor<int32_t>({2}, {-1, 3}));
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (pow): input \"X\" (variable \"x\") holds 0 "
                        "where input \"Y\" (variable \"y\") holds a "
                        "negative exponent: integer 0 has no negative power"));
  // 0 to a non-negative power is fine.
  auto fine = RunBinary("pow", MakeTensor<int64_t>({2}, {0, 0}),
                        MakeTensor<int64_t>({2}, {0, 5}));
  ASSERT_TRUE(fine.ok()) << fine.status();
  EXPECT_THAT(Values<int64_t>(*fine), ElementsAre(1, 0));
  absl::Status no_bool =
      PrepareOp(BinaryOp("pow"), {{"x", MakeTensor<bool>({1}, {true})},
                                  {"y", MakeTensor<bool>({1}, {true})}});
  EXPECT_THAT(no_bool.message(),
              HasSubstr("op 0 (pow): no kernel for dtype bool"));
}

}  // namespace
}  // namespace scopeflow
