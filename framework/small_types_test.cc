#include "framework/small_types.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "framework/data_type.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(SmallTypesTest, Ranges) {
  EXPECT_EQ(qint4::kMin, -8);
  EXPECT_EQ(qint4::kMax, 7);
  EXPECT_EQ(quint4::kMin, 0);
  EXPECT_EQ(quint4::kMax, 15);
  EXPECT_EQ(qint2::kMin, -2);
  EXPECT_EQ(qint2::kMax, 1);
  EXPECT_EQ(quint2::kMax, 3);
  for (DataType dtype :
       {kInt4, kUInt4, kInt2, kUInt2, kFloat4E2M1, kFloat8E8M0}) {
    EXPECT_EQ(SizeOf(dtype), 1u) << DataTypeName(dtype);
    EXPECT_EQ(ParseDataType(DataTypeName(dtype)).value(), dtype);
  }
  EXPECT_EQ(DataTypeName(kFloat4E2M1), "float4e2m1");
}

// Casts keep the low bits (ONNX's cases: -9.0 -> int4 7, 8.0 -> -8), a
// fraction truncated toward zero first.
TEST(SmallTypesTest, IntFromFloatWraps) {
  EXPECT_EQ(SmallIntFromFloat(-9, 4, true), 7);
  EXPECT_EQ(SmallIntFromFloat(-8, 4, true), -8);
  EXPECT_EQ(SmallIntFromFloat(7, 4, true), 7);
  EXPECT_EQ(SmallIntFromFloat(8, 4, true), -8);
  EXPECT_EQ(SmallIntFromFloat(15, 4, true), -1);
  EXPECT_EQ(SmallIntFromFloat(2.7, 4, true), 2);
  EXPECT_EQ(SmallIntFromFloat(-2.7, 4, true), -2);
  EXPECT_EQ(SmallIntFromFloat(-1, 4, false), 15);
  EXPECT_EQ(SmallIntFromFloat(16, 4, false), 0);
  EXPECT_EQ(SmallIntFromFloat(-3, 2, true), 1);
  EXPECT_EQ(SmallIntFromFloat(2, 2, true), -2);
  EXPECT_EQ(SmallIntFromFloat(-3, 2, false), 1);
  EXPECT_EQ(SmallIntFromFloat(6, 2, false), 2);
  // NaN gives 0; beyond int64, int64's bound of that sign (low bits all
  // ones for +, all zeros for -).
  EXPECT_EQ(SmallIntFromFloat(kNaN, 4, true), 0);
  EXPECT_EQ(SmallIntFromFloat(kInf, 4, true), -1);
  EXPECT_EQ(SmallIntFromFloat(1e30, 4, false), 15);
  EXPECT_EQ(SmallIntFromFloat(-kInf, 4, true), 0);
  EXPECT_EQ(SmallIntFromInteger(-3, 2, true), 1);
  EXPECT_EQ(SmallIntFromInteger(255, 4, true), -1);
  EXPECT_EQ(SmallIntFromInteger(std::numeric_limits<int64_t>::min(), 4, true),
            0);
  EXPECT_EQ(ToSmallInt<qint4>(9.5).value, -7);
  EXPECT_EQ(ToSmallIntFromInteger<quint2>(7).value, 3);
}

// Nearest, ties to the even code: 0.25 -> 0, 0.75 -> 1, 1.25 -> 1,
// 1.75 -> 2, 2.5 -> 2, 3.5 -> 4, 5 -> 4; beyond 6 saturated.
TEST(SmallTypesTest, Float4E2M1RoundsToNearestEven) {
  struct Case {
    float value;
    uint8_t bits;
  };
  for (const Case& c : {
           Case{0.0f, 0x0},  Case{0.25f, 0x0}, Case{0.3f, 0x1},
           Case{0.5f, 0x1},  Case{0.75f, 0x2}, Case{1.25f, 0x2},
           Case{1.5f, 0x3},  Case{1.75f, 0x4}, Case{2.5f, 0x4},
           Case{3.0f, 0x5},  Case{3.5f, 0x6},  Case{5.0f, 0x6},
           Case{5.1f, 0x7},  Case{6.0f, 0x7},  Case{7.0f, 0x7},
           Case{1e30f, 0x7}, Case{kInf, 0x7},  Case{-0.0f, 0x8},
           Case{-3.5f, 0xe}, Case{-8.0f, 0xf}, Case{-kInf, 0xf},
           Case{0.01f, 0x0}, Case{-0.1f, 0x8},
       }) {
    EXPECT_EQ(FloatToFloat4E2M1Bits(c.value), c.bits) << c.value;
  }
  // No NaN in the format: ONNX's cases give it -0.
  EXPECT_EQ(FloatToFloat4E2M1Bits(kNaN), 0x8);
  EXPECT_EQ(FloatToFloat4E2M1Bits(-kNaN), 0x8);
  const float expected[16] = {0.0f,  0.5f,  1,  1.5f,  2,  3,  4,  6,
                              -0.0f, -0.5f, -1, -1.5f, -2, -3, -4, -6};
  for (uint8_t bits = 0; bits < 16; ++bits) {
    EXPECT_EQ(Float4E2M1BitsToFloat(bits), expected[bits]) << int{bits};
    EXPECT_EQ(FloatToFloat4E2M1Bits(expected[bits]), bits) << int{bits};
  }
  EXPECT_TRUE(std::signbit(Float4E2M1BitsToFloat(0x8)));
}

