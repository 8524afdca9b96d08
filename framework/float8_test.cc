#include "framework/float8.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include "gtest/gtest.h"

namespace scopeflow {
namespace {

constexpr Float8Format kFormats[] = {
    Float8Format::kE4M3FN, Float8Format::kE4M3FNUZ, Float8Format::kE5M2,
    Float8Format::kE5M2FNUZ};

// Bit patterns from the formats' definitions (ONNX's float8 table).
TEST(Float8Test, KnownValues) {
  struct Case {
    Float8Format format;
    float value;
    uint8_t bits;
  };
  for (const Case& c : {
           Case{Float8Format::kE4M3FN, 1.0f, 0x38},
           Case{Float8Format::kE4M3FN, -2.0f, 0xc0},
           Case{Float8Format::kE4M3FN, 448.0f, 0x7e},
           Case{Float8Format::kE4M3FN, std::ldexp(1.0f, -9), 0x01},
           Case{Float8Format::kE4M3FN, std::ldexp(1.0f, -6), 0x08},
           Case{Float8Format::kE4M3FN, -0.0f, 0x80},
           Case{Float8Format::kE4M3FNUZ, 1.0f, 0x40},
           Case{Float8Format::kE4M3FNUZ, 240.0f, 0x7f},
           Case{Float8Format::kE4M3FNUZ, std::ldexp(1.0f, -10), 0x01},
           Case{Float8Format::kE5M2, 1.0f, 0x3c},
           Case{Float8Format::kE5M2, 57344.0f, 0x7b},
           Case{Float8Format::kE5M2, -1.5f, 0xbe},
           Case{Float8Format::kE5M2, std::ldexp(1.0f, -16), 0x01},
           Case{Float8Format::kE5M2FNUZ, 1.0f, 0x40},
           Case{Float8Format::kE5M2FNUZ, 57344.0f, 0x7f},
           Case{Float8Format::kE5M2FNUZ, std::ldexp(1.0f, -17), 0x01},
       }) {
    SCOPED_TRACE(c.value);
    EXPECT_EQ(FloatToFloat8Bits(c.value, c.format, true), c.bits);
    const float back = Float8BitsToFloat(c.bits, c.format);
    EXPECT_EQ(back, c.value);
    EXPECT_EQ(std::signbit(back), std::signbit(c.value));
  }
}

TEST(Float8Test, RoundsToNearestEven) {
  const Float8Format e4m3 = Float8Format::kE4M3FN;
  // 1 + 2^-4 lies halfway between 1 (0x38) and 1 + 2^-3 (0x39): to even.
  EXPECT_EQ(FloatToFloat8Bits(1.0625f, e4m3, true), 0x38);
  // 1 + 3 * 2^-4 lies halfway between 0x39 (odd) and 0x3a: up.
  EXPECT_EQ(FloatToFloat8Bits(1.1875f, e4m3, true), 0x3a);
  EXPECT_EQ(FloatToFloat8Bits(1.07f, e4m3, true), 0x39);
  // Half the smallest subnormal is a tie with zero: to even (zero); three
  // halves round to two.
  EXPECT_EQ(FloatToFloat8Bits(std::ldexp(1.0f, -10), e4m3, true), 0x00);
  EXPECT_EQ(FloatToFloat8Bits(3 * std::ldexp(1.0f, -10), e4m3, true), 0x02);
  // The largest subnormal rounds up into the smallest normal.
  EXPECT_EQ(FloatToFloat8Bits(std::ldexp(15.9f, -10), e4m3, true), 0x08);
  // No -0 in the fnuz formats.
  EXPECT_EQ(FloatToFloat8Bits(-0.0f, Float8Format::kE4M3FNUZ, true), 0x00);
  EXPECT_EQ(FloatToFloat8Bits(-1e-30f, Float8Format::kE5M2FNUZ, true), 0x00);
}

TEST(Float8Test, OverflowSaturatesOrGivesInfinityOrNan) {
  const float inf = std::numeric_limits<float>::infinity();
  const Float8Format e4m3 = Float8Format::kE4M3FN;
  // 464 is a tie between 448 (even) and 480 (odd, the NaN pattern): 448.
  EXPECT_EQ(FloatToFloat8Bits(464.0f, e4m3, false), 0x7e);
  EXPECT_EQ(FloatToFloat8Bits(465.0f, e4m3, true), 0x7e);
  EXPECT_EQ(FloatToFloat8Bits(-465.0f, e4m3, true), 0xfe);
  EXPECT_TRUE(std::isnan(
      Float8BitsToFloat(FloatToFloat8Bits(465.0f, e4m3, false), e4m3)));
  EXPECT_EQ(FloatToFloat8Bits(inf, e4m3, true), 0x7e);
  EXPECT_EQ(FloatToFloat8Bits(1e9f, Float8Format::kE4M3FNUZ, false), 0x80);
  EXPECT_EQ(FloatToFloat8Bits(-inf, Float8Format::kE4M3FNUZ, true), 0xff);

  const Float8Format e5m2 = Float8Format::kE5M2;
  // 61440 is a tie between 57344 (odd) and 65536 (even, beyond range).
  EXPECT_EQ(FloatToFloat8Bits(61440.0f, e5m2, false), 0x7c);
  EXPECT_EQ(FloatToFloat8Bits(61440.0f, e5m2, true), 0x7b);
  EXPECT_EQ(FloatToFloat8Bits(-inf, e5m2, false), 0xfc);
  EXPECT_EQ(FloatToFloat8Bits(-inf, e5m2, true), 0xfb);
  EXPECT_EQ(Float8BitsToFloat(0x7c, e5m2), inf);
  EXPECT_EQ(Float8BitsToFloat(0xfc, e5m2), -inf);
  EXPECT_EQ(FloatToFloat8Bits(1e9f, Float8Format::kE5M2FNUZ, false), 0x80);

  for (Float8Format format : kFormats) {
    EXPECT_TRUE(std::isnan(Float8BitsToFloat(
        FloatToFloat8Bits(std::nanf(""), format, true), format)));
  }
  EXPECT_TRUE(std::isnan(Float8BitsToFloat(0x7f, e4m3)));
  EXPECT_TRUE(std::isnan(Float8BitsToFloat(0x80, Float8Format::kE4M3FNUZ)));
  EXPECT_TRUE(std::isnan(Float8BitsToFloat(0x7d, e5m2)));
}

TEST(Float8Test, EveryValueRoundTrips) {
  for (Float8Format format : kFormats) {
    for (uint32_t bits = 0; bits <= 0xff; ++bits) {
      const float value = Float8BitsToFloat(static_cast<uint8_t>(bits), format);
      if (std::isnan(value)) continue;
      ASSERT_EQ(FloatToFloat8Bits(value, format, false), bits)
          << static_cast<int>(format) << " " << bits;
    }
  }
}

}  // namespace
}  // namespace scopeflow
