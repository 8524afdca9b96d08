#include "framework/data_type.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::HasSubstr;

TEST(DataTypeTest, SizesAndNames) {
  EXPECT_EQ(SizeOf(kFloat32), 4);
  EXPECT_EQ(SizeOf(kFloat64), 8);
  EXPECT_EQ(SizeOf(kFloat16), 2);
  EXPECT_EQ(SizeOf(kInt32), 4);
  EXPECT_EQ(SizeOf(kInt64), 8);
  EXPECT_EQ(SizeOf(kUInt8), 1);
  EXPECT_EQ(SizeOf(kBool), 1);
  EXPECT_EQ(SizeOf(kInt8), 1);
  EXPECT_EQ(SizeOf(kInt16), 2);
  EXPECT_EQ(SizeOf(kUInt16), 2);
  EXPECT_EQ(SizeOf(kUInt32), 4);
  EXPECT_EQ(SizeOf(kUInt64), 8);
  EXPECT_EQ(SizeOf(kBFloat16), 2);
  EXPECT_EQ(SizeOf(kFloat8E5M2FNUZ), 1);
  EXPECT_EQ(SizeOf(DATA_TYPE_UNSPECIFIED), 0);
  EXPECT_EQ(SizeOf(static_cast<DataType>(99)), 0);

  EXPECT_EQ(AllDataTypes().size(), 23u);
  for (DataType dtype : AllDataTypes()) {
    EXPECT_TRUE(IsValidDataType(dtype));
    EXPECT_EQ(*ParseDataType(DataTypeName(dtype)), dtype);
    // The types of framework/small_types.h are neither: no arithmetic.
    const bool small = IsSubByteDataType(dtype) || dtype == kFloat8E8M0;
    EXPECT_NE(IsIntegerDataType(dtype) || IsFloatDataType(dtype),
              dtype == kBool || small)
        << DataTypeName(dtype);
  }
  EXPECT_TRUE(IsIntegerDataType(kUInt64));
  EXPECT_FALSE(IsIntegerDataType(kBFloat16));
  EXPECT_TRUE(IsFloatDataType(kBFloat16));
  EXPECT_EQ(DataTypeName(kUInt16), "uint16");
  EXPECT_EQ(DataTypeName(kBFloat16), "bfloat16");
  EXPECT_EQ(AllDataTypeNames(),
            "float32, float64, float16, int32, int64, uint8, bool, int8, "
            "int16, uint16, uint32, uint64, bfloat16, float8e4m3fn, "
            "float8e4m3fnuz, float8e5m2, float8e5m2fnuz, int4, uint4, int2, "
            "uint2, float4e2m1, float8e8m0");
  EXPECT_EQ(DataTypeName(kFloat16), "float16");
  EXPECT_EQ(DataTypeName(kUInt8), "uint8");
  EXPECT_EQ(DataTypeName(kInt8), "int8");
  EXPECT_EQ(DataTypeName(DATA_TYPE_UNSPECIFIED), "unspecified");
  EXPECT_EQ(DataTypeName(static_cast<DataType>(99)), "DataType(99)");
  EXPECT_FALSE(IsValidDataType(DATA_TYPE_UNSPECIFIED));
}

TEST(DataTypeTest, CppTypesMapToDataTypes) {
  static_assert(DataTypeOf<float>() == kFloat32);
  static_assert(DataTypeOf<double>() == kFloat64);
  static_assert(DataTypeOf<float16>() == kFloat16);
  static_assert(DataTypeOf<int32_t>() == kInt32);
  static_assert(DataTypeOf<int64_t>() == kInt64);
  static_assert(DataTypeOf<uint8_t>() == kUInt8);
  static_assert(DataTypeOf<bool>() == kBool);
  static_assert(DataTypeOf<int8_t>() == kInt8);
  static_assert(DataTypeOf<int16_t>() == kInt16);
  static_assert(DataTypeOf<uint16_t>() == kUInt16);
  static_assert(DataTypeOf<uint32_t>() == kUInt32);
  static_assert(DataTypeOf<uint64_t>() == kUInt64);
  static_assert(DataTypeOf<bfloat16>() == kBFloat16);
  static_assert(DataTypeOf<float8_e4m3fn>() == kFloat8E4M3FN);
  static_assert(DataTypeOf<float8_e5m2fnuz>() == kFloat8E5M2FNUZ);
  static_assert(DataTypeOf<qint4>() == kInt4);
  static_assert(DataTypeOf<quint4>() == kUInt4);
  static_assert(DataTypeOf<qint2>() == kInt2);
  static_assert(DataTypeOf<quint2>() == kUInt2);
  static_assert(DataTypeOf<float4_e2m1>() == kFloat4E2M1);
  static_assert(DataTypeOf<float8_e8m0>() == kFloat8E8M0);
  EXPECT_EQ(SizeOf(kInt4), sizeof(qint4));
  EXPECT_EQ(SizeOf(kFloat4E2M1), sizeof(float4_e2m1));
  EXPECT_EQ(SizeOf(DataTypeOf<bfloat16>()), sizeof(bfloat16));
  EXPECT_EQ(SizeOf(DataTypeOf<float16>()), sizeof(float16));
}