TEST(SmallTypesTest, Float8E8M0Rounding) {
  using R = E8M0Rounding;
  // 2^-127 as a float32 subnormal: exponent field 0, mantissa's top bit.
  const float tiny = std::ldexp(1.0f, -127);
  const float big = 3e38f;  // 1.76 * 2^127.
  struct Case {
    float value;
    uint8_t up, down, nearest;
  };
  for (const Case& c : {
           Case{0.0f, 0x00, 0x00, 0x00},
           Case{0.124f, 0x7c, 0x7b, 0x7c},  // 1.98 * 2^-4.
           Case{0.125f, 0x7c, 0x7c, 0x7c},
           Case{1.0f, 0x7f, 0x7f, 0x7f},
           Case{1.1f, 0x80, 0x7f, 0x7f},
           Case{1.5f, 0x80, 0x7f, 0x80},  // A tie rounds up.
           Case{3.0f, 0x81, 0x80, 0x81},
           Case{0.75f, 0x7f, 0x7e, 0x7f},
           Case{-4.0f, 0x81, 0x81, 0x81},  // The sign is dropped.
           // The exponent field 0 rounds up only past its middle.
           Case{tiny, 0x01, 0x00, 0x00},
           Case{big, 0xfe, 0xfe, 0xfe},  // Saturated.
           Case{kInf, 0xff, 0xff, 0xff},
           Case{kNaN, 0xff, 0xff, 0xff},
       }) {
    EXPECT_EQ(FloatToFloat8E8M0Bits(c.value, R::kUp, true), c.up) << c.value;
    EXPECT_EQ(FloatToFloat8E8M0Bits(c.value, R::kDown, true), c.down)
        << c.value;
    EXPECT_EQ(FloatToFloat8E8M0Bits(c.value, R::kNearest, true), c.nearest)
        << c.value;
  }
  // Without saturate, rounding 2^127's neighbours up gives NaN.
  EXPECT_EQ(FloatToFloat8E8M0Bits(big, R::kUp, false), 0xff);
  EXPECT_EQ(FloatToFloat8E8M0Bits(big, R::kNearest, false), 0xff);
  EXPECT_EQ(FloatToFloat8E8M0Bits(big, R::kDown, false), 0xfe);

  EXPECT_EQ(Float8E8M0BitsToFloat(0x00), tiny);
  EXPECT_EQ(Float8E8M0BitsToFloat(0x7f), 1.0f);
  EXPECT_EQ(Float8E8M0BitsToFloat(0x82), 8.0f);
  EXPECT_EQ(Float8E8M0BitsToFloat(0xfe), std::ldexp(1.0f, 127));
  EXPECT_TRUE(std::isnan(Float8E8M0BitsToFloat(0xff)));
}

std::string Bytes(std::initializer_list<int> bytes) {
  std::string s;
  for (int b : bytes) s.push_back(static_cast<char>(b));
  return s;
}

std::vector<uint8_t> AsBytes(std::initializer_list<int> values) {
  std::vector<uint8_t> bytes;
  for (int v : values) bytes.push_back(static_cast<uint8_t>(v));
  return bytes;
}

