// The elementwise ops on the integer dtypes beyond int32 and int64 (int8,
// int16, uint8 to uint64) and on float16 where it computes through float32:
// hand-computed values, with the wrap-around and sign cases of each width.
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

// The op `type` on X = x (and Y = y if `binary`), Out = out, with `attrs`.
std::string Op(const std::string& type, bool binary,
               const std::string& attrs = "") {
  return absl::StrFormat(
      R"pb(type: "%s"
           inputs { slot: "X" vars: "x" } %s
           outputs { slot: "Out" vars: "out" } %s)pb",
      type, binary ? R"pb(inputs { slot: "Y" vars: "y" })pb" : "", attrs);
}

absl::StatusOr<Tensor> RunBinary(const std::string& type, const Tensor& x,
                           const Tensor& y, const std::string& attrs = "") {
  absl::StatusOr<std::vector<Tensor>> out =
      RunOp(Op(type, true, attrs), {{"x", x}, {"y", y}}, {"out"});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

absl::StatusOr<Tensor> RunUnary(const std::string& type, const Tensor& x,
                                const std::string& attrs = "") {
  absl::StatusOr<std::vector<Tensor>> out =
      RunOp(Op(type, false, attrs), {{"x", x}}, {"out"});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

TEST(IntegerDtypesTest, ArithmeticWrapsAroundAtEachWidth) {
  const Tensor x8 = MakeTensor<int8_t>({3}, {127, -128, -7});
  const Tensor y8 = MakeTensor<int8_t>({3}, {1, -1, 2});
  auto add8 = RunBinary("add", x8, y8);
  ASSERT_TRUE(add8.ok()) << add8.status();
  EXPECT_EQ(add8->dtype(), kInt8);
  EXPECT_THAT(Values<int8_t>(*add8), ElementsAre(-128, 127, -5));
  // -128 / -1 wraps to -128; -7 / 2 truncates toward zero.
  auto div8 = RunBinary("div", x8, y8);
  ASSERT_TRUE(div8.ok()) << div8.status();
  EXPECT_THAT(Values<int8_t>(*div8), ElementsAre(127, -128, -3));

  // 65535 * 65535 would overflow int, which uint16 promotes to: it must
  // wrap in unsigned arithmetic to 1.
  const Tensor x16 = MakeTensor<uint16_t>({3}, {65535, 0, 300});
  const Tensor y16 = MakeTensor<uint16_t>({3}, {65535, 1, 7});
  auto mul16 = RunBinary("mul", x16, y16);
  ASSERT_TRUE(mul16.ok()) << mul16.status();
  EXPECT_EQ(mul16->dtype(), kUInt16);
  EXPECT_THAT(Values<uint16_t>(*mul16), ElementsAre(1, 0, 2100));
  auto sub16 = RunBinary("sub", x16, y16);
  ASSERT_TRUE(sub16.ok()) << sub16.status();
  EXPECT_THAT(Values<uint16_t>(*sub16), ElementsAre(0, 65535, 293));

  const Tensor s16 = MakeTensor<int16_t>({2}, {32767, -32768});
  auto mul_s16 = RunBinary("mul", s16, MakeTensor<int16_t>({2}, {2, -1}));
  ASSERT_TRUE(mul_s16.ok()) << mul_s16.status();
  EXPECT_THAT(Values<int16_t>(*mul_s16), ElementsAre(-2, -32768));
}

TEST(IntegerDtypesTest, UnsignedDivisionByTheLargestValueIsNotNegation) {
  // UINT32_MAX is no -1: 7 / UINT32_MAX is 0 and UINT32_MAX / UINT32_MAX 1.
  constexpr uint32_t kMax32 = std::numeric_limits<uint32_t>::max();
  auto div32 = RunBinary("div", MakeTensor<uint32_t>({3}, {7, kMax32, 100}),
                   MakeTensor<uint32_t>({3}, {kMax32, kMax32, 7}));
  ASSERT_TRUE(div32.ok()) << div32.status();
  EXPECT_THAT(Values<uint32_t>(*div32), ElementsAre(0, 1, 14));
  constexpr uint64_t kMax64 = std::numeric_limits<uint64_t>::max();
  auto div64 = RunBinary("div", MakeTensor<uint64_t>({2}, {kMax64, 9}),
                   MakeTensor<uint64_t>({2}, {2, kMax64}));
  ASSERT_TRUE(div64.ok()) << div64.status();
  EXPECT_THAT(Values<uint64_t>(*div64), ElementsAre(kMax64 / 2, 0));
  auto by_zero = RunBinary("div", MakeTensor<uint64_t>({1}, {1}),
                     MakeTensor<uint64_t>({1}, {0}));
  EXPECT_THAT(by_zero.status().message(),
              HasSubstr("holds 0 at element 0: integer division by zero"));
}

TEST(IntegerDtypesTest, MaxMinAndComparisonsOrderUnsignedAboveSigned) {
  // As uint64, 2^63 is large (as int64 it would be the lowest value).
  const uint64_t big = uint64_t{1} << 63;
  const Tensor x = MakeTensor<uint64_t>({3}, {big, 1, 5});
  const Tensor y = MakeTensor<uint64_t>({3}, {2, 1, 9});
  auto max = RunBinary("max", x, y);
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_THAT(Values<uint64_t>(*max), ElementsAre(big, 1, 9));
  auto min = RunBinary("min", x, y);
  ASSERT_TRUE(min.ok()) << min.status();
  EXPECT_THAT(Values<uint64_t>(*min), ElementsAre(2, 1, 5));
  struct Case {
    const char* op;
    std::vector<bool> expected;
  };
  for (const Case& c :
       {Case{"equal", {false, true, false}}, Case{"less", {false, false, true}},
        Case{"greater", {true, false, false}},
        Case{"less_equal", {false, true, true}},
        Case{"greater_equal", {true, true, false}}}) {
    SCOPED_TRACE(c.op);
    auto out = RunBinary(c.op, x, y);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->dtype(), kBool);
    EXPECT_EQ(Values<bool>(*out), c.expected);
  }
  // int8: -1 < 1 (as uint8 bits it would be 255).
  auto less8 = RunBinary("less", MakeTensor<int8_t>({2}, {-1, 3}),
                   MakeTensor<int8_t>({1}, {1}));
  ASSERT_TRUE(less8.ok()) << less8.status();
  EXPECT_THAT(Values<bool>(*less8), ElementsAre(true, false));
  auto greater16 = RunBinary("greater", MakeTensor<uint16_t>({2}, {65535, 0}),
                       MakeTensor<uint16_t>({2}, {1, 0}));
  ASSERT_TRUE(greater16.ok()) << greater16.status();
  EXPECT_THAT(Values<bool>(*greater16), ElementsAre(true, false));
}

TEST(IntegerDtypesTest, Float16MaxMinCompareAsFloat) {
  // Bit patterns do not order negative halves: -2 (0xc000) > -1 (0xbc00)
  // as integers.
  const Tensor x = MakeTensor<float16>(
      {3}, {FloatToHalf(-2), FloatToHalf(0.5f), FloatToHalf(NAN)});
  const Tensor y = MakeTensor<float16>(
      {3}, {FloatToHalf(-1), FloatToHalf(0.25f), FloatToHalf(1)});
  auto max = RunBinary("max", x, y);
  ASSERT_TRUE(max.ok()) << max.status();
  std::vector<float16> values = Values<float16>(*max);
  EXPECT_EQ(HalfToFloat(values[0]), -1);
  EXPECT_EQ(HalfToFloat(values[1]), 0.5f);
  EXPECT_TRUE(std::isnan(HalfToFloat(values[2])));
  auto min = RunBinary("min", x, y);
  ASSERT_TRUE(min.ok()) << min.status();
  values = Values<float16>(*min);
  EXPECT_EQ(HalfToFloat(values[0]), -2);
  EXPECT_EQ(HalfToFloat(values[1]), 0.25f);
  EXPECT_TRUE(std::isnan(HalfToFloat(values[2])));
}

TEST(IntegerDtypesTest, ModSignRulesAtEachWidth) {
  // fmod 0: the divisor's sign; fmod 1: the dividend's.
  const Tensor x = MakeTensor<int16_t>({4}, {-7, 7, -7, -32768});
  const Tensor y = MakeTensor<int16_t>({4}, {3, -3, -3, -1});
  auto floored = RunBinary("mod", x, y, R"pb(attrs { name: "fmod" i: 0 })pb");
  ASSERT_TRUE(floored.ok()) << floored.status();
  EXPECT_THAT(Values<int16_t>(*floored), ElementsAre(2, -2, -1, 0));
  auto truncated = RunBinary("mod", x, y, R"pb(attrs { name: "fmod" i: 1 })pb");
  ASSERT_TRUE(truncated.ok()) << truncated.status();
  EXPECT_THAT(Values<int16_t>(*truncated), ElementsAre(-1, 1, -1, 0));
  auto unsigned64 = RunBinary("mod", MakeTensor<uint64_t>({2}, {10, 5}),
                        MakeTensor<uint64_t>({2}, {4, 7}));
  ASSERT_TRUE(unsigned64.ok()) << unsigned64.status();
  EXPECT_THAT(Values<uint64_t>(*unsigned64), ElementsAre(2, 5));
  // float16 computes C's fmod in float32.
  auto half =
      RunBinary("mod", MakeTensor<float16>({2}, {FloatToHalf(-4.5f), FloatToHalf(7)}),
          MakeTensor<float16>({2}, {FloatToHalf(2), FloatToHalf(-3)}),
          R"pb(attrs { name: "fmod" i: 1 })pb");
  ASSERT_TRUE(half.ok()) << half.status();
  const std::vector<float16> values = Values<float16>(*half);
  EXPECT_EQ(HalfToFloat(values[0]), -0.5f);
  EXPECT_EQ(HalfToFloat(values[1]), 1);
  auto half_floor = RunBinary("mod", MakeTensor<float16>({1}, {FloatToHalf(1)}),
                        MakeTensor<float16>({1}, {FloatToHalf(2)}));
  EXPECT_THAT(half_floor.status().message(),
              HasSubstr("floating-point inputs (float16) need attribute "
                        "\"fmod\" = 1"));
}

TEST(IntegerDtypesTest, ClipSaturatesBoundsToTheType) {
  // Default bounds (+-inf) span the whole type; -1.5 and 300 round inward
  // and saturate to uint8's [0, 255].
  auto whole = RunUnary("clip", MakeTensor<int8_t>({3}, {-128, 0, 127}));
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_THAT(Values<int8_t>(*whole), ElementsAre(-128, 0, 127));
  auto u8 = RunUnary("clip", MakeTensor<uint8_t>({3}, {0, 100, 255}),
                     R"pb(attrs { name: "min" f: -1.5 }
                          attrs { name: "max" f: 300 })pb");
  ASSERT_TRUE(u8.ok()) << u8.status();
  EXPECT_THAT(Values<uint8_t>(*u8), ElementsAre(0, 100, 255));
  auto i8 = RunUnary("clip", MakeTensor<int8_t>({4}, {-128, -3, 5, 127}),
                     R"pb(attrs { name: "min" f: -2.5 }
                          attrs { name: "max" f: 4 })pb");
  ASSERT_TRUE(i8.ok()) << i8.status();
  EXPECT_THAT(Values<int8_t>(*i8), ElementsAre(-2, -2, 4, 4));
  // int32 bounds at and just beyond 2^31 saturate instead of overflowing.
  auto i32 = RunUnary("clip", MakeTensor<int32_t>({2}, {-5, 2147483647}),
                      R"pb(attrs { name: "min" f: 0 }
                           attrs { name: "max" f: 3e9 })pb");
  ASSERT_TRUE(i32.ok()) << i32.status();
  EXPECT_THAT(Values<int32_t>(*i32), ElementsAre(0, 2147483647));
  // No uint16 lies in [2.25, 2.75].
  auto empty = RunUnary("clip", MakeTensor<uint16_t>({1}, {1}),
                        R"pb(attrs { name: "min" f: 2.25 }
                             attrs { name: "max" f: 2.75 })pb");
  EXPECT_THAT(empty.status().message(), HasSubstr("enclose no uint16 value"));
}

TEST(IntegerDtypesTest, AbsAndNeg) {
  auto abs = RunUnary("abs", MakeTensor<int8_t>({3}, {-128, -5, 5}));
  ASSERT_TRUE(abs.ok()) << abs.status();
  // The lowest value has no positive counterpart: it wraps to itself.
  EXPECT_THAT(Values<int8_t>(*abs), ElementsAre(-128, 5, 5));
  auto abs_unsigned = RunUnary("abs", MakeTensor<uint32_t>({1}, {4000000000u}));
  ASSERT_TRUE(abs_unsigned.ok()) << abs_unsigned.status();
  EXPECT_THAT(Values<uint32_t>(*abs_unsigned), ElementsAre(4000000000u));
  auto neg = RunUnary("neg", MakeTensor<int16_t>({3}, {-32768, 1, 0}));
  ASSERT_TRUE(neg.ok()) << neg.status();
  EXPECT_THAT(Values<int16_t>(*neg), ElementsAre(-32768, -1, 0));
  // ONNX Neg has no unsigned types.
  auto neg_unsigned = RunUnary("neg", MakeTensor<uint8_t>({1}, {1}));
  EXPECT_THAT(neg_unsigned.status().message(),
              HasSubstr("no kernel for dtype uint8"));
}

TEST(IntegerDtypesTest, WhereAndAssignMoveEveryDtype) {
  constexpr char kWhere[] = R"pb(type: "where"
                                 inputs { slot: "Condition" vars: "c" }
                                 inputs { slot: "X" vars: "x" }
                                 inputs { slot: "Y" vars: "y" }
                                 outputs { slot: "Out" vars: "out" })pb";
  auto where = RunOp(kWhere,
                     {{"c", MakeTensor<bool>({2}, {true, false})},
                      {"x", MakeTensor<uint64_t>({2}, {1, 2})},
                      {"y", MakeTensor<uint64_t>({1}, {uint64_t{1} << 63})}},
                     {"out"});
  ASSERT_TRUE(where.ok()) << where.status();
  EXPECT_THAT(Values<uint64_t>((*where)[0]), ElementsAre(1, uint64_t{1} << 63));
  auto assign =
      RunUnary("assign", MakeTensor<bfloat16>({1}, {bfloat16{0x3fc0}}));
  ASSERT_TRUE(assign.ok()) << assign.status();
  EXPECT_EQ(assign->dtype(), kBFloat16);
  EXPECT_EQ(Values<bfloat16>(*assign)[0].bits, 0x3fc0);
}

}  // namespace
}  // namespace scopeflow