TEST(DataTypeTest, UnknownNameIsAnError) {
  absl::StatusOr<DataType> dtype = ParseDataType("float8");
  ASSERT_FALSE(dtype.ok());
  EXPECT_EQ(dtype.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(dtype.status().message(), HasSubstr("\"float8\""));
  EXPECT_THAT(dtype.status().message(), HasSubstr("float32"));
}

// Reference values from the IEEE 754 binary16 definition.
TEST(Float16Test, KnownBitPatterns) {
  struct Case {
    float value;
    uint16_t bits;
  };
  for (const Case& c : {
           Case{0.0f, 0x0000},
           Case{-0.0f, 0x8000},
           Case{1.0f, 0x3c00},
           Case{-2.0f, 0xc000},
           Case{0.5f, 0x3800},
           Case{65504.0f, 0x7bff},
           Case{6.103515625e-05f, 0x0400},         // smallest normal
           Case{5.9604644775390625e-08f, 0x0001},  // smallest subnormal
           Case{0.333251953125f, 0x3555},
       }) {
    EXPECT_EQ(FloatToHalf(c.value).bits, c.bits) << c.value;
    EXPECT_EQ(HalfToFloat(float16{c.bits}), c.value) << c.value;
  }
}

TEST(Float16Test, RoundsToNearestEven) {
  // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: ties go to even (1).
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11)).bits, 0x3c00);
  // 1 + 3 * 2^-11 lies halfway between 1 + 2^-10 (odd) and 1 + 2^-9: up.
  EXPECT_EQ(FloatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)).bits, 0x3c02);
  // Just above halfway rounds up.
  EXPECT_EQ(
      FloatToHalf(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)).bits,
      0x3c01);
  // Half the smallest subnormal is a tie: rounds to even (zero).
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -25)).bits, 0x0000);
  EXPECT_EQ(FloatToHalf(3 * std::ldexp(1.0f, -25)).bits, 0x0002);
}

TEST(Float16Test, OverflowInfinityAndNan) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(FloatToHalf(65520.0f).bits, 0x7c00);
  EXPECT_EQ(FloatToHalf(1e10f).bits, 0x7c00);
  EXPECT_EQ(FloatToHalf(-inf).bits, 0xfc00);
  EXPECT_EQ(HalfToFloat(float16{0x7c00}), inf);
  EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(std::nanf("")))));
  // 65519 rounds down to the largest finite half.
  EXPECT_EQ(FloatToHalf(65519.0f).bits, 0x7bff);
}

TEST(Float16Test, EveryHalfRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const float16 half{static_cast<uint16_t>(bits)};
    const float value = HalfToFloat(half);
    if (std::isnan(value)) continue;
    ASSERT_EQ(FloatToHalf(value).bits, bits) << std::hex << bits;
  }
}

// Reference values: bfloat16 is the top 16 bits of a binary32.
TEST(BFloat16Test, KnownBitPatternsAndRounding) {
  EXPECT_EQ(FloatToBFloat16(1.0f).bits, 0x3f80);
  EXPECT_EQ(FloatToBFloat16(-2.0f).bits, 0xc000);
  EXPECT_EQ(FloatToBFloat16(-0.0f).bits, 0x8000);
  EXPECT_EQ(BFloat16ToFloat(bfloat16{0x3fc0}), 1.5f);
  // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: ties go to even (1).
  EXPECT_EQ(FloatToBFloat16(1.0f + std::ldexp(1.0f, -8)).bits, 0x3f80);
  // 1 + 3 * 2^-8 lies halfway between 1 + 2^-7 (odd) and 1 + 2^-6: up.
  EXPECT_EQ(FloatToBFloat16(1.0f + 3 * std::ldexp(1.0f, -8)).bits, 0x3f82);
  // Just above halfway rounds up.
  EXPECT_EQ(
      FloatToBFloat16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)).bits,
      0x3f81);
  // The largest float rounds up to infinity; NaN stays NaN (not infinity).
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(FloatToBFloat16(std::numeric_limits<float>::max()).bits, 0x7f80);
  EXPECT_EQ(FloatToBFloat16(-inf).bits, 0xff80);
  EXPECT_TRUE(std::isnan(BFloat16ToFloat(FloatToBFloat16(std::nanf("")))));
  // A NaN whose payload lies only in the dropped bits stays NaN too.
  uint32_t nan_bits = 0x7f800001u;
  float low_nan;
  std::memcpy(&low_nan, &nan_bits, sizeof(low_nan));
  EXPECT_TRUE(std::isnan(BFloat16ToFloat(FloatToBFloat16(low_nan))));
}

TEST(BFloat16Test, EveryBFloat16RoundTrips) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const bfloat16 value{static_cast<uint16_t>(bits)};
    const float wide = BFloat16ToFloat(value);
    if (std::isnan(wide)) continue;
    ASSERT_EQ(FloatToBFloat16(wide).bits, bits) << std::hex << bits;
  }
}

}  // namespace
}  // namespace scopeflow