// ONNX's layout: the first element in the lowest bits, a last byte padded
// with zeros.
TEST(SmallTypesTest, PackAndUnpackOddCounts) {
  EXPECT_EQ(PackedByteSize(kInt4, 0), 0);
  EXPECT_EQ(PackedByteSize(kInt4, 7), 4);
  EXPECT_EQ(PackedByteSize(kUInt2, 5), 2);
  EXPECT_EQ(PackedByteSize(kUInt2, 8), 2);
  EXPECT_EQ(PackedByteSize(kFloat32, 3), 3);

  const std::vector<uint8_t> int4 = AsBytes({-1, 2, -8});
  const std::string packed4 = PackSmallElements(kInt4, int4.data(), 3);
  EXPECT_EQ(packed4, Bytes({0x2f, 0x08}));
  std::vector<uint8_t> back(3);
  UnpackSmallElements(kInt4, packed4, 3, back.data());
  EXPECT_EQ(back, int4);
  // The same nibbles unsigned and as float4e2m1: no sign extension.
  UnpackSmallElements(kUInt4, packed4, 3, back.data());
  EXPECT_THAT(back, ElementsAre(15, 2, 8));
  UnpackSmallElements(kFloat4E2M1, packed4, 3, back.data());
  EXPECT_THAT(back, ElementsAre(15, 2, 8));

  // 1, -2, -1, 0 | 1: 0b00111001, 0b00000001 (ONNX's test_cast_*_to_INT2).
  const std::vector<uint8_t> int2 = AsBytes({1, -2, -1, 0, 1});
  const std::string packed2 = PackSmallElements(kInt2, int2.data(), 5);
  EXPECT_EQ(packed2, Bytes({0x39, 0x01}));
  back.resize(5);
  UnpackSmallElements(kInt2, packed2, 5, back.data());
  EXPECT_EQ(back, int2);
  UnpackSmallElements(kUInt2, packed2, 5, back.data());
  EXPECT_THAT(back, ElementsAre(1, 2, 3, 0, 1));

  // Every value of every sub-byte dtype through a pack of each odd length.
  for (DataType dtype : {kInt4, kUInt4, kInt2, kUInt2, kFloat4E2M1}) {
    const int bits = PackedBitsOf(dtype);
    const bool is_signed = dtype == kInt4 || dtype == kInt2;
    for (int64_t count : {1, 3, 5, 7, 9, 17}) {
      std::vector<uint8_t> elements(count);
      for (int64_t i = 0; i < count; ++i) {
        const int field = static_cast<int>((i * 7 + 3) % (1 << bits));
        elements[i] = static_cast<uint8_t>(
            is_signed && field >= (1 << (bits - 1)) ? field - (1 << bits)
                                                    : field);
      }
      const std::string packed =
          PackSmallElements(dtype, elements.data(), count);
      ASSERT_EQ(static_cast<int64_t>(packed.size()),
                PackedByteSize(dtype, count));
      std::vector<uint8_t> unpacked(count);
      UnpackSmallElements(dtype, packed, count, unpacked.data());
      EXPECT_THAT(unpacked, ElementsAreArray(elements))
          << DataTypeName(dtype) << " x" << count;
      EXPECT_EQ(FindInvalidSmallElement(dtype, unpacked.data(), count), -1);
    }
  }
}

TEST(SmallTypesTest, FindInvalidElement) {
  const std::vector<uint8_t> int4 = AsBytes({7, -8, 8});
  EXPECT_EQ(FindInvalidSmallElement(kInt4, int4.data(), 3), 2);
  EXPECT_EQ(FindInvalidSmallElement(kInt4, int4.data(), 2), -1);
  const std::vector<uint8_t> int2 = AsBytes({1, -2, -3});
  EXPECT_EQ(FindInvalidSmallElement(kInt2, int2.data(), 3), 2);
  const std::vector<uint8_t> uint2 = AsBytes({3, 4});
  EXPECT_EQ(FindInvalidSmallElement(kUInt2, uint2.data(), 2), 1);
  const std::vector<uint8_t> nibbles = AsBytes({0x0f, 0x10});
  EXPECT_EQ(FindInvalidSmallElement(kFloat4E2M1, nibbles.data(), 2), 1);
  EXPECT_EQ(FindInvalidSmallElement(kUInt4, nibbles.data(), 2), 1);
  // Every byte is a float8e8m0 or a uint8.
  EXPECT_EQ(FindInvalidSmallElement(kFloat8E8M0, nibbles.data(), 2), -1);
  EXPECT_EQ(FindInvalidSmallElement(kUInt8, nibbles.data(), 2), -1);
}

}  // namespace
}  // namespace scopeflow
